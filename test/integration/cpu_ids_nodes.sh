#!/usr/bin/env bash
# `scontrol show job -d` of a two-node job: the batch host's CPU ids come from the job's launch,
# the other node's from its agent's answer to the job's first step there; both lines are
# printed (job_info.c's `  Nodes=... CPU_IDs=... Mem=... GRES=`), and a second step does not
# change the recorded ids. A node no step has reached yet is not printed.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"

require_two_cpus
start_cluster 2 2 1000

job_d() { scontrol show job -d "$1"; }
ids_of() {  # job node -> the CPU_IDs printed for node (its line may name a group: n[1-2])
  local hosts ids
  job_d "$1" | sed -n 's/^ *Nodes=\([^ ]*\) CPU_IDs=\([^ ]*\) Mem=[0-9]* GRES=$/\1 \2/p' |
    while read -r hosts ids; do
      if scontrol show hostnames "$hosts" | finds -x "$2"; then echo "$ids"; fi
    done
}
wait_ids() {  # job node
  for _ in $(seq 600); do
    [ -n "$(ids_of "$1" "$2")" ] && return 0
    sleep 0.05
  done
  fail "scontrol show job -d $1 prints no CPU_IDs for $2: $(job_d "$1")"
}

# The script holds until released; its steps run over both nodes when told.
cat > two.sh <<'SCRIPT'
#!/bin/sh
while [ ! -e step.$SLURM_JOB_ID ]; do sleep 0.05; done
srun -N2 -n2 true
srun -N2 -n2 true
while [ ! -e release.$SLURM_JOB_ID ]; do sleep 0.05; done
SCRIPT
job=$(sbatch --parsable -N2 -n2 two.sh)
wait_state "$job" RUNNING
batch=$(squeue -h -j "$job" -o %B)
[ -n "$batch" ] || fail "no batch host for $job"
other=n1
[ "$batch" = n1 ] && other=n2
wait_ids "$job" "$batch"
# Before any step: only the batch host's line.
[ -z "$(ids_of "$job" "$other")" ] || fail "node $other has CPU ids before any step reached it: $(job_d "$job")"

touch "step.$job"
wait_ids "$job" "$other"
first=$(ids_of "$job" "$other")
[ "$(count_cpus "$first")" = 1 ] || fail "$other: CPU_IDs=$first for one task"
# Both steps done (the script waits for the release): the ids recorded at the first stand.
poll_until 60 2 bash -c "sacct -j $job -n -P -o JobID | grep -c '^$job\\.[0-9]'" || fail "the steps did not run: $(sacct -j "$job")"
[ "$(ids_of "$job" "$other")" = "$first" ] || fail "$other's CPU_IDs changed from $first: $(job_d "$job")"
[ "$(cairn log dump --kind JobCpusBound --job "$job" | wc -l)" = 2 ] ||
  fail "JobCpusBound events: $(cairn log dump --kind JobCpusBound --job "$job")"
[ -n "$(ids_of "$job" "$batch")" ] || fail "$batch is missing: $(job_d "$job")"
touch "release.$job"
wait_state "$job" COMPLETED
pass "CPU ids: the batch host from the launch, the other node from its first step; both printed"
