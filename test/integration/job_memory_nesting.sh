#!/usr/bin/env bash
# The job's memory limit covers its batch script and its steps together (Slurm's
# job/step cgroup hierarchy): a script holding 60 MB while its step takes 60 more ends
# OUT_OF_MEMORY under --mem=100M, though each alone is within it; the same under
# --mem=200M completes. The script runs in the cgroup "batch" and a step in "step<N>",
# both inside the job's.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 1 2 2000

enforcement=$(scontrol show node n1 | grep -o 'MemoryEnforcement=[^ ]*' || true)
[ -n "$enforcement" ] || fail "scontrol show node prints no MemoryEnforcement="
if [ "$enforcement" = "MemoryEnforcement=off" ]; then
  skip_test "the agent runs without memory cgroups here: $(grep -h "memory enforcement off" "$work"/*.log | head -1)"
fi

# The script's holder: dd reads 60 MB from /dev/zero into its buffer, then blocks writing
# it to a pipe nobody reads, holding the memory. The step then takes 60 MB more.
cat > nested.sh <<'EOF'
#!/bin/bash
grep -E '(^0::|memory)' /proc/self/cgroup | sed 's/^/shell cgroup: /'
sh -c 'echo $$ > holder.pid.$SLURM_JOB_ID; exec dd if=/dev/zero bs=60M count=1 2>/dev/null' | sleep 300 &
sleeper=$!
for i in $(seq 600); do
  pid=$(cat holder.pid.$SLURM_JOB_ID 2>/dev/null || true)
  [ -n "$pid" ] && [ "$(awk '/^VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)" -ge 60000 ] && break
  sleep 0.05
done
echo "holder rss: $(awk '/^VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo gone)"
srun sh -c "grep -E '(^0::|memory)' /proc/self/cgroup | sed 's/^/step cgroup: /'; dd if=/dev/zero of=/dev/null bs=60M count=1 2>/dev/null"
echo "srun exited $?"
kill $sleeper 2>/dev/null
kill $pid 2>/dev/null
exit 0
EOF

# 1. Within the job's limit together: COMPLETED, and the cgroups are nested.
within=$(sbatch --parsable --mem=200M -o within.out nested.sh)
wait_state "$within" COMPLETED 60
grep -q "holder rss: [0-9]" within.out || fail "the script's holder did not get its memory: $(cat within.out)"
grep -q "srun exited 0" within.out || fail "the step failed within the limit: $(cat within.out)"
grep -Eq "shell cgroup: .*\.job$within\.0/batch$" within.out || fail "the script is not in <job>/batch: $(cat within.out)"
grep -Eq "step cgroup: .*\.job$within\.0/step0$" within.out || fail "the step is not in <job>/step0: $(cat within.out)"

# 2. Over it together, each within: the job's limit is hit, the job ends OUT_OF_MEMORY.
over=$(sbatch --parsable --mem=100M -o over.out nested.sh)
wait_state "$over" OUT_OF_MEMORY 60
grep -q "holder rss: [0-9]" over.out || fail "the script's holder did not get its memory: $(cat over.out)"
[ "$(sacct -j "$over" -X -n -P -o State)" = OUT_OF_MEMORY ] || fail "sacct: $(sacct -j "$over" -X -n -P -o State,ExitCode)"
cairn log dump --job "$over" | finds OomDetected || fail "no OomDetected for job $over"

# 3. Nothing of either job is left in a cgroup.
# This agent's job cgroups only ("job cgroups DIR/cairnd-n1-HASH-PID.*"): an agent of another
# run killed with -9 may have left its own behind.
cgroup_prefix=$(grep -h "memory enforcement: cgroup" "$work"/*.log | head -1 | sed -n 's/.*job cgroups \([^ ]*\)\.\*$/\1/p')
if [ -n "$cgroup_prefix" ] && [ -d "$(dirname "$cgroup_prefix")" ]; then
  for _ in $(seq 200); do
    left=$(ls -d "$cgroup_prefix".job"$within".0 "$cgroup_prefix".job"$over".0 2>/dev/null || true)
    [ -z "$left" ] && break
    sleep 0.05
  done
  [ -z "$left" ] || fail "job cgroups left behind: $left"
fi
pass "job memory nesting: OK"
