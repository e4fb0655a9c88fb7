#!/usr/bin/env bash
# The log-damage matrix. A real controller and real jobs make a small file log
# (16K segments, so it has several), stopped cleanly ("clean"), then started
# again, given more work and killed with -9 ("kill -9"). Each damage is done to a
# copy; `cairn log verify` on the damaged copy and a controller started on it
# (under a timeout: a hung controller fails the test) must give:
#
#   damage                                      image    cairn log verify   cairnctld
#   none                                        clean    sound              starts
#   none                                        kill -9  sound              starts (a crash is not a loss)
#   truncate the tail of the active segment     kill -9  sound (a write     starts without that record
#                                                        cut short)
#   truncate the tail of the active segment     clean    damaged            refuses; --accept-log-loss: starts
#                                                                           without that record
#   flip a byte in an older record              clean    damaged            refuses, even with --accept-log-loss
#   flip a byte in the last record of a closed  clean    damaged            refuses, even with --accept-log-loss
#     (not the newest) segment
#   flip a byte in the last record of the       clean    damaged            refuses; --accept-log-loss: starts
#     newest segment                                                        without that record
#   delete the oldest segment                   clean    damaged, names     refuses naming the offsets, even
#                                                        the offsets        with --accept-log-loss
#   delete the newest segment                   both     damaged            refuses; --accept-log-loss: starts
#   empty the newest segment                    both     damaged            refuses; --accept-log-loss: starts
#   delete META                                 clean    damaged            refuses; --accept-log-loss: starts
#                                                                           with every record, META rebuilt
#   delete all segments                         clean    damaged            refuses; --accept-log-loss: starts
#                                                                           empty, job ids go on
#   delete the shard's directory (p0)           clean    damaged            as for all segments
#
# A refusal exits 1, names what is missing and, for a loss one may accept, the
# option; the damaged files are left as they were.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
[ -x "$bin/cairnctld" ] && [ -x "$bin/cairn" ] || skip_test "binaries not built"
kTimeout=60  # seconds a controller may take to refuse or to answer: far more than it needs

gone() { exited "$1"; }  # pid
stop_gracefully() {  # pid
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq $((kTimeout * 20))); do gone "$1" && return 0; sleep 0.05; done
  fail "process $1 did not stop on SIGTERM within $kTimeout s"
}

# ---- the log: a clean stop, then a kill -9
start_cluster_with 1 2 1000 "EventLogSegmentSize=16K"
for _ in $(seq 12); do last_job=$(sbatch --parsable --wrap true); done
wait_state "$last_job" COMPLETED 60
controller=$(head -1 pids)
stop_gracefully "$controller"
cairn local down --dir "$work" >/dev/null
grep -qx "writer closed" state/log/META || fail "a clean stop did not describe the log as closed: $(cat state/log/META)"
[ "$(ls state/log/p0/*.seg | wc -l)" -ge 3 ] || fail "the matrix needs 3 segments or more: $(ls state/log/p0)"
cp -a state/log "$work/clean"

restart_controller
for _ in 1 2 3; do sbatch --parsable -H --wrap true >/dev/null; done
kill_hard "${extra_pids[-1]}"
grep -qx "writer open" state/log/META || fail "after kill -9 META should say its writer is open: $(cat state/log/META)"
cp -a state/log "$work/kill9"

# ---- helpers for one case: a copy of an image, damaged, with a configuration of its own
case_dir=
new_case() {  # name image
  case_dir=$work/case-$1
  mkdir -p "$case_dir/state"
  cp -a "$work/$2" "$case_dir/log"
  cat >"$case_dir/cairn.conf" <<EOF
ClusterName=local
StateSaveLocation=$case_dir/state
EventLog=file:$case_dir/log
ControllerSocket=$case_dir/ctl.sock
ControllerPort=0
EventLogSegmentSize=16K
ReconcileTimeout=3600
NodeTimeout=3600
NodeName=n1 CPUs=2 RealMemory=1000
PartitionName=debug Nodes=ALL Default=YES MaxTime=UNLIMITED
EOF
}
segments() { ls "$case_dir"/log/p0/*.seg; }
oldest() { segments | head -1; }
newest() { segments | tail -1; }
flip_byte() {  # file position
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $((byte ^ 0x5A)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
verify_out=
verify() {  # log dir: sets verify_out, returns verify's status
  set +e; verify_out=$("$bin/cairn" log verify --log "$1" 2>&1); local rc=$?; set -e
  return $rc
}
last_offset() {  # log dir: the last offset verify finds ("p0: offsets 0..N in ...")
  verify "$1" || true
  sed -n 's/^p0: offsets 0\.\.\([0-9]*\) in .*/\1/p' <<<"$verify_out"
}
data_end() {  # log dir: where the records of the newest segment end
  verify "$1" || true
  sed -n 's/^p0: .*(newest p0\/[0-9]*\.seg: \([0-9]*\) bytes of records.*/\1/p' <<<"$verify_out"
}
expect_verify_sound() {  # [text]
  verify "$case_dir/log" || fail "$case_dir: cairn log verify found damage: $verify_out"
  grep -q "two replays identical" <<<"$verify_out" || fail "$case_dir: verify: $verify_out"
  [ -z "${1:-}" ] || finds -F -- "$1" <<<"$verify_out" || fail "$case_dir: verify did not say '$1': $verify_out"
}
expect_verify_damaged() {  # text
  if verify "$case_dir/log"; then fail "$case_dir: cairn log verify found no damage: $verify_out"; fi
  grep '^DAMAGED: ' <<<"$verify_out" | finds -F -- "$1" || fail "$case_dir: verify did not say 'DAMAGED: ...$1': $verify_out"
  grep -q "^FAILED: the event log is damaged or incomplete" <<<"$verify_out" || fail "$case_dir: verify: $verify_out"
}
fingerprint() { (cd "$case_dir/log" && md5sum META p0/*.seg 2>/dev/null || true); }
expect_refusal() {  # text [cairnctld options...]: exits 1 at once, says why, changes nothing
  local text=$1; shift
  local before out rc
  before=$(fingerprint)
  set +e; out=$(timeout "$kTimeout" "$bin/cairnctld" --conf "$case_dir/cairn.conf" "$@" 2>&1); rc=$?; set -e
  [ "$rc" != 124 ] || fail "$case_dir: the controller hung (no exit within $kTimeout s): $out"
  [ "$rc" = 1 ] || fail "$case_dir: the controller exited $rc, expected a refusal (1): $out"
  grep -qF -- "$text" <<<"$out" || fail "$case_dir: the refusal did not say '$text': $out"
  grep -q "refusing to start" <<<"$out" || fail "$case_dir: $out"
  [ "$(fingerprint)" = "$before" ] || fail "$case_dir: a refused start changed the log"
  refusal=$out
}
expect_loss_refusal() {  # text: a loss one may accept: the refusal names the option
  expect_refusal "$1"
  grep -qF -- "holds less than it held" <<<"$refusal" || fail "$case_dir: $refusal"
  grep -qF -- "start cairnctld with --accept-log-loss" <<<"$refusal" || fail "$case_dir: no option named: $refusal"
}
expect_corruption_refusal() {  # text: refused with --accept-log-loss too
  expect_refusal "$1"
  grep -qF -- "corrupt event log" <<<"$refusal" || fail "$case_dir: $refusal"
  expect_refusal "$1" --accept-log-loss
}
ctl_pid=
expect_start() {  # [cairnctld options...]: starts and answers; stopped again by the caller
  "$bin/cairnctld" --conf "$case_dir/cairn.conf" "$@" >"$case_dir/cairnctld.log" 2>&1 &
  ctl_pid=$!
  extra_pids+=("$ctl_pid")
  for _ in $(seq $((kTimeout * 20))); do
    CAIRN_CONF=$case_dir/cairn.conf squeue -h >/dev/null 2>&1 && return 0
    gone "$ctl_pid" && fail "$case_dir: the controller exited: $(tail -5 "$case_dir/cairnctld.log")"
    sleep 0.05
  done
  fail "$case_dir: the controller does not answer within $kTimeout s: $(tail -5 "$case_dir/cairnctld.log")"
}
stop_case_controller() {
  stop_gracefully "$ctl_pid"
  grep -qx "writer closed" "$case_dir/log/META" || fail "$case_dir: not closed cleanly: $(cat "$case_dir/log/META")"
}
next_job_id() { CAIRN_CONF=$case_dir/cairn.conf sbatch --parsable -H --wrap true; }

clean_last=$(last_offset "$work/clean")
kill9_last=$(last_offset "$work/kill9")
[ -n "$clean_last" ] && [ -n "$kill9_last" ] && [ "$kill9_last" -gt "$clean_last" ] ||
  fail "the images hold offsets 0..$clean_last (clean) and 0..$kill9_last (kill -9)"

# ---- the matrix
new_case intact-clean clean
expect_verify_sound
expect_start
[ "$(next_job_id)" = $((last_job + 1)) ] || fail "$case_dir: job ids do not go on after $last_job"
stop_case_controller

new_case intact-kill9 kill9
expect_verify_sound
expect_start
grep -q "holds less\|accepting the loss" "$case_dir/cairnctld.log" && fail "$case_dir: a crash taken for a loss"
stop_case_controller

new_case truncate-tail-kill9 kill9
truncate -s $(($(data_end "$case_dir/log") - 7)) "$(newest)"
expect_verify_sound "a write in progress or cut short"
expect_start
grep -q "torn record at byte .*; dropping .* bytes that were never acknowledged" "$case_dir/cairnctld.log" ||
  fail "$case_dir: the torn record was not reported: $(cat "$case_dir/cairnctld.log")"
stop_case_controller
# A start appends two records after the prefix (one record fewer): its epoch claim, and the
# configuration, since each case's cairn.conf names the case's own directories.
[ "$(last_offset "$case_dir/log")" = "$((kill9_last + 1))" ] || fail "$case_dir: holds 0..$(last_offset "$case_dir/log")"

new_case truncate-tail-clean clean
truncate -s -7 "$(newest)"
expect_verify_damaged "p0/$(basename "$(newest)") at byte"
expect_loss_refusal "so this is damage to acknowledged records, not a write cut short: offset $clean_last would be lost"
expect_start --accept-log-loss
grep -q "accepting the loss, as asked" "$case_dir/cairnctld.log" || fail "$case_dir: the accepted loss was not logged"
stop_case_controller
[ "$(last_offset "$case_dir/log")" = "$((clean_last + 1))" ] || fail "$case_dir: holds 0..$(last_offset "$case_dir/log")"
expect_verify_sound

new_case flip-older-record clean
flip_byte "$(oldest)" 100
expect_verify_damaged "p0/00000000000000000000.seg at byte"
expect_corruption_refusal "p0/00000000000000000000.seg at byte"

new_case flip-last-record-of-closed-segment clean
flip_byte "$(oldest)" $(($(stat -c %s "$(oldest)") - 1))
expect_verify_damaged "at the end of a segment that is not the last"
expect_corruption_refusal "at the end of a segment that is not the last, which a crash cannot damage"

new_case flip-last-record-of-newest-segment clean
flip_byte "$(newest)" $(($(stat -c %s "$(newest)") - 1))
expect_verify_damaged "payload checksum mismatch (record $clean_last)"
expect_loss_refusal "payload checksum mismatch (record $clean_last); META says the log held offsets 0..$clean_last"
expect_start --accept-log-loss
stop_case_controller
[ "$(last_offset "$case_dir/log")" = "$((clean_last + 1))" ] || fail "$case_dir: holds 0..$(last_offset "$case_dir/log")"

new_case delete-oldest-segment clean
second_base=$(basename "$(segments | sed -n 2p)" .seg)
rm "$(oldest)"
expect_verify_damaged "p0: offsets 0..$((10#$second_base - 1)) are missing"
expect_corruption_refusal "p0: offsets 0..$((10#$second_base - 1)) are missing: the oldest segment left is p0/$second_base.seg"

for image in clean kill9; do
  new_case delete-newest-segment-$image $image
  newest_name=$(basename "$(newest)")
  rm "$(newest)"
  # One offset or several ("offset N is missing" / "offsets N..M are missing"): segment sizes vary.
  [ $image = clean ] && what="missing: META says the log held offsets 0..$clean_last when it was closed cleanly" ||
    what="p0/$newest_name, the newest segment when its writer last started or rolled to a new segment, is missing"
  expect_verify_damaged "" && grep -qF -- "$what" <<<"$verify_out" || fail "$case_dir: verify: $verify_out"
  expect_loss_refusal "$what"
  expect_start --accept-log-loss
  [ "$(next_job_id)" -gt "$last_job" ] || fail "$case_dir: a job id was issued again"
  stop_case_controller

  new_case empty-newest-segment-$image $image
  : >"$(newest)"
  [ $image = clean ] && what="missing: META says the log held offsets 0..$clean_last when it was closed cleanly" ||
    what="is empty: a segment in use always holds its records or the zeros prepared for them"
  expect_verify_damaged "" && grep -qF -- "$what" <<<"$verify_out" || fail "$case_dir: verify: $verify_out"
  expect_loss_refusal "$what"
  expect_start --accept-log-loss
  stop_case_controller
done

new_case delete-meta clean
rm "$case_dir/log/META"
expect_verify_damaged "$case_dir/log/META is missing: what the log held is unknown"
expect_loss_refusal "$case_dir/log/META is missing: what the log held is unknown"
expect_start --accept-log-loss
stop_case_controller
# 0..clean_last, then the start's claim and configuration.
grep -q "^p0 records $((clean_last + 3)) " "$case_dir/log/META" || fail "$case_dir: META not rebuilt: $(cat "$case_dir/log/META")"
expect_verify_sound

new_case delete-all-segments clean
rm "$case_dir"/log/p0/*.seg
expect_verify_damaged "p0: no segment file is left: META says the log held offsets 0..$clean_last"
expect_loss_refusal "p0: no segment file is left: META says the log held offsets 0..$clean_last when it was closed cleanly"
expect_start --accept-log-loss
[ "$(next_job_id)" = $((last_job + 1)) ] || fail "$case_dir: job ids restarted after the loss"
stop_case_controller

new_case delete-shard-directory clean
rm -r "$case_dir/log/p0"
expect_verify_damaged "p0: its directory is missing"
expect_loss_refusal "p0: its directory is missing: META says the log held offsets 0..$clean_last"
expect_start --accept-log-loss
stop_case_controller

echo "log_damage: all checks passed"
