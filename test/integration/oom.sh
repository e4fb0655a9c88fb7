#!/usr/bin/env bash
# Out-of-memory detection with the kernel's real memory controller: a job over
# its --mem ends OUT_OF_MEMORY (0:125, Reason=OutOfMemory) in squeue, scontrol
# and sacct; a job under it completes; a job that SIGKILLs itself is not an OOM;
# an OOM kill of one child of a job that goes on is recorded while it runs; a
# multi-node job ends the same way; no job cgroup is left behind.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 2000

enforcement=$(scontrol show node n1 | grep -o 'MemoryEnforcement=[^ ]*' || true)
if [ "$enforcement" = "MemoryEnforcement=off" ]; then
  echo "SKIP: the agent runs without memory enforcement here:"
  grep -h "memory enforcement off" "$work"/*.log | head -1
  exit 77
fi
[ -n "$enforcement" ] || fail "scontrol show node prints no MemoryEnforcement="

# dd's 300 MB block buffer is touched as it reads /dev/zero into it.
hog='dd if=/dev/zero of=/dev/null bs=300M count=1'

# 1. Over the limit: OUT_OF_MEMORY everywhere a Slurm user looks.
over=$(sbatch --parsable --mem=50M --wrap "$hog")
wait_state "$over" OUT_OF_MEMORY
show=$(scontrol show job "$over")
grep -q "JobState=OUT_OF_MEMORY Reason=OutOfMemory " <<<"$show" || fail "scontrol: $show"
grep -q " ExitCode=0:125" <<<"$show" || fail "scontrol exit code: $show"
[ "$(squeue -t all -j "$over" -h -o '%T %r')" = "OUT_OF_MEMORY OutOfMemory" ] || fail "squeue -t all: $(squeue -t all -j "$over")"
[ "$(squeue -t all -j "$over" -h -o '%.2t')" = "OO" ] || fail "squeue compact state"
[ "$(sacct -j "$over" -X -n -P -o State,ExitCode)" = "OUT_OF_MEMORY|0:125" ] || fail "sacct: $(sacct -j "$over" -X -n -P -o State,ExitCode)"
sacct -s OOM -X -n -P -o JobID | grep -qx "$over" || fail "sacct -s OOM does not list $over"
sacct -s OUT_OF_MEMORY -X -n -P -o JobID | grep -qx "$over" || fail "sacct -s OUT_OF_MEMORY does not list $over"
audit=$(cairn log audit --job "$over")
grep -q "OomDetected" <<<"$audit" || fail "audit has no OomDetected: $audit"
grep -Eq "node=n1 .*peak=[0-9.]+[KMG]? .*limit=50M" <<<"$audit" || fail "audit lacks node, peak and limit: $audit"

# 2. Under the limit: COMPLETED.
under=$(sbatch --parsable --mem=200M --wrap 'dd if=/dev/zero of=/dev/null bs=20M count=1')
wait_state "$under" COMPLETED

# 3. SIGKILL without any OOM is a plain failure.
killed=$(sbatch --parsable --mem=50M --wrap 'kill -9 $$')
wait_state "$killed" FAILED
[ "$(sacct -j "$killed" -X -n -P -o ExitCode)" = "0:9" ] || fail "self-killed job: $(sacct -j "$killed" -X -n -P -o State,ExitCode)"
cairn log dump --job "$killed" | grep -q OomDetected && fail "a self-killed job was reported as OOM"

# 4. One child OOM-killed while the script goes on: recorded at once, OUT_OF_MEMORY at the end.
child=$(sbatch --parsable --mem=50M --wrap "$hog || true; sleep 2; echo survived")
wait_state "$child" RUNNING
for _ in $(seq 40); do cairn log dump --job "$child" | grep -q OomDetected && break; sleep 0.05; done
[ "$(state_of "$child")" = RUNNING ] || fail "job $child should still run while its OOM is recorded ($(state_of "$child"))"
cairn log dump --job "$child" | grep -q OomDetected || fail "the OOM kill of a child was not recorded while the job ran"
wait_state "$child" OUT_OF_MEMORY
grep -q survived "slurm-$child.out" || fail "the script did not go on after its child's OOM kill"

# 5. A two-node job whose batch host runs out of memory.
multi=$(sbatch --parsable -N2 --mem=50M --wrap "$hog")
wait_state "$multi" OUT_OF_MEMORY
[ "$(sacct -j "$multi" -X -n -P -o NNodes,ExitCode)" = "2|0:125" ] || fail "multi-node: $(sacct -j "$multi" -X -n -P -o NNodes,ExitCode)"

# 6. No job cgroup of this cluster's agents outlives its job.
memory_dir=/sys/fs/cgroup/memory$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
if [ -d "$memory_dir" ]; then
  left=
  for _ in $(seq 40); do
    left=$(for pid in $(cat "$work/pids"); do ls -d "$memory_dir"/cairnd-*-"$pid".job* 2>/dev/null; done || true)
    [ -z "$left" ] && break
    sleep 0.05
  done
  [ -z "$left" ] || fail "job cgroups left behind: $left"
fi
echo "oom: all checks passed"
