#!/usr/bin/env bash
# Creates Cairn's event-log topic with the settings an audit log needs: never
# expired (the log is the source of truth, not a cache), every record on
# REPLICAS brokers with REPLICAS-1 (2 of 3) in sync before it counts as
# written, no unclean leader election. One partition per controller shard.
# usage: create-topic.sh BOOTSTRAP [TOPIC] [PARTITIONS] [REPLICAS]
#   compose:    docker compose -f deploy/kafka/compose.yaml exec kafka1 bash -c "$(cat deploy/kafka/create-topic.sh)" _ kafka1:9092
#   kubernetes: kubectl exec -n cairn kafka-0 -- bash -c "$(cat deploy/kafka/create-topic.sh)" _ kafka-0.kafka:9092
# Then: EventLog=kafka:BOOTSTRAP/TOPIC and KafkaPartitions=PARTITIONS in cairn.conf.
set -euo pipefail
bootstrap=${1:?usage: create-topic.sh BOOTSTRAP [TOPIC] [PARTITIONS] [REPLICAS]}
topic=${2:-cairn.events}
partitions=${3:-1}
replicas=${4:-3}
tool=$(command -v kafka-topics.sh || command -v kafka-topics || true)
[ -n "$tool" ] || [ ! -x /opt/kafka/bin/kafka-topics.sh ] || tool=/opt/kafka/bin/kafka-topics.sh  # the apache/kafka image
[ -n "$tool" ] || { echo "create-topic.sh: kafka-topics(.sh) from the Kafka distribution is not on PATH" >&2; exit 1; }
min_isr=$(( replicas > 1 ? replicas - 1 : 1 ))
"$tool" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$topic" \
  --partitions "$partitions" --replication-factor "$replicas" \
  --config retention.ms=-1 --config retention.bytes=-1 --config cleanup.policy=delete \
  --config min.insync.replicas="$min_isr" --config unclean.leader.election.enable=false
"$tool" --bootstrap-server "$bootstrap" --describe --topic "$topic"
