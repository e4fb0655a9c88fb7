#!/usr/bin/env bash
# `cairn log` on a known history: golden outputs, filters, exit codes, torn and corrupt logs.
set -euo pipefail
source "$(dirname "$0")/finds.bash"
build=$1 source=$2
cairn=$build/bin/cairn
work=$(mktemp -d /tmp/cairn-log-cli-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$build/test/make_sample_log" "$work/log" >/dev/null
diff -u "$source/test/golden/log_dump.txt" <("$cairn" log dump --log "$work/log") || fail "dump differs from golden"
diff -u "$source/test/golden/log_dump_job1.json" <("$cairn" log dump --log "file:$work/log" --json --job 1) \
  || fail "json dump differs from golden"
diff -u "$source/test/golden/log_audit_job1.txt" <("$cairn" log audit --log "$work/log" --job 1) \
  || fail "audit differs from golden"

# Filters.
[ "$("$cairn" log dump --log "$work/log" --kind JobSubmitted | wc -l)" = 3 ] || fail "--kind"
[ "$("$cairn" log dump --log "$work/log" --from 5 --to 7 | wc -l)" = 3 ] || fail "--from/--to offsets"
[ "$("$cairn" log dump --log "$work/log" --from 2026-11-18T11:07:30 --kind JobEnded | wc -l)" = 1 ] || fail "--from time"
"$cairn" log verify --log "$work/log" | finds "two replays identical" || fail "verify"
"$cairn" log stats --log "$work/log" | finds "JobSubmitted  *3" || fail "stats"

# Bad input: clear error, non-zero exit.
expect_error() {  # expected-code expected-text command...
  local code=$1 text=$2; shift 2
  set +e; out=$("$@" 2>&1); rc=$?; set -e
  [ "$rc" = "$code" ] || fail "'$*' exited $rc, expected $code: $out"
  grep -q -- "$text" <<<"$out" || fail "'$*' said '$out', expected '$text'"
}
expect_error 1 "no event log at" "$cairn" log dump --log "$work/nothing"
expect_error 2 "unknown event kind 'Bogus'" "$cairn" log dump --log "$work/log" --kind Bogus
expect_error 2 "invalid value for --job" "$cairn" log audit --log "$work/log" --job abc
expect_error 1 "no events for job 99" "$cairn" log audit --log "$work/log" --job 99
expect_error 2 "unknown command 'frob'" "$cairn" log frob
expect_error 2 "unrecognized option '--bogus'" "$cairn" log dump --bogus

# A torn tail (a write in progress) is not an error for a reader: it stops before it.
segment=$(ls "$work"/log/p0/*.seg)
cp -r "$work/log" "$work/torn"
truncate -s -7 "$work/torn/p0/$(basename "$segment")"
[ "$("$cairn" log dump --log "$work/torn" | wc -l)" = 16 ] || fail "torn tail"
# ... but the log was closed cleanly, so verify knows the last record was acknowledged: damage.
expect_error 1 "DAMAGED: p0/$(basename "$segment") at byte [0-9]*: .*(record 16); META says the log held offsets 0..16" \
  "$cairn" log verify --log "$work/torn"

# Corruption in the middle is refused with the file and byte named.
cp -r "$work/log" "$work/corrupt"
printf '\xff' | dd of="$work/corrupt/p0/$(basename "$segment")" bs=1 seek=100 conv=notrunc status=none
expect_error 1 "corrupt event log: .*p0/$(basename "$segment") at byte [0-9]" "$cairn" log dump --log "$work/corrupt"
expect_error 1 "DAMAGED: p0/$(basename "$segment") at byte [0-9]" "$cairn" log verify --log "$work/corrupt"

# A missing META: readers still read the segments, verify says it is missing.
cp -r "$work/log" "$work/no-meta"
rm "$work/no-meta/META"
[ "$("$cairn" log dump --log "$work/no-meta" | wc -l)" = 17 ] || fail "dump without META"
expect_error 1 "DAMAGED: $work/no-meta/META is missing" "$cairn" log verify --log "$work/no-meta"
echo "log_cli: all checks passed"
