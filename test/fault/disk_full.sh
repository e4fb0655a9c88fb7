#!/usr/bin/env bash
# A full disk under a live controller: its file log sits on a small tmpfs that the
# test fills. Submissions then fail with a clear error (and the agent's report of a
# job's end is refused too); the controller says so once, retries with backoff, and
# when space is freed writes again on its own: the job's end is recorded, sbatch
# works, and the log is sound. Needs root to mount the tmpfs.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
[ "$(id -u)" = 0 ] || skip_test "needs root to mount a small tmpfs to fill"
mnt=$work/disk
mkdir -p "$mnt"
mount -t tmpfs -o size=2m tmpfs "$mnt" 2>"$work/mount.err" || skip_test "cannot mount a tmpfs here: $(cat "$work/mount.err")"
at_exit_after_stop 'umount "$mnt" 2>/dev/null'

# 64K segments: prepared space (zeros ahead of the data) stays small, so a full disk shows soon.
start_cluster_with 1 2 1000 "EventLog=file:$mnt/log
EventLogSegmentSize=64K"
# A job that ends when told to: once the disk is full.
ended=$(sbatch --parsable -o /dev/null --wrap "while [ ! -e $work/go ]; do sleep 0.05; done")
wait_state "$ended" RUNNING

dd if=/dev/zero of="$mnt/filler" bs=4k status=none 2>/dev/null || true  # until the disk is full
big_script=$(head -c 12000 /dev/zero | tr '\0' '#')
refused=
for _ in $(seq 300); do
  set +e; out=$(sbatch --parsable -H -o /dev/null --wrap "true $big_script" 2>&1); rc=$?; set -e
  if [ "$rc" != 0 ]; then refused=$out; break; fi
done
[ -n "$refused" ] || fail "300 submissions of 12 KB went into a full 2 MB disk"
grep -q "No space left on device" <<<"$refused" || fail "the refused submission said: $refused"
# The agent's report of the job's end is refused as long as the disk is full.
touch "$work/go"
for _ in $(seq 600); do
  grep -q "JobId=$ended: the controller did not record its end" "$work/cairnd-n1.log" && break
  sleep 0.05
done
grep -q "JobId=$ended: the controller did not record its end" "$work/cairnd-n1.log" ||
  fail "the job's end was not refused while the disk was full: $(tail -3 "$work/cairnd-n1.log")"
[ "$(state_of "$ended")" = RUNNING ] || fail "job $ended is $(state_of "$ended") while its end could not be recorded"
for _ in 1 2 3; do
  if sbatch --parsable -H --wrap true >/dev/null 2>&1; then fail "a submission succeeded on a full disk"; fi
done

# The controller retried meanwhile and found no room: its own undone writes gave none back.
grep -q "writing again" "$work/cairnctld.log" && fail "the log wrote again before space was freed"
rm "$mnt/filler"
wait_state "$ended" COMPLETED 60  # the agent's retry lands once the log writes again
job=$(sbatch --parsable --wrap true) || fail "sbatch after space was freed"
wait_state "$job" COMPLETED

outages=$(grep -c "appends are refused until it can write again; retrying in" "$work/cairnctld.log" || true)
[ "$outages" = 1 ] || fail "the outage was logged $outages times: $(grep -c 'No space' "$work/cairnctld.log") lines"
grep -q "writing again after .* s; [0-9]* appends\? w.* refused meanwhile" "$work/cairnctld.log" ||
  fail "the recovery was not logged: $(tail -5 "$work/cairnctld.log")"
[ "$(grep -c "event log append failed" "$work/cairnctld.log")" = 1 ] || fail "the log actor repeated itself"

# Nothing acknowledged was lost, nothing refused was kept: the log replays cleanly.
controller=$(head -1 pids)
kill -TERM "$controller"
for _ in $(seq 1200); do
  [ -e "/proc/$controller" ] && [ "$(awk '{print $3}' "/proc/$controller/stat" 2>/dev/null)" != Z ] || break
  sleep 0.05
done
grep -qx "writer closed" "$mnt/log/META" || fail "the controller did not stop cleanly: $(cat "$mnt/log/META")"
out=$(cairn log verify --log "$mnt/log") || fail "cairn log verify after the outage: $out"
grep -q "two replays identical" <<<"$out" || fail "verify: $out"
[ "$(cairn log dump --log "$mnt/log" --job "$ended" --kind JobEnded | wc -l)" = 1 ] || fail "job $ended's end recorded twice"
echo "disk_full: all checks passed"
