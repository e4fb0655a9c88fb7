#!/usr/bin/env bash
# What queries answer and to whom: scripts and environments only to their owner and operators,
# read off the socket as a hostile client would; PrivateData=jobs,usage; listings in pages;
# finished jobs leave the controller MinJobAge after their end and sacct finds them in the
# job history, across a kill -9 of the controller.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
probe="$(cd "$build" && pwd)/test/query_probe"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  skip_test "needs root and setpriv to query as other users"
fi
other=(setpriv --reuid=65534 --regid=65534 --clear-groups --)   # nobody
third=(setpriv --reuid=64999 --regid=64999 --clear-groups --)   # a uid without a passwd entry

start_cluster_with 1 2 1000 "MinJobAge=2"
socket="unix:$(sed -n 's/^ControllerSocket=//p' "$CAIRN_CONF")"
chmod 755 "$work"
private_dir=$(mktemp -d /tmp/cairn-it-nobody-XXXXXX)
chown 65534:65534 "$private_dir"
at_exit_after_stop 'rm -rf "$private_dir"'

# 1. root's held job with a secret in its script and environment.
root_job=$(T=root-s3cr3t-env sbatch --parsable -H --wrap 'echo root-s3cr3t-script')
# nobody's own held job, submitted from a directory of its own.
nobody_job=$(cd "$private_dir" && "${other[@]}" env T=nobody-s3cr3t-env "$bin/sbatch" --parsable -H \
  --wrap 'echo nobody-s3cr3t-script')

answer=$("${other[@]}" "$probe" "$socket")
grep -q "jobId = $root_job" <<<"$answer" || fail "nobody does not see root's job at all: $answer"
grep -q "root-s3cr3t" <<<"$answer" && fail "nobody read root's script or environment off the socket"
grep -q "nobody-s3cr3t-script" <<<"$answer" || fail "nobody does not get its own script when asking for it"
grep -q "nobody-s3cr3t-env" <<<"$answer" || fail "nobody does not get its own environment when asking for it"
answer=$("$probe" "$socket")
grep -q "root-s3cr3t-env" <<<"$answer" || fail "root (an operator) does not get a job's environment"
grep -q "nobody-s3cr3t-script" <<<"$answer" || fail "root (an operator) does not get another user's script"
# Without asking, not even the owner gets them: squeue's answers carry no script.
"${other[@]}" "$bin/squeue" -h -o '%i %u' | finds "^$root_job root$" || fail "nobody's squeue misses root's job"

# 2. PrivateData=jobs,usage: other users' jobs are not even listed.
# The controller `cairn local up` started, then each one the test restarts.
controller_pid() { if [ ${#extra_pids[@]} -gt 0 ]; then echo "${extra_pids[-1]}"; else head -1 pids; fi; }
kill_hard "$(controller_pid)"
echo "PrivateData=jobs,usage" >> "$CAIRN_CONF"
restart_controller
shown=$("${other[@]}" "$bin/squeue" -h -o %i | sort | tr '\n' ' ')
[ "$shown" = "$nobody_job " ] || fail "with PrivateData=jobs nobody's squeue shows '$shown'"
"${other[@]}" "$bin/scontrol" show job "$root_job" >/dev/null 2>&1 && fail "nobody's scontrol shows root's job"
shown=$("${other[@]}" "$bin/sacct" -a -X -n -o JobID | tr -d ' ' | sort | tr '\n' ' ')
[ "$shown" = "$nobody_job " ] || fail "with PrivateData=usage nobody's sacct -a shows '$shown'"
[ "$(squeue -h -o %i | wc -l)" = 2 ] || fail "root (an operator) no longer sees every job"
answer=$("${third[@]}" "$probe" "$socket")
grep -q "jobId" <<<"$answer" && fail "a third user reads jobs with PrivateData=jobs: $answer"
sed -i '/^PrivateData=/d' "$CAIRN_CONF"
kill_hard "$(controller_pid)"
restart_controller

# 3. sacct without -a shows the caller's own jobs, as Slurm's does; with -j anyone's.
shown=$("${other[@]}" "$bin/sacct" -X -n -o JobID | tr -d ' ' | tr '\n' ' ')
[ "$shown" = "$nobody_job " ] || fail "nobody's plain sacct shows '$shown'"
"${other[@]}" "$bin/sacct" -X -n -o JobID -j "$root_job" | finds "$root_job" || fail "sacct -j misses root's job"

# 4. A listing longer than a page (1,000 jobs) comes back whole, once each.
for _ in $(seq 1200); do sbatch -H -Q --wrap true >/dev/null; done
count=$(squeue -h -o %i | sort -u | wc -l)
[ "$count" = 1202 ] || fail "squeue listed $count distinct jobs, expected 1202"
[ "$(squeue -h -o %i | wc -l)" = 1202 ] || fail "squeue listed a job twice"
[ "$(sacct -a -X -n -o JobID | wc -l)" = 1202 ] || fail "sacct -a did not list 1202 jobs"
scancel -u root -t PENDING || fail "scancel -u root -t PENDING failed"
left=$(squeue -h -t PD -o %i | tr '\n' ' ')
[ "$left" = "$nobody_job " ] || fail "pending after scancel -u root -t PENDING: '$left' (only nobody's $nobody_job should be)"

# 5. MinJobAge=2: a finished job leaves squeue and scontrol, sacct still has it, from the history.
done_job=$(sbatch --parsable --wrap 'echo done')
wait_state "$done_job" COMPLETED
poll_until 30 1 sh -c "scontrol show job $done_job >/dev/null 2>&1; echo \$?" ||
  fail "job $done_job is still in the controller's state after MinJobAge"
out=$(scontrol show job "$done_job" 2>&1) && fail "scontrol still shows job $done_job"
grep -q "Invalid job id specified" <<<"$out" || fail "scontrol does not say the id is gone: $out"
[ "$(state_of "$done_job")" = COMPLETED ] || fail "sacct lost job $done_job after its purge"
[ -n "$(ls "$work"/state/history/history-* 2>/dev/null)" ] || fail "no job history file under StateSaveLocation"
[ "$(stat -c %a "$work/state/history")" = 700 ] || fail "the job history directory is not 0700"
answer=$("$probe" "$socket" history)
grep -q "jobId = $done_job" <<<"$answer" || fail "the history does not answer job $done_job"
grep -q "s3cr3t\|echo done" <<<"$answer" && fail "the job history keeps scripts or environments"
answer=$("${other[@]}" "$probe" "$socket" history)
grep -q "jobId = $done_job" <<<"$answer" || fail "nobody cannot read the history without PrivateData"
# It survives a kill -9 and a restart from a snapshot or a replay alike.
kill_hard "$(controller_pid)"
restart_controller
[ "$(state_of "$done_job")" = COMPLETED ] || fail "sacct lost job $done_job after a controller restart"
scontrol show job "$done_job" >/dev/null 2>&1 && fail "the purged job came back after a restart"
cairn log verify --log "$work/state/log" >/dev/null || fail "cairn log verify fails after purges"

echo "query_privacy: all checks passed"
