#!/usr/bin/env bash
# Creates Cairn's event-log topic with the settings an audit log needs: kept
# forever, every record on 3 replicas with at least 2 in sync before it counts
# as written, no unclean leader election. One partition per controller shard.
# Usage: create-topic.sh BOOTSTRAP [TOPIC] [PARTITIONS]
#   compose:    create-topic.sh localhost:19092
#   kubernetes: kubectl exec -n cairn kafka-0 -- bash -c "$(cat create-topic.sh)" _ kafka-0.kafka:9092
set -euo pipefail
bootstrap=${1:?usage: create-topic.sh BOOTSTRAP [TOPIC] [PARTITIONS]}
topic=${2:-cairn.events}
partitions=${3:-1}
kafka_topics=$(command -v kafka-topics.sh || echo /opt/kafka/bin/kafka-topics.sh)
"$kafka_topics" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$topic" \
  --partitions "$partitions" --replication-factor 3 \
  --config retention.ms=-1 --config retention.bytes=-1 --config cleanup.policy=delete \
  --config min.insync.replicas=2 --config unclean.leader.election.enable=false
"$kafka_topics" --bootstrap-server "$bootstrap" --describe --topic "$topic"
