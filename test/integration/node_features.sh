#!/usr/bin/env bash
# scontrol update NodeName= Features=, ActiveFeatures=, Weight= with real daemons: a -C job
# refused until a node has the feature, then run there; Weight= making jobs prefer the lighter
# node; Slurm's refusals (active not among available, a user's update); the settings surviving
# a controller restart; --at before the change showing the old features.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

node_of() { sacct -j "$1" -X -n -P -o NodeList | head -1; }

# 1. Before: no node has "gpu"; Weight 1 everywhere.
expect_error "sbatch: error: Batch job submission failed: Invalid feature specification" sbatch -C gpu --wrap true
scontrol show node n1 | finds "AvailableFeatures=(null)" || fail "n1 has features: $(scontrol show node n1)"
before=$(date +%Y-%m-%dT%H:%M:%S)
until_after=$(( $(date +%s) + 1 ))
while [ "$(date +%s)" -le "$until_after" ]; do sleep 0.1; done  # the clock passes the instant --at will ask

# 2. Features= on n1: shown, and a -C job runs there.
out=$(scontrol update NodeName=n1 Features=gpu,fast 2>&1) || fail "update Features failed: $out"
[ -z "$out" ] || fail "scontrol update printed '$out'"
shown=$(scontrol show node n1)
grep -q "^   AvailableFeatures=gpu,fast$" <<<"$shown" || fail "AvailableFeatures: $shown"
grep -q "^   ActiveFeatures=gpu,fast$" <<<"$shown" || fail "ActiveFeatures (Features= sets both): $shown"
job=$(sbatch --parsable -C gpu --wrap true)
wait_state "$job" COMPLETED
[ "$(node_of "$job")" = n1 ] || fail "-C gpu ran on '$(node_of "$job")'"
scontrol update NodeName=n1 ActiveFeatures=gpu
scontrol show node n1 | finds "^   ActiveFeatures=gpu$" || fail "ActiveFeatures=gpu: $(scontrol show node n1)"
sinfo -h -N -o '%N|%f|%b' | finds -x "n1|gpu,fast|gpu" || fail "sinfo %f|%b: $(sinfo -N -o '%N %f %b')"
# -C uses the active features: "fast" is only available now.
expect_error "sbatch: error: Batch job submission failed: Invalid feature specification" sbatch -C fast --wrap true

# 3. Slurm's refusals.
expect_error "slurm_update error: Active features not subset of available features" \
  scontrol update NodeName=n1 ActiveFeatures=bigmem
expect_error "scontrol: error: Weight value (heavy) is not a valid number" scontrol update NodeName=n1 Weight=heavy
expect_error "slurm_update error: Invalid node name specified" scontrol update NodeName=n9 Features=x
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  expect_error "slurm_update error: Invalid user id" \
    setpriv --reuid=65534 --regid=65534 --clear-groups -- "$bin/scontrol" update NodeName=n2 Features=mine
  scontrol show node n2 | finds "AvailableFeatures=(null)" || fail "a user's update took: $(scontrol show node n2)"
else
  skip_part "part 3 (a user's update refused): needs root and setpriv to run scontrol as another user"
fi

# 4. Weight: jobs go to the lighter node first.
scontrol update NodeName=n1 Weight=10
scontrol show node n1 | finds " Weight=10 " || fail "Weight=10: $(scontrol show node n1)"
sinfo -h -N -o '%N|%w' | finds -x "n1|10" || fail "sinfo %w: $(sinfo -N -o '%N %w')"
light=$(sbatch --parsable -n 1 --wrap true)
wait_state "$light" COMPLETED
[ "$(node_of "$light")" = n2 ] || fail "the job ran on '$(node_of "$light")', not the lighter n2"
scontrol update NodeName=n1 Weight=1 && scontrol update NodeName=n2 Weight=5
heavy=$(sbatch --parsable -n 1 --wrap true)
wait_state "$heavy" COMPLETED
[ "$(node_of "$heavy")" = n1 ] || fail "the job ran on '$(node_of "$heavy")', not the lighter n1"

# 5. A controller restart keeps them (replayed from the log).
kill_hard "$(head -1 pids)"
restart_controller
shown=$(scontrol show node n1)
grep -q "^   AvailableFeatures=gpu,fast$" <<<"$shown" && grep -q "^   ActiveFeatures=gpu$" <<<"$shown" ||
  fail "features lost by the restart: $shown"
scontrol show node n2 | finds " Weight=5 " || fail "weight lost by the restart: $(scontrol show node n2)"
again=$(sbatch --parsable -C gpu --wrap true)
wait_state "$again" COMPLETED
[ "$(node_of "$again")" = n1 ] || fail "-C gpu after the restart ran on '$(node_of "$again")'"

# 6. --at before the change: the old features.
scontrol --at "$before" show node n1 | finds "^   AvailableFeatures=(null)$" ||
  fail "show node --at $before: $(scontrol --at "$before" show node n1)"

# 7. Every change is a NodeUpdated event.
dump=$(cairn log dump)
[ "$(grep -c "NodeUpdated" <<<"$dump")" -ge 5 ] || fail "NodeUpdated events missing: $(grep NodeUpdated <<<"$dump")"
cairn log verify >/dev/null || fail "cairn log verify"

pass "node features and weight: -C, weight order, refusals, restart, --at"
