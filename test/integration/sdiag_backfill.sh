#!/usr/bin/env bash
# sdiag's "Backfilling stats" and the backfill metrics from a real backfill: on one node of 2
# CPUs, a running job holds one CPU for 10 minutes; a job wanting both waits (Resources) with
# the node reserved from then; a 1-minute job starts in the free CPU ahead of it (backfilled),
# a 30-minute one does not.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_cluster_with 1 2 1000 "MetricsAddr=127.0.0.1
MetricsPort=$port"

sdiag | finds -xF $'\tTotal backfilled jobs (since last slurm start): 0' || fail "sdiag before any backfill: $(sdiag)"
sdiag | finds -xF $'\tLast cycle when: N/A' || fail "sdiag before any backfill: $(sdiag)"

holder=$(sbatch --parsable -n1 -t 10 --wrap 'sleep 300')
wait_state "$holder" RUNNING
wide=$(sbatch --parsable -n2 -t 10 --wrap true)
wait_reason "$wide" Resources
short=$(sbatch --parsable -n1 -t 1 --wrap 'sleep 300')
wait_state "$short" RUNNING
long=$(sbatch --parsable -n1 -t 30 --wrap true)
wait_reason "$long" Priority
[ "$(state_of "$wide")" = PENDING ] || fail "the wide job left PENDING: $(state_of "$wide")"

backfilled() { sdiag | sed -n 's/^\tTotal backfilled jobs (since last slurm start): //p'; }
poll_until 30 1 backfilled || fail "sdiag: backfilled jobs: $(sdiag)"
out=$(sdiag)
grep -qxF $'\tTotal backfilled jobs (since last stats cycle start): 1' <<<"$out" || fail "sdiag: $out"
grep -qxF $'\tTotal backfilled heterogeneous job components: 0' <<<"$out" || fail "sdiag: $out"
grep -Eqx $'\tTotal cycles: [1-9][0-9]*' <<<"$out" || fail "sdiag: no backfill cycle counted: $out"
grep -Eqx $'\tLast cycle when: [A-Z][a-z]{2} .* \\([0-9]+\\)' <<<"$out" || fail "sdiag: last cycle when: $out"
grep -Eqx $'\tDepth Mean: [1-9][0-9]*' <<<"$out" || fail "sdiag: depth mean: $out"
grep -Eqx $'\tLast table size: [1-9][0-9]*' <<<"$out" || fail "sdiag: table size: $out"
# The section sits where Slurm prints it: after the main scheduler's, before the RPCs.
sed -n '/^Main schedule statistics/,/^Remote Procedure Call statistics by message type/p' <<<"$out" |
  finds -xF 'Backfilling stats' || fail "sdiag: Backfilling stats out of place: $out"

# The same figures on the metrics endpoint.
curl -sf "http://127.0.0.1:$port/metrics" > controller.prom || fail "no /metrics on port $port"
grep -qx 'slurm_scheduler_backfilled_jobs 1' controller.prom || fail "metrics: $(grep backfill controller.prom)"
grep -Eq '^slurm_scheduler_backfill_cycles [1-9]' controller.prom || fail "metrics: $(grep backfill controller.prom)"

# A reset by an operator clears them, as slurmctld's reset_stats(1).
[ "$(sdiag --reset)" = "Reset scheduling statistics" ] || fail "sdiag --reset"
scancel "$long"
wait_state "$long" CANCELLED
sdiag | finds -xF $'\tTotal backfilled jobs (since last slurm start): 0' || fail "sdiag after a reset: $(sdiag)"
pass "sdiag: Backfilling stats and the backfill metrics count a real backfill; a reset clears them"
