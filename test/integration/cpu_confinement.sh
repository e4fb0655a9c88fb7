#!/usr/bin/env bash
# The CPUs the controller picks for a job at allocation, which its agent confines it to, are
# printed by `scontrol show job -d` as Slurm 22.05 does (`  Nodes=n1 CPU_IDs=0 Mem=...`),
# also after a controller restart; with ConstrainCores=yes and a cpuset controller, a job
# that widens its own affinity (taskset -p) still runs on its CPUs only; on a node with
# ThreadsPerCore=2, --hint=nomultithread (and --threads-per-core=1, --ntasks-per-core=1)
# gives one thread of each core.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"

require_two_cpus
start_cluster_with 1 4 1000 "ConstrainCores=yes"

wait_file() {  # path
  for _ in $(seq 400); do [ -s "$1" ] && return 0; sleep 0.05; done
  fail "$1 was not written"
}
allowed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1"; }
cpu_ids_line() { scontrol show job -d "$1" | sed -n 's/^ *Nodes=n1 CPU_IDs=\([^ ]*\) Mem=[0-9]* GRES=$/\1/p'; }
wait_cpu_ids() {  # job -> its CPU_IDs (polled, though the allocation that records them comes before RUNNING)
  local ids=""
  for _ in $(seq 400); do
    ids=$(cpu_ids_line "$1")
    [ -n "$ids" ] && { echo "$ids"; return 0; }
    sleep 0.05
  done
  fail "scontrol show job -d $1 prints no CPU_IDs: $(scontrol show job -d "$1")"
}

# 1. Two 1-CPU jobs: scontrol -d prints each one's CPU_IDs, different ones, as the agent chose.
holder='grep -E "Cpus_allowed_list|cpuset" /proc/self/status /proc/self/cgroup > cpus.$SLURM_JOB_ID; while [ ! -e release.$SLURM_JOB_ID ]; do sleep 0.05; done'
first=$(sbatch --parsable -n1 --wrap "$holder")
second=$(sbatch --parsable -n1 --wrap "$holder")
wait_state "$first" RUNNING
wait_state "$second" RUNNING
a=$(wait_cpu_ids "$first")
b=$(wait_cpu_ids "$second")
[ "$(count_cpus "$a")" = 1 ] && [ "$(count_cpus "$b")" = 1 ] || fail "1-CPU jobs with CPU_IDs=$a and $b"
[ "$a" != "$b" ] || fail "two jobs on one node both show CPU_IDs=$a"
grep -qh "JobId=$first: CPU_IDs=$a " "$work"/*.log || fail "the agent logged other CPUs for job $first than CPU_IDs=$a"
scontrol show job -d "$first" | finds "^   JOB_GRES=(null)$" || fail "no JOB_GRES line: $(scontrol show job -d "$first")"
scontrol show job "$first" | finds "CPU_IDs" && fail "CPU_IDs without -d: $(scontrol show job "$first")"
# The controller's record is the truth: a restarted controller has them from its log.
kill_hard "$(sed -n 1p "$work/pids")"
restart_controller
[ "$(wait_cpu_ids "$first")" = "$a" ] || fail "after a controller restart job $first shows CPU_IDs=$(cpu_ids_line "$first"), not $a"

# 2. ConstrainCores=yes: the job widens its affinity to every CPU and still has its own only.
wait_file "cpus.$first"
if grep -q "CPU confinement: cpuset cgroups" "$work"/cairnd-n1.log; then
  grep -q ":cpuset:.*cairnd-n1-.*job$first\." "cpus.$first" ||
    fail "job $first is not in its cpuset cgroup: $(cat "cpus.$first")"
  all="0-$(($(getconf _NPROCESSORS_ONLN) - 1))"
  widen='taskset -p -c '"$all"' $$ >/dev/null 2>&1; python3 -c "import os; os.sched_setaffinity(0, range(os.cpu_count()))" 2>/dev/null; grep Cpus_allowed_list /proc/self/status > wide.$SLURM_JOB_ID'
  touch "release.$first" "release.$second"
  wait_state "$first" COMPLETED
  wait_state "$second" COMPLETED
  wide=$(sbatch --parsable -n1 --wrap "$widen")
  wait_state "$wide" COMPLETED
  w=$(allowed "wide.$wide")
  [ "$(count_cpus "$w")" = 1 ] || fail "with ConstrainCores=yes a job widened its CPUs to $w"
  # This cluster's agent's (another cluster's n1 may run a job of the same id meanwhile).
  ! ls -d /sys/fs/cgroup/cpuset/"$(agent_cgroup_prefix n1)".job"$wide".* 2>/dev/null || fail "the cpuset of job $wide was left behind"
else
  # What the agent checked: the cgroup v1 cpuset hierarchy of its process, or v2's cpuset controller.
  why=$(grep -h "ConstrainCores=yes but no cpuset" "$work"/cairnd-n1.log | head -1)
  touch "release.$first" "release.$second"
  if grep -q ':cpuset:' /proc/self/cgroup || finds -w cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    fail "this machine has a cpuset controller (/proc/self/cgroup: $(grep cpuset /proc/self/cgroup)) but the agent did not use it: $why"
  fi
  skip_part "no cpuset controller here (/proc/self/cgroup has none, nor /sys/fs/cgroup/cgroup.controllers): $why"
  wait_state "$first" COMPLETED
  wait_state "$second" COMPLETED
fi

# 3. ThreadsPerCore=2: the controller (reconfigured) and the agent (restarted) with the node's
#    topology give a job asking for one thread per core one thread of each core (CPU ids are
#    ordinals: no SMT hardware is needed).
registered=$(registrations_of n1)
kill_hard "$(local_agent_pid n1)"
sed -i 's/^NodeName=n\[1-1\] CPUs=4 RealMemory=1000$/& Sockets=1 CoresPerSocket=2 ThreadsPerCore=2/' "$CAIRN_CONF"
grep -q "ThreadsPerCore=2" "$CAIRN_CONF" || fail "cannot give n1 a topology: $(grep NodeName "$CAIRN_CONF")"
restart_agent n1
wait_registrations n1 $((registered + 1))
scontrol reconfigure
for option in --hint=nomultithread --threads-per-core=1 --ntasks-per-core=1 --hint=compute_bound ""; do
  job=$(sbatch --parsable -n2 $option --wrap "$holder")
  wait_state "$job" RUNNING
  ids=$(wait_cpu_ids "$job")
  expected="0,2"
  [ -n "$option" ] || expected="0-1"  # both threads of core 0
  [ "$ids" = "$expected" ] || fail "sbatch -n2 $option on 1 socket x 2 cores x 2 threads: CPU_IDs=$ids, not $expected"
  touch "release.$job"
  wait_state "$job" COMPLETED
done
pass "cpu confinement: OK"
