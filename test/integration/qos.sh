#!/usr/bin/env bash
# QOS with real daemons (issue 23, item 3): sacctmgr add/modify/delete/show qos as events,
# associations' QOS and default QOS, --qos (unknown or not allowed: refused, nothing queued),
# the job's QOS in squeue/scontrol/sacct and SLURM_JOB_QOS, each limit as a pending reason
# or a refusal with Slurm's texts, QOS priority, preempt/qos (CANCEL), a preemption loop
# refused, and the QOS surviving a controller restart.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster_with 1 2 1000 "AccountingStorageEnforce=associations
PreemptType=preempt/qos
PreemptMode=CANCEL
PreemptExemptTime=0"

submit_failed="sbatch: error: Batch job submission failed:"
jobs_queued() { squeue -h -o %i | wc -l; }

# 1. normal always exists; sacctmgr show qos in Slurm's columns.
[ "$(sacctmgr -n -P show qos format=name,priority,preemptmode)" = "normal|0|cluster" ] ||
  fail "show qos: $(sacctmgr -n -P show qos format=name,priority,preemptmode)"
sacctmgr show qos | head -1 | finds -E '^      Name   Priority  GraceTime    Preempt   PreemptExemptTime PreemptMode ' ||
  fail "show qos header: $(sacctmgr show qos | head -1)"

# 2. QOS, an account and root's association with its QOS (the test runs as root: an operator).
sacctmgr -i add qos low Priority=0 >"$work/add.out"
[ "$(head -2 "$work/add.out")" = " Adding QOS(s)
  low" ] || fail "add qos said: $(cat "$work/add.out")"
sacctmgr -i add qos high Priority=100 Preempt=low >/dev/null
sacctmgr -i add qos onejob MaxJobsPerUser=1 >/dev/null
sacctmgr -i add qos twosubmit MaxSubmitJobsPerUser=2 >/dev/null
sacctmgr -i add qos shortwall MaxWall=1 >/dev/null
sacctmgr -i add qos shortdeny MaxWall=1 Flags=DenyOnLimit >/dev/null
sacctmgr -i add qos cpucap MaxTRESPerUser=cpu=1 >/dev/null
sacctmgr -i add qos grpcap GrpTRES=cpu=1 >/dev/null
sacctmgr -i add qos memcap GrpTRES=mem=100 >/dev/null
sacctmgr -i add qos secret >/dev/null
set +e; out=$(sacctmgr -i add qos low 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = " Nothing new added." ] || fail "adding an existing qos: rc=$rc '$out'"
sacctmgr -i modify qos where name=high set MaxWall=10:00 >/dev/null
[ "$(sacctmgr -n -P show qos high format=name,priority,preempt,maxwall)" = "high|100|low|00:10:00" ] ||
  fail "show qos high: $(sacctmgr -n -P show qos high format=name,priority,preempt,maxwall)"
sacctmgr -i add account physics >/dev/null
sacctmgr -i add user root account=physics \
  QOS=normal,low,high,onejob,twosubmit,shortwall,shortdeny,cpucap,grpcap,memcap DefaultQOS=normal >/dev/null
[ "$(sacctmgr -n -P list assoc user=root format=account,user,defaultqos)" = "physics|root|normal" ] ||
  fail "root's association: $(sacctmgr -n -P list assoc user=root format=account,user,defaultqos)"

# 3. Bad input: an unknown QOS, a QOS not allowed to the association: refused, nothing queued.
set +e; out=$(sbatch --qos=nosuch --wrap true 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = "$submit_failed Invalid qos specification" ] || fail "--qos=nosuch: rc=$rc '$out'"
set +e; out=$(sbatch -q secret --wrap true 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = "$submit_failed Invalid qos specification" ] || fail "--qos=secret: rc=$rc '$out'"
[ "$(jobs_queued)" = 0 ] || fail "a refused submission left a job"
set +e; out=$(sacctmgr -i add user root account=physics QOS=nosuch 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && finds "You gave a bad qos 'nosuch'" <<<"$out" || fail "association with an unknown qos: rc=$rc '$out'"

# 4. Without --qos: the association's default; the QOS in every display and the environment.
job=$(sbatch --parsable -o env.out --wrap 'echo "QOS=$SLURM_JOB_QOS"')
wait_state "$job" COMPLETED
[ "$(cat env.out)" = "QOS=normal" ] || fail "SLURM_JOB_QOS: $(cat env.out)"
scontrol show job "$job" | finds " QOS=normal$" || fail "scontrol QOS: $(scontrol show job "$job" | grep QOS)"
job=$(sbatch --parsable -q low -o env2.out --wrap 'echo "QOS=$SLURM_JOB_QOS"')
wait_state "$job" COMPLETED
[ "$(cat env2.out)" = "QOS=low" ] || fail "SLURM_JOB_QOS with -q low: $(cat env2.out)"
scontrol show job "$job" | finds " QOS=low$" || fail "scontrol QOS=low: $(scontrol show job "$job" | grep QOS)"
[ "$(sacct -n -X -P -j "$job" -o QOS)" = low ] || fail "sacct QOS: $(sacct -n -X -P -j "$job" -o QOS)"
sacct --json -j "$job" | finds '"qos": "low"' || fail "sacct --json qos"
sacctmgr -i modify user root set DefaultQOS=low >/dev/null
job=$(sbatch --parsable --hold --wrap true)
[ "$(squeue -h -j "$job" -o %q)" = low ] || fail "default QOS low: squeue %q = $(squeue -h -j "$job" -o %q)"
scancel "$job"
sacctmgr -i modify user root set DefaultQOS=normal >/dev/null

# 5. Limits as pending reasons (Slurm's names) and refusals at submission.
# MaxJobsPerUser=1: the second waits while the first runs.
a=$(sbatch --parsable -q onejob -n 1 --wrap 'sleep 300')
wait_state "$a" RUNNING
b=$(sbatch --parsable -q onejob -n 1 --wrap 'sleep 300')
wait_reason "$b" QOSMaxJobsPerUserLimit
scancel "$a" "$b"
# MaxSubmitJobsPerUser=2: the third is refused with Slurm's two lines, nothing queued.
a=$(sbatch --parsable -q twosubmit --hold --wrap true)
b=$(sbatch --parsable -q twosubmit --hold --wrap true)
set +e; out=$(sbatch -q twosubmit --hold --wrap true 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = "sbatch: error: QOSMaxSubmitJobPerUserLimit
$submit_failed Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)" ] ||
  fail "MaxSubmitJobsPerUser: rc=$rc '$out'"
[ "$(squeue -h -o %q | awk '$1 == "twosubmit"' | wc -l)" = 2 ] || fail "the refused job was queued"
scancel "$a" "$b"
# MaxWall=1 (minute): -t 5 waits; with DenyOnLimit it is refused; without -t the job gets MaxWall.
a=$(sbatch --parsable -q shortwall -t 5 --wrap true)
wait_reason "$a" QOSMaxWallDurationPerJobLimit
scancel "$a"
set +e; out=$(sbatch -q shortdeny -t 5 --wrap true 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && finds -x "sbatch: error: QOSMaxWallDurationPerJobLimit" <<<"$out" || fail "DenyOnLimit MaxWall: rc=$rc '$out'"
a=$(sbatch --parsable -q shortwall --hold --wrap true)
scontrol show job "$a" | finds " TimeLimit=00:01:00 " || fail "MaxWall as the time limit: $(scontrol show job "$a" | grep TimeLimit)"
scancel "$a"
# MaxTRESPerUser=cpu=1, GrpTRES=cpu=1, GrpTRES=mem=100.
a=$(sbatch --parsable -q cpucap -n 2 --wrap true)
wait_reason "$a" QOSMaxCpuPerUserLimit
b=$(sbatch --parsable -q grpcap -n 2 --wrap true)
wait_reason "$b" QOSGrpCpuLimit
c=$(sbatch --parsable -q memcap --mem=200 --wrap true)
wait_reason "$c" QOSGrpMemLimit
scancel "$a" "$b" "$c"

# 6. preempt/qos: high's Preempt=low: a running low job is preempted (CANCEL, the cluster's mode);
# a normal job is not.
victim=$(sbatch --parsable -q low -n 2 --wrap 'sleep 300')
wait_state "$victim" RUNNING
plain=$(sbatch --parsable -q normal -n 2 --wrap true)
wait_reason "$plain" Resources
[ "$(state_of "$victim")" = RUNNING ] || fail "normal preempted the low job"
scancel "$plain"
urgent=$(sbatch --parsable -q high -n 2 -t 1 --wrap 'true')
wait_state "$victim" PREEMPTED 60
wait_state "$urgent" COMPLETED 60
cairn log audit --job "$victim" | finds "JobPreempted .*preemptorId=$urgent .*action=cancel" ||
  fail "the audit: $(cairn log audit --job "$victim")"

# 6b. The victim QOS's PreemptMode (requeue) overrides the cluster's CANCEL: the same id queued again.
sacctmgr -i add qos lowrq PreemptMode=requeue >/dev/null
sacctmgr -i modify qos high set Preempt+=lowrq >/dev/null
[ "$(sacctmgr -n -P show qos high format=preempt)" = "low,lowrq" ] || fail "Preempt+=: $(sacctmgr -n -P show qos high format=preempt)"
sacctmgr -i modify user root set \
  QOS=normal,low,high,onejob,twosubmit,shortwall,shortdeny,cpucap,grpcap,memcap,lowrq >/dev/null
victim=$(sbatch --parsable -q lowrq -n 2 --requeue --wrap 'sleep 300')
wait_state "$victim" RUNNING
urgent=$(sbatch --parsable -q high -n 2 -t 1 --wrap 'true')
wait_state "$urgent" COMPLETED 60
cairn log audit --job "$victim" | finds "JobPreempted .*preemptorId=$urgent .*action=requeue" ||
  fail "requeue by the QOS's mode: $(cairn log audit --job "$victim")"
restarts() { scontrol show job "$victim" | sed -n 's/.* Restarts=\([0-9]*\) .*/\1/p'; }
poll_until 60 1 restarts || fail "the requeued victim: Restarts=$(restarts)"
scancel "$victim"

# 7. A preemption loop is refused, nothing changed.
set +e; out=$(sacctmgr -i modify qos low set Preempt=high 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = "sacctmgr: error: QOS Preemption loop detected (low -> high -> low); nothing changed" ] ||
  fail "a preemption loop: rc=$rc '$out'"
[ "$(sacctmgr -n -P show qos low format=preempt)" = "" ] || fail "the loop changed low"

# 8. Delete; the QOS survive a restart (events replayed).
sacctmgr -i delete qos secret >/dev/null
before=$(sacctmgr -n -P show qos)
if finds secret <<<"$before"; then fail "secret not deleted"; fi
kill_hard "$(head -1 "$work/pids")"
restart_controller
[ "$(sacctmgr -n -P show qos)" = "$before" ] || fail "after a restart: $(sacctmgr -n -P show qos)"
pass "QOS: records, associations, --qos, limits, preempt/qos, loop refused, restart"
