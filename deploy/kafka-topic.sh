#!/usr/bin/env bash
# Creates the event-log topic on a real Kafka cluster: one partition per shard,
# replicated, never expired (the log is the source of truth, not a cache).
# usage: deploy/kafka-topic.sh BOOTSTRAP [TOPIC] [PARTITIONS] [REPLICAS]
# Then: EventLog=kafka:BOOTSTRAP/TOPIC and KafkaPartitions=PARTITIONS in cairn.conf.
set -euo pipefail
bootstrap=${1:?usage: kafka-topic.sh BOOTSTRAP [TOPIC] [PARTITIONS] [REPLICAS]}
topic=${2:-cairn.events}
partitions=${3:-1}
replicas=${4:-3}
tool=$(command -v kafka-topics.sh || command -v kafka-topics || true)
[ -n "$tool" ] || { echo "kafka-topic.sh: kafka-topics(.sh) from the Kafka distribution is not on PATH" >&2; exit 1; }
min_isr=$(( replicas > 1 ? replicas - 1 : 1 ))
"$tool" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$topic" \
  --partitions "$partitions" --replication-factor "$replicas" \
  --config retention.ms=-1 --config retention.bytes=-1 --config cleanup.policy=delete \
  --config min.insync.replicas="$min_isr" --config unclean.leader.election.enable=false
"$tool" --bootstrap-server "$bootstrap" --describe --topic "$topic"
