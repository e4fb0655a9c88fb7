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
  skip_test "the agent runs without memory enforcement here: $(grep -h "memory enforcement off" "$work"/*.log | head -1)"
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
# With -s, Slurm's window is [-S, -E], both "now" unless given: a job that ended a second ago is outside it.
sacct -s OOM -S now-1hours -E now -X -n -P -o JobID | finds -x "$over" || fail "sacct -s OOM does not list $over"
sacct -s OUT_OF_MEMORY -S now-1hours -E now -X -n -P -o JobID | finds -x "$over" || fail "sacct -s OUT_OF_MEMORY does not list $over"
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
cairn log dump --job "$killed" | finds OomDetected && fail "a self-killed job was reported as OOM"

# 4. One child OOM-killed while the script goes on: recorded at once, OUT_OF_MEMORY at the end.
child=$(sbatch --parsable --mem=50M --wrap "$hog || true; for i in \$(seq 600); do [ -e $work/release-child ] && break; sleep 0.05; done; echo survived")
wait_state "$child" RUNNING
for _ in $(seq 400); do cairn log dump --job "$child" | finds OomDetected && break; sleep 0.05; done
[ "$(state_of "$child")" = RUNNING ] || fail "job $child should still run while its OOM is recorded ($(state_of "$child"))"
cairn log dump --job "$child" | finds OomDetected || fail "the OOM kill of a child was not recorded while the job ran"
touch "$work/release-child"
wait_state "$child" OUT_OF_MEMORY
grep -q survived "slurm-$child.out" || fail "the script did not go on after its child's OOM kill"

# 5. A two-node job whose batch host runs out of memory.
multi=$(sbatch --parsable -N2 --mem=50M --wrap "$hog")
wait_state "$multi" OUT_OF_MEMORY
[ "$(sacct -j "$multi" -X -n -P -o NNodes,ExitCode)" = "2|0:125" ] || fail "multi-node: $(sacct -j "$multi" -X -n -P -o NNodes,ExitCode)"

# 6. A suspended job whose stopped shell is OOM-killed ends OUT_OF_MEMORY. Nothing of a
# stopped job allocates, so the test charges memory to its cgroup from outside; the
# shell, holding 40 MB and marked the OOM killer's first choice (oom_score_adj 1000), is the victim.
memory_dir=$(v1_cgroup_dir memory)
if [ "$enforcement" = "MemoryEnforcement=cgroup/v1" ] && [ -d "$memory_dir" ]; then
  suspended=$(sbatch --parsable --mem=100M --wrap 'echo 1000 > /proc/$$/oom_score_adj; x=$(head -c 40000000 /dev/zero | tr "\0" a); echo held; sleep 300')
  wait_state "$suspended" RUNNING
  for _ in $(seq 100); do grep -q held "slurm-$suspended.out" 2>/dev/null && break; sleep 0.05; done
  grep -q held "slurm-$suspended.out" || fail "job $suspended did not get its 40 MB"
  host=$(squeue -h -j "$suspended" -o %N)
  cgroup="$memory_dir/$(agent_cgroup_prefix "$host").job$suspended.0"
  [ -d "$cgroup" ] || fail "no cgroup $cgroup for job $suspended"
  scontrol suspend "$suspended"
  wait_state "$suspended" SUSPENDED
  # The agent kills what is left in a job's cgroup when the job ends: the intruder may go too.
  sh -c 'echo $$ > "$1/cgroup.procs" && exec dd if=/dev/zero of=/dev/null bs=70M count=1 2>/dev/null' _ "$cgroup" || true
  wait_state "$suspended" OUT_OF_MEMORY
  [ "$(sacct -j "$suspended" -X -n -P -o ExitCode)" = "0:125" ] || fail "suspended OOM exit code"
  cairn log dump --job "$suspended" | finds "JobSuspend" || fail "job $suspended was never suspended"
else
  skip_part "part 6: needs the cgroup v1 memory controller"
fi

# 7. No job cgroup of this cluster's agents outlives its job.
if [ -d "$memory_dir" ]; then
  left=
  for _ in $(seq 40); do
    left=$(for node in n1 n2; do ls -d "$memory_dir/$(agent_cgroup_prefix "$node")".job* 2>/dev/null; done || true)
    [ -z "$left" ] && break
    sleep 0.05
  done
  [ -z "$left" ] || fail "job cgroups left behind: $left"
else
  skip_part "part 7: no memory cgroup directory $memory_dir to look for leftovers in"
fi

# 8. v1 keeps an ended job's cgroup for a later one (docs/decisions.md, "The agents' CPU per
# job"): the later job's peak is its own, not the earlier one's; stopped agents leave no
# cgroup behind, kept ones included.
if [ "$enforcement" = "MemoryEnforcement=cgroup/v1" ] && [ -d "$memory_dir" ]; then
  kept() { ls -d "$memory_dir/$(agent_cgroup_prefix n1)".pool* 2>/dev/null | wc -l; }
  big=$(sbatch --parsable -w n1 -o /dev/null --wrap 'dd if=/dev/zero of=/dev/null bs=100M count=1')
  wait_state "$big" COMPLETED
  poll_until 5 1 kept || fail "no cgroup kept after job $big: $(ls "$memory_dir")"
  small=$(sbatch --parsable -w n1 -o /dev/null --wrap true)
  wait_state "$small" COMPLETED
  peak_kib() { sacct -j "$1" -n -P -o JobID,MaxRSS | awk -F'|' '$1 ~ /batch/ {
    v = $2; unit = substr(v, length(v)); n = v + 0; print (unit == "M" ? n * 1024 : unit == "G" ? n * 1048576 : n) }'; }
  [ "$(peak_kib "$big")" -ge 100000 ] || fail "job $big's peak: $(sacct -j "$big" -n -P -o JobID,MaxRSS)"
  [ "$(peak_kib "$small")" -lt 10240 ] || fail "job $small's peak is not its own: $(sacct -j "$small" -n -P -o JobID,MaxRSS)"
  prefixes=$(for node in n1 n2; do agent_cgroup_prefix "$node"; done)  # read before the spools go
  cairn local down --dir "$work" >/dev/null 2>&1
  left=$(for prefix in $prefixes; do ls -d "$memory_dir/$prefix".* 2>/dev/null; done || true)
  [ -z "$left" ] || fail "cgroups left behind by stopped agents: $left"
else
  skip_part "part 8: needs the cgroup v1 memory controller"
fi
pass "oom: all checks passed"
