#!/usr/bin/env bash
# Two controllers start on the same shard at the same moment (RACE_ROUNDS rounds), on
# Apache Kafka (KAFKA_BROKERS brokers, 3 by default; one in `make test`). Each round,
# one exits 3 with a one-line "fenced:" reason (it lost the claim race, or the winner's
# claim fenced it), the other serves: its sbatch is acknowledged and in the log once,
# even when the loser had initialised the shard's transactional id after the winner's
# claim and so fenced the winner's producer (the winner initialises it again).
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
source "$(dirname "$0")/kafka_cluster.bash"
brokers=${KAFKA_BROKERS:-3}
rounds=${RACE_ROUNDS:-3}
start_kafka_cluster "$brokers"
start_cluster 1 2 1000
first=$(head -1 pids)
sbatch --parsable -H -J before --wrap true >/dev/null || fail "no submission before the race"
kill -TERM "$first"
for _ in $(seq 300); do exited "$first" && break; sleep 0.1; done
exited "$first" || fail "the first controller does not stop"

sed "s|^ControllerSocket=.*|ControllerSocket=$work/second.sock|" "$CAIRN_CONF" > second.conf
confs=("$CAIRN_CONF" "$work/second.conf")
reinitialised=0
for round in $(seq "$rounds"); do
  "$bin/cairnctld" --conf "${confs[0]}" >"race$round-0.log" 2>&1 &
  pid0=$!
  "$bin/cairnctld" --conf "${confs[1]}" >"race$round-1.log" 2>&1 &
  pid1=$!
  extra_pids+=("$pid0" "$pid1")
  loser=""
  for _ in $(seq 600); do
    if exited "$pid0"; then loser=0; break; fi
    if exited "$pid1"; then loser=1; break; fi
    sleep 0.1
  done
  [ -n "$loser" ] || fail "round $round: both controllers still run after 60 s (one must lose the claim race)"
  winner=$((1 - loser))
  pids=("$pid0" "$pid1")
  status=0
  wait "${pids[$loser]}" || status=$?
  [ "$status" = 3 ] || fail "round $round: the losing controller exited $status, not 3 (fenced): $(tail -3 "race$round-$loser.log")"
  [ "$(grep -c 'critical' "race$round-$loser.log")" = 1 ] ||
    fail "round $round: the loser did not give one reason: $(grep critical "race$round-$loser.log")"
  grep -q 'critical cairnctld: fenced: ' "race$round-$loser.log" ||
    fail "round $round: the loser's reason does not say it was fenced: $(tail -2 "race$round-$loser.log")"
  echo "round $round: the loser said: $(grep critical "race$round-$loser.log" | sed 's/.*critical cairnctld: //')"

  export CAIRN_CONF=${confs[$winner]}
  poll_until 60 ok bash -c "squeue -h >/dev/null 2>&1 && echo ok" || fail "round $round: the winner does not serve"
  id=$(sbatch --parsable -H -J "round$round" --wrap true) ||
    fail "round $round: the winner refused a submission: $(tail -3 "race$round-$winner.log")"
  exited "${pids[$winner]}" && fail "round $round: the winner exited after its submission"
  if grep -q 'lost the claim race to this one' "race$round-$winner.log"; then reinitialised=$((reinitialised + 1)); fi
  [ "$(logged_submissions | grep -cx "$id")" = 1 ] || fail "round $round: job $id is not in the log once"
  kill -TERM "${pids[$winner]}"
  status=0
  wait "${pids[$winner]}" || status=$?
  [ "$status" = 0 ] || fail "round $round: the winner exited $status on SIGTERM: $(tail -3 "race$round-$winner.log")"
done

# Durable: a controller started afresh replays every round's job (and the first one).
restart_controller
names=$(squeue -h -t all -o '%j' | sort | tr '\n' ' ')
expected=$( (echo before; for round in $(seq "$rounds"); do echo "round$round"; done) | sort | tr '\n' ' ')
[ "$names" = "$expected" ] || fail "after a restart the jobs are '$names', expected '$expected'"
echo "rounds in which the loser had fenced the winner's producer (and the winner initialised it again): $reinitialised of $rounds"
pass "kafka_claim_race ($brokers broker(s), $rounds rounds): all checks passed"
