#!/usr/bin/env bash
# Two of three brokers killed: sbatch is refused with "not durable" (an answer from
# the controller, within the CLI's timeout) and nothing is acknowledged; the brokers
# come back: the same controller accepts submissions again, and the refused ones left
# no trace in the state or the log.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
source "$(dirname "$0")/kafka_cluster.bash"
start_site_on_three_brokers
leader=$(kafka_leader)
others=($(other_brokers "$leader"))
# The leader and one follower go: one replica is left, below min.insync.replicas=2.
broker kill --node "$leader"
broker kill --node "${others[0]}"
for attempt in 1 2 3; do
  set +e
  out=$(sbatch --parsable -H -J refused --wrap true 2>&1); rc=$?
  set -e
  [ "$rc" != 0 ] || fail "submission $attempt was acknowledged with two of three brokers down: $out"
  [[ "$out" == *"not durable"* ]] || fail "refusal $attempt does not say 'not durable': $out"
done
echo "refused with two of three brokers down: $out"
broker restart --node "$leader"
broker restart --node "${others[0]}"
again=""
for _ in $(seq 120); do again=$(sbatch --parsable -H -J again --wrap true 2>/dev/null) && break; sleep 0.5; done
[ -n "$again" ] || fail "no submission accepted after the brokers came back"
[ -e "/proc/$controller" ] || fail "the controller was restarted or died"
[ "$(head -1 pids)" = "$controller" ] || fail "another controller runs"
names=$(squeue -h -t all -o '%j' | sort | tr '\n' ' ')
[ "$names" = "again before " ] || fail "the state holds '$names', expected the jobs before and after only"
[ "$(cairn log dump --kind JobSubmitted --json | grep -c '"refused"')" = 0 ] || fail "a refused submission is in the log"
echo "kafka_quorum_loss: all checks passed"
