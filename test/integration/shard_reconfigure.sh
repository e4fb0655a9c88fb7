#!/usr/bin/env bash
# scontrol reconfigure with several controllers (issue 17): A writes shard 0, B shard 1.
# Through B: forwarded to A, which records ConfigApplied (shard 0's event), and B reads its
# cairn.conf too; through A: A records it and B reads its file as well. Both show the new
# configuration; a bad file is refused through either, and changes nothing.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
local_up_args=(--shards 2)
start_cluster 2 2 1000
conf=$CAIRN_CONF

start_shard_owners
for log in ctl-a ctl-b; do
  wait_line "ready" "$work/$log.log" || fail "$log is not ready"
done
sed "s|^ControllerSocket=.*|ControllerSocket=$work/ctl-b.sock|" "$conf" > "$work/cairn-b.conf"
through_b() { CAIRN_CONF="$work/cairn-b.conf" "$@"; }
kill_wait() { "$@" scontrol show config | sed -n 's/^KillWait *= //p'; }
applied() { cairn log dump --kind ConfigApplied | wc -l; }
[ "$(kill_wait)" = "$(kill_wait through_b)" ] || fail "A and B differ before: $(kill_wait) and $(kill_wait through_b)"
before=$(applied)

sed -i 's/^KillWait=.*/KillWait=7/' "$conf"
grep -q '^KillWait=7' "$conf" || echo "KillWait=7" >> "$conf"
out=$(through_b scontrol reconfigure 2>&1) || fail "reconfigure through B refused: $out"
[ -z "$out" ] || fail "scontrol reconfigure printed '$out'"
[ "$(kill_wait)" = "7 sec" ] || fail "A's KillWait after a reconfigure through B: $(kill_wait)"
[ "$(kill_wait through_b)" = "7 sec" ] || fail "B's KillWait after a reconfigure through B: $(kill_wait through_b)"
[ "$(applied)" = $((before + 1)) ] || fail "ConfigApplied events: $(applied), expected $((before + 1))"
finds "recorded by shard 0's owner" "$work/ctl-b.log" || fail "B did not read its file"

sed -i 's/^KillWait=.*/KillWait=9/' "$conf"
scontrol reconfigure || fail "reconfigure through A refused"
[ "$(kill_wait)" = "9 sec" ] || fail "A's KillWait after a reconfigure through A: $(kill_wait)"
[ "$(kill_wait through_b)" = "9 sec" ] || fail "B's KillWait after a reconfigure through A: $(kill_wait through_b)"
[ "$(applied)" = $((before + 2)) ] || fail "ConfigApplied events: $(applied), expected $((before + 2))"

# A bad file: refused through B (by shard 0's owner, first), nothing changes anywhere.
cp "$conf" "$work/good.conf"
echo "KillWait=soon" >> "$conf"
if out=$(through_b scontrol reconfigure 2>&1); then fail "a bad cairn.conf was accepted through B"; fi
printf '%s\n' "$out" | finds "KillWait" || fail "the refusal does not name the key: $out"
cp "$work/good.conf" "$conf"  # the CLI reads it too
[ "$(kill_wait through_b)" = "9 sec" ] && [ "$(kill_wait)" = "9 sec" ] || fail "a refused reconfigure changed something"
[ "$(applied)" = $((before + 2)) ] || fail "a refused reconfigure was recorded"
pass "reconfigure with two owners: through either, A records it once and both read the file"
