#!/usr/bin/env bash
# squeue, scontrol show job and sinfo with --at TIME show the cluster as the
# event log says it was then, read from the log beside the live controller;
# cairn log audit still tells the story of a job gone from squeue.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 1 2 1000

job=$(sbatch --parsable --wrap 'sleep 300')
wait_state "$job" RUNNING
sleep 1.1
then=$(date +%Y-%m-%dT%H:%M:%S)
sleep 1.1
scancel "$job"
wait_state "$job" CANCELLED

# Now: cancelled, the node idle again.
[ "$(squeue -h -t all -j "$job" -o %T)" = CANCELLED ] || fail "squeue now: $(squeue -t all -j "$job")"
[ "$(sinfo -h -o %T)" = idle ] || fail "sinfo now: $(sinfo)"

# Then: running, the node half allocated (mixed), and every view agrees.
[ "$(squeue --at "$then" -h -o '%i %T')" = "$job RUNNING" ] || fail "squeue --at $then: $(squeue --at "$then")"
show=$(scontrol show job "$job" --at "$then")
grep -q "JobState=RUNNING " <<<"$show" || fail "scontrol show job --at: $show"
grep -q "NodeList=n1" <<<"$show" || fail "scontrol show job --at has no node: $show"
[ "$(sinfo --at "$then" -h -o %T)" = mixed ] || fail "sinfo --at $then: $(sinfo --at "$then")"
scontrol --at "$then" show node n1 | finds "State=MIXED" || fail "scontrol show node --at: $(scontrol --at "$then" show node n1)"

# Before the cluster existed: nothing.
[ -z "$(squeue --at 2020-01-01T00:00:00 -h)" ] || fail "squeue before the first event shows jobs"

# Bad input: a clear error, exit 1, nothing changed.
if out=$(squeue --at yesterday-ish 2>&1); then fail "squeue accepted a bad --at"; fi
grep -q "Invalid time specification for --at" <<<"$out" || fail "bad --at message: $out"
if out=$(scontrol --at "$then" hold "$job" 2>&1); then fail "scontrol hold accepted --at"; fi

# The job's whole history stays in the log.
cairn log audit --job "$job" | finds JobCancelled || fail "audit has no JobCancelled"
echo "time_travel: all checks passed"
