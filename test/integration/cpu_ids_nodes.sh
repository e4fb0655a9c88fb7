#!/usr/bin/env bash
# CPU ids chosen by the controller at allocation: `scontrol show job -d` of a two-node job
# prints `  Nodes=... CPU_IDs=... Mem=... GRES=` (job_info.c's layout) for every node before
# any step ran, apart from another job's CPU on one of them; the batch script and the tasks
# of its steps on both nodes are bound to those ids; the ids stand through the steps and no
# agent reports ids of its own (no JobCpusBound).
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
# The agents map CPU ordinal i to the i-th CPU of their own affinity (modulo their number),
# which they inherit from this shell.
machine_cpus=()
for part in $(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status | tr , ' '); do
  if [[ "$part" == *-* ]]; then machine_cpus+=($(seq "${part%-*}" "${part#*-}")); else machine_cpus+=("$part"); fi
done
on_machine() {  # ordinals ("0-1,3") -> the machine's CPUs, ascending, one per line
  local part i
  for part in ${1//,/ }; do
    if [[ "$part" == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done | while read -r i; do echo "${machine_cpus[$((i % ${#machine_cpus[@]}))]}"; done | sort -nu
}
expanded() {  # Cpus_allowed_list -> one CPU per line
  local part
  for part in ${1//,/ }; do
    if [[ "$part" == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
  done | sort -nu
}
wait_file() {  # path
  for _ in $(seq 600); do [ -s "$1" ] && return 0; sleep 0.05; done
  fail "$1 was not written"
}

# A 1-CPU job on n2 first: it holds n2's CPU 0.
holder=$(sbatch --parsable -n1 -w n2 --wrap 'while [ ! -e release.$SLURM_JOB_ID ]; do sleep 0.05; done')
wait_state "$holder" RUNNING
[ "$(ids_of "$holder" n2)" = 0 ] || fail "the first job on n2 should hold CPU 0: $(job_d "$holder")"

# The script says its CPUs, then holds until told to run its steps over both nodes.
cat > two.sh <<'SCRIPT'
#!/bin/sh
sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status > batch.$SLURM_JOB_ID
while [ ! -e step.$SLURM_JOB_ID ]; do sleep 0.05; done
srun -N2 -n2 sh -c 'echo "$SLURMD_NODENAME $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"' > tasks.$SLURM_JOB_ID
srun -N2 -n2 true
while [ ! -e release.$SLURM_JOB_ID ]; do sleep 0.05; done
SCRIPT
job=$(sbatch --parsable -N2 -n2 two.sh)
wait_state "$job" RUNNING
batch=$(squeue -h -j "$job" -o %B)
[ -n "$batch" ] || fail "no batch host for $job"
# Before any step: a line for each node, from the allocation. n1 is free (CPU 0); on n2 the
# holder has CPU 0, so the job gets CPU 1.
[ "$(ids_of "$job" n1)" = 0 ] || fail "n1's CPU_IDs before any step: $(job_d "$job")"
[ "$(ids_of "$job" n2)" = 1 ] || fail "n2's CPU_IDs before any step (CPU 0 is job $holder's): $(job_d "$job")"
job_d "$job" | finds -x '   JOB_GRES=(null)' || fail "no JOB_GRES= line: $(job_d "$job")"

# The batch script runs on the batch host's ids.
wait_file "batch.$job"
[ "$(expanded "$(cat "batch.$job")")" = "$(on_machine "$(ids_of "$job" "$batch")")" ] ||
  fail "the batch script of $job runs on CPUs $(cat "batch.$job"), not CPU_IDs=$(ids_of "$job" "$batch") of $batch"

# Each step's task on a node runs within the job's ids there.
touch "step.$job"
poll_until 60 2 bash -c "sacct -j $job -n -P -o JobID | grep -c '^$job\\.[0-9]'" || fail "the steps did not run: $(sacct -j "$job")"
for node in n1 n2; do
  seen=$(awk -v n="$node" '$1 == n {print $2}' "tasks.$job")
  [ -n "$seen" ] || fail "no task of the step on $node: $(cat "tasks.$job")"
  [ "$(expanded "$seen")" = "$(on_machine "$(ids_of "$job" "$node")")" ] ||
    fail "the step's task on $node runs on CPUs $seen, not CPU_IDs=$(ids_of "$job" "$node"): $(cat "tasks.$job")"
done
[ "$(ids_of "$job" n1)" = 0 ] && [ "$(ids_of "$job" n2)" = 1 ] || fail "the CPU ids changed with the steps: $(job_d "$job")"
# The agents bound to the ids they were given: none reported ids of its own.
bound=$(cairn log dump --kind JobCpusBound --job "$job")
[ -z "$bound" ] || fail "JobCpusBound events for $job: $bound"
touch "release.$job" "release.$holder"
wait_state "$job" COMPLETED
wait_state "$holder" COMPLETED
pass "CPU ids: chosen at allocation for every node, shown before any step, the script and its steps bound to them"
