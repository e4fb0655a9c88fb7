#!/usr/bin/env bash
# The controller died between a run's end (TIMEOUT, under a resubmission policy)
# and its resubmission: after a restart the job is resubmitted exactly once.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
mkdir -p "$work/state"
"$build/test/make_sample_log" --interrupted "$work/state/log" "$work" >/dev/null
start_cluster 1 2 1000
job=1
wait_state "$job" COMPLETED 30
[ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] || fail "restarts: $(sacct -j "$job" -X -n -P -o Restarts)"
grep -q "run 1" "slurm-$job.out" || fail "the resubmitted run did not see SLURM_RESTART_COUNT=1"
requeues() { cairn log dump --kind JobRequeued --job "$job" | wc -l; }
[ "$(requeues)" = 1 ] || fail "$(requeues) resubmissions, expected exactly 1"
# Another crash and restart changes nothing: the decision is in the log.
kill_hard "$(head -1 pids)"
restart_controller
# A job submitted after the restart that runs to its end proves the restarted controller's
# job actors had their moment to act on job 1.
later=$(sbatch --parsable -o /dev/null --wrap true)
wait_state "$later" COMPLETED
[ "$(requeues)" = 1 ] || fail "a second restart resubmitted again"
[ "$(state_of "$job")" = COMPLETED ] || fail "job is $(state_of "$job") after the second restart"
echo "resubmit_after_crash: all checks passed"
