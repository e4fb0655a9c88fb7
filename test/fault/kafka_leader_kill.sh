#!/usr/bin/env bash
# kill -9 of the partition leader during a submission storm, on 3 brokers
# (replication factor 3, min.insync.replicas=2, no unclean leader election): every
# acknowledged sbatch is in the log once the controller recovered (without a
# restart), none twice; submissions refused meanwhile said why.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
source "$(dirname "$0")/kafka_cluster.bash"
storm=${STORM:-400}  # submissions, from 4 submitters
start_kafka_cluster 3
start_cluster 1 2 1000
controller=$(head -1 pids)
leader=$(kafka_leader)

start_submission_storm "$storm" sbatch --parsable -H --wrap true
broker kill --node "$leader"
wait
[ -e "/proc/$controller" ] || fail "the controller died with the leader"
new_leader=$(kafka_leader)
[ "$new_leader" != "$leader" ] || fail "partition 0 is still led by the killed broker $leader"
after=""
for _ in $(seq 60); do after=$(sbatch --parsable -H --wrap true 2>/dev/null) && break; sleep 0.5; done
[ -n "$after" ] || fail "no submission accepted after the leader moved to broker $new_leader"
echo "$after" >>acked.after
broker restart --node "$leader"

check_acknowledged_logged_once
squeue -h -t all -o %i | sort > known.txt
missing=$(comm -23 acked.txt known.txt)
[ -z "$missing" ] || fail "acknowledged but unknown to the controller: $missing"
refused=$(cat refused.* | grep -c . || true)
if [ "$refused" -gt 0 ]; then
  grep -v "not durable" refused.* | finds . && fail "a refusal that does not say why: $(grep -v 'not durable' refused.* | head -3)"
fi
echo "kafka_leader_kill: $(wc -l <acked.txt) acknowledged, $refused refused while broker $leader was down: all checks passed"
