#!/usr/bin/env bash
# Issue 23's remaining QOS gaps with real daemons: the QOS part of a job's priority (squeue %Q and
# -O prioritylong, scontrol show job's Priority=, sacct's Priority and QOSRAW, --at); scontrol
# update JobId= QOS= (an operator: any QOS; the owner: one its association allows; pending jobs
# only; Slurm's texts; the pending reason re-evaluated; a JobUpdated event); srun --qos for a new
# allocation and the job's QOS on the wire to its steps (SLURM_JOB_QOS).
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster_with 1 2 1000 "AccountingStorageEnforce=associations"

sacctmgr -i add qos low Priority=10 MaxWall=1 >/dev/null
sacctmgr -i add qos high Priority=1000 >/dev/null
sacctmgr -i add qos capped MaxSubmitJobsPerUser=1 >/dev/null
sacctmgr -i add account physics >/dev/null
sacctmgr -i add user root account=physics QOS=normal,low,high DefaultQOS=normal >/dev/null

# 1. Priority: 1 plus the QOS's Priority, in every display (ids: normal 1, low 2, high 3).
later=$(sbatch --parsable --begin=now+3600 -q high --wrap true)
plain=$(sbatch --parsable --begin=now+3600 --wrap true)
[ "$(squeue -h -j "$later" -o %Q)" = 1001 ] || fail "squeue %Q of a high job: $(squeue -h -j "$later" -o %Q)"
[ "$(squeue -h -j "$plain" -o %Q)" = 1 ] || fail "squeue %Q of a normal job: $(squeue -h -j "$plain" -o %Q)"
[ "$(squeue -h -j "$later" -O JobID:8,PriorityLong:6,QOS:6)" = "$(printf '%-8s%-6s%-6s' "$later" 1001 high)" ] ||
  fail "squeue -O: '$(squeue -h -j "$later" -O JobID:8,PriorityLong:6,QOS:6)'"
scontrol show job "$later" | finds "^   Priority=1001 Nice=0 Account=physics QOS=high$" ||
  fail "scontrol Priority=: $(scontrol show job "$later" | grep Priority)"
[ "$(sacct -n -X -P -j "$later" -o Priority,QOS,QOSRAW)" = "1001|high|3" ] ||
  fail "sacct: $(sacct -n -X -P -j "$later" -o Priority,QOS,QOSRAW)"
[ "$(squeue --at now -h -j "$later" -o %Q)" = 1001 ] || fail "squeue --at: $(squeue --at now -h -j "$later" -o %Q)"

# 2. scontrol update QOS= by an operator (root): any QOS that exists, even one root's
# association does not list; the event; the new priority; bad input refused, nothing changed.
scontrol update JobId="$plain" QOS=low
[ "$(squeue -h -j "$plain" -o '%q %Q')" = "low 11" ] || fail "after QOS=low: $(squeue -h -j "$plain" -o '%q %Q')"
cairn log audit --job "$plain" | finds "JobUpdated .*qos=low" || fail "no event: $(cairn log audit --job "$plain")"
scontrol update JobId="$plain" QOS=capped
[ "$(squeue -h -j "$plain" -o %q)" = capped ] || fail "an operator's QOS=capped: $(squeue -h -j "$plain" -o %q)"
expect_error "Invalid qos specification for job $plain" scontrol update JobId="$plain" QOS=nosuch
[ "$(squeue -h -j "$plain" -o %q)" = capped ] || fail "a refused update changed the QOS"
scontrol update JobId="$plain" QOS=  # "": the association's default
[ "$(squeue -h -j "$plain" -o %q)" = normal ] || fail "QOS= (the default): $(squeue -h -j "$plain" -o %q)"
scancel "$later" "$plain"

# The pending reason follows the QOS: low's MaxWall=1 holds a 5-minute job; back to normal, it runs.
job=$(sbatch --parsable --hold -t 5 -o /dev/null --wrap true)
scontrol update JobId="$job" QOS=low
scontrol release "$job"
wait_reason "$job" QOSMaxWallDurationPerJobLimit
scontrol update JobId="$job" QOS=normal
wait_state "$job" COMPLETED 60

# A running job: its own QOS is no change; another is refused with Slurm's text.
running=$(sbatch --parsable -o /dev/null --wrap 'sleep 300')
wait_state "$running" RUNNING
scontrol update JobId="$running" QOS=normal
expect_error "Job is no longer pending execution for job $running" scontrol update JobId="$running" QOS=high
scancel "$running"

# 3. srun --qos: the new allocation's QOS, and its step's SLURM_JOB_QOS from the controller.
[ "$(srun -q high printenv SLURM_JOB_QOS)" = high ] || fail "srun -q high: $(srun -q high printenv SLURM_JOB_QOS)"
expect_error "srun: error: Unable to allocate resources: Invalid qos specification" srun -q nosuch true
expect_error "srun: error: Unable to allocate resources: Invalid qos specification" srun -q capped true
# A step of a batch job gets the job's QOS on the wire, not from the environment srun passes on.
job=$(sbatch --parsable -q low -o step.out --wrap 'env -u SLURM_JOB_QOS srun printenv SLURM_JOB_QOS')
wait_state "$job" COMPLETED 60
[ "$(cat step.out)" = low ] || fail "a step's SLURM_JOB_QOS: $(cat step.out)"

# 4. The owner, not an operator: only a QOS its association allows; the new QOS's submission
# limits (MaxSubmitJobsPerUser) with Slurm's text.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
  mkdir -m 777 shared
  sacctmgr -i add user nobody account=physics QOS=normal,low,capped DefaultQOS=normal >/dev/null
  first=$(cd shared && as_nobody "$bin/sbatch" --parsable --begin=now+3600 -q capped -o /dev/null --wrap true)
  second=$(cd shared && as_nobody "$bin/sbatch" --parsable --begin=now+3600 -o /dev/null --wrap true)
  expect_error "Invalid qos specification for job $second" as_nobody "$bin/scontrol" update JobId="$second" QOS=high
  expect_error "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits) for job $second" \
    as_nobody "$bin/scontrol" update JobId="$second" QOS=capped
  as_nobody "$bin/scontrol" update JobId="$second" QOS=low
  [ "$(squeue -h -j "$second" -o %q)" = low ] || fail "the owner's QOS=low: $(squeue -h -j "$second" -o %q)"
  root_job=$(sbatch --parsable --begin=now+3600 -o /dev/null --wrap true)
  expect_error "Invalid user id for job $root_job" as_nobody "$bin/scontrol" update JobId="$root_job" QOS=low
  scancel "$first" "$second" "$root_job"
else
  skip_part "part 4: needs root and setpriv to run the CLI as another user"
fi
pass "QOS: priority with the QOS part, scontrol update QOS=, srun --qos and the step's QOS"
