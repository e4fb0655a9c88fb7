#!/usr/bin/env bash
# The event log's topic deleted under a running controller (3 brokers): submissions
# are refused with an error that says so, never acknowledged; a controller started on
# the missing topic says which key to change; a topic of the wrong partition count too.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
source "$(dirname "$0")/kafka_cluster.bash"
start_site_on_three_brokers
"$bin/../test/kafka_delete_topic" "$kafka_bootstrap" cairn.events || fail "cannot delete the topic"
for attempt in 1 2 3; do
  set +e
  out=$(sbatch --parsable -H -J lost --wrap true 2>&1); rc=$?
  set -e
  [ "$rc" != 0 ] || fail "submission $attempt acknowledged on a deleted topic: $out"
  [[ "$out" == *"not durable"*"topic cairn.events does not exist"* ]] || fail "refusal $attempt does not say why: $out"
done
echo "refusal on a deleted topic: $out"
# A controller started now: one line naming the topic and the keys, and it does not serve.
cairn local down --dir "$work" >/dev/null
set +e
timeout 60 "$bin/cairnctld" --conf "$CAIRN_CONF" > restart.log 2>&1; rc=$?
set -e
[ "$rc" != 0 ] || fail "a controller started on a missing topic"
grep -q "topic cairn.events does not exist.*KafkaTopic=" restart.log || fail "no clear error: $(tail -3 restart.log)"
# A topic of 2 partitions where KafkaPartitions=1 is configured.
cairn kafka create-topic "$kafka_bootstrap" cairn.events 2 3 >/dev/null || fail "cannot create the topic again"
echo "KafkaPartitions=1" >> "$CAIRN_CONF"
set +e
timeout 60 "$bin/cairnctld" --conf "$CAIRN_CONF" > partitions.log 2>&1; rc=$?
set -e
[ "$rc" != 0 ] || fail "a controller started on a topic of the wrong partition count"
grep -q "has 2 partitions but KafkaPartitions=1" partitions.log || fail "no clear error: $(tail -3 partitions.log)"
echo "kafka_topic_deleted: all checks passed"
