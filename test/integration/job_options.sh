#!/usr/bin/env bash
# sbatch options that place and describe a job: -C/--constraint over node features
# (Feature= on NodeName= lines), -w/--nodelist, -x/--exclude, --exclusive (whole
# nodes), --export=NONE,VAR=val, --comment, --mail-type/--mail-user, --nice,
# --cpus-per-task, --wrap=CMD; what scontrol, squeue and sinfo show of them.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
local_up_args=(--feature n2=gpu,fast --feature n3=bigmem)
start_cluster 3 2 1000

nodes_of() { squeue -h -j "$1" -o %N; }
field() { scontrol show job "$1" | grep -o "$2=[^ ]*" | head -1; }

# 1. Features: sinfo %f and scontrol show node; -C places the job on the featured node.
[ "$(sinfo -h -N -o '%N %f')" = "n1 (null)
n2 gpu,fast
n3 bigmem" ] || fail "sinfo %f: $(sinfo -h -N -o '%N %f')"
scontrol show node n2 | finds "AvailableFeatures=gpu,fast" || fail "scontrol show node n2: no AvailableFeatures"
scontrol show node n2 | finds "ActiveFeatures=gpu,fast" || fail "scontrol show node n2: no ActiveFeatures"
gpu=$(sbatch --parsable -o /dev/null -C "gpu&fast" --wrap 'sleep 30')
big=$(sbatch --parsable -o /dev/null --constraint="bigmem|nosuch" --wrap 'sleep 30')
wait_state "$gpu" RUNNING
wait_state "$big" RUNNING
[ "$(nodes_of "$gpu")" = n2 ] || fail "-C gpu&fast ran on $(nodes_of "$gpu")"
[ "$(nodes_of "$big")" = n3 ] || fail "-C bigmem|nosuch ran on $(nodes_of "$big")"
[ "$(field "$gpu" Features)" = "Features=gpu&fast" ] || fail "scontrol Features: $(field "$gpu" Features)"
scancel "$gpu" "$big"
for constraint in nosuch "gpu&bigmem" "gpu|" "(gpu"; do
  set +e; out=$(sbatch -C "$constraint" --wrap true 2>&1); rc=$?; set -e
  [ "$rc" = 1 ] || fail "-C '$constraint' accepted: $out"
  grep -q "Invalid feature specification" <<<"$out" || fail "-C '$constraint' said: $out"
done

# 2. -w and -x, shown as ReqNodeList= and ExcNodeList=.
wait_state "$gpu" CANCELLED
wait_state "$big" CANCELLED
pinned=$(sbatch --parsable -o /dev/null -w n3 --wrap 'sleep 30')
spared=$(sbatch --parsable -o /dev/null -x "n[1-2]" --wrap 'sleep 30')
wait_state "$pinned" RUNNING
wait_state "$spared" RUNNING
[ "$(nodes_of "$pinned")" = n3 ] || fail "-w n3 ran on $(nodes_of "$pinned")"
[ "$(nodes_of "$spared")" = n3 ] || fail "-x n[1-2] ran on $(nodes_of "$spared")"
[ "$(field "$pinned" ReqNodeList)" = "ReqNodeList=n3" ] || fail "$(field "$pinned" ReqNodeList)"
[ "$(field "$spared" ExcNodeList)" = "ExcNodeList=n[1-2]" ] || fail "$(field "$spared" ExcNodeList)"
two=$(sbatch --parsable -o /dev/null -w n1,n2 --wrap 'sleep 30')
wait_state "$two" RUNNING
[ "$(nodes_of "$two")" = "n[1-2]" ] || fail "-w n1,n2 ran on $(nodes_of "$two")"
set +e; out=$(sbatch -w n9 --wrap true 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = "sbatch: error: Batch job submission failed: Invalid node name specified" ] ||
  fail "-w n9: rc=$rc '$out'"
scancel "$pinned" "$spared" "$two"
wait_state "$two" CANCELLED

# 3. --exclusive: the job takes the whole node, and nothing shares it.
wait_state "$pinned" CANCELLED
wait_state "$spared" CANCELLED
whole=$(sbatch --parsable -o /dev/null --exclusive -w n1 --wrap 'sleep 30')
wait_state "$whole" RUNNING
[ "$(field "$whole" NumCPUs)" = "NumCPUs=2" ] || fail "exclusive job: $(field "$whole" NumCPUs)"
[ "$(field "$whole" OverSubscribe)" = "OverSubscribe=NO" ] || fail "exclusive job: $(field "$whole" OverSubscribe)"
guest=$(sbatch --parsable -o /dev/null -w n1 --wrap 'sleep 30')
# Pending reasons come from scheduling passes: once it shows, a pass judged the guest.
wait_reason "$guest" Resources
[ "$(state_of "$guest")" = PENDING ] || fail "a job shares the exclusive job's node: $(state_of "$guest")"
# The other way round: a node with a job on it is not given to an exclusive job.
sharer=$(sbatch --parsable -o /dev/null -w n2 --wrap 'sleep 30')
wait_state "$sharer" RUNNING
waiting=$(sbatch --parsable -o /dev/null --exclusive -w n2 --wrap 'sleep 30')
# A later job that runs elsewhere proves a scheduling pass went past the exclusive one.
probe=$(sbatch --parsable -o /dev/null -w n3 --wrap true)
wait_state "$probe" COMPLETED
[ "$(state_of "$waiting")" = PENDING ] || fail "an exclusive job shares n2: $(state_of "$waiting")"
scancel "$whole"
wait_state "$guest" RUNNING
scancel "$guest" "$sharer" "$waiting"

# 4. --export=NONE,FOO=1: only SLURM_* and the listed variables reach the job.
export CAIRN_IT_SECRET=leaked
env_job=$(sbatch --parsable -o "$work/env.out" --export=NONE,FOO=1 --wrap 'env')
wait_state "$env_job" COMPLETED
grep -qx "FOO=1" "$work/env.out" || fail "FOO=1 missing from the job's environment"
grep -q "^SLURM_JOB_ID=$env_job$" "$work/env.out" || fail "SLURM_JOB_ID missing with --export=NONE"
grep -q "CAIRN_IT_SECRET" "$work/env.out" && fail "--export=NONE passed the submitter's environment"
all_job=$(sbatch --parsable -o "$work/env-all.out" --wrap 'env')
wait_state "$all_job" COMPLETED
grep -qx "CAIRN_IT_SECRET=leaked" "$work/env-all.out" || fail "--export=ALL (default) lost the environment"

# 5. Recorded options: --comment, --mail-*, --nice, --cpus-per-task, --wrap=CMD with '='.
shown=$(sbatch --parsable -H -o /dev/null --comment="nightly run" --mail-type=END,fail --mail-user=ops@example.org \
  --nice=5 --cpus-per-task=2 --wrap='A=1; echo $A')
info=$(scontrol show job "$shown")
grep -q "Comment=nightly run" <<<"$info" || fail "no Comment=: $info"
grep -q "MailUser=ops@example.org MailType=END,FAIL" <<<"$info" || fail "no MailUser/MailType: $info"
grep -q " Nice=5 " <<<"$info" || fail "no Nice=5"
grep -q "CPUs/Task=2" <<<"$info" || fail "no CPUs/Task=2"
scancel "$shown"

# 6. sbatch --help lists the options of this issue.
help=$(sbatch --help)
for option in --kill-on-invalid-dep --constraint --nodelist --exclude --exclusive --export --mail-type; do
  grep -q -- "$option" <<<"$help" || fail "sbatch --help lacks $option"
done
echo PASS
