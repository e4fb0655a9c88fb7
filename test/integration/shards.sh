#!/usr/bin/env bash
# Two shards of the file log written by one controller (issue 17): a submission goes to the
# shard of its partition (p0: shard 0, p1: shard 1), its id names the shard (shard 1's start
# at 67108865), each shard is a sub-directory of the log; squeue, sacct and scontrol show the
# jobs of both; afterok works across shards; a restart replays both shards and goes on with
# each one's ids; `cairn shards` and `scontrol show shards` name each shard's writer; a
# configuration with fewer shards than the log is refused, naming Shards=.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
local_up_args=(--shards 2 --tcp)
start_cluster 2 2 1000
shard1_first=67108865
log_dir=$work/state/log
[ -d "$log_dir/p0" ] && [ -d "$log_dir/p1" ] || fail "the log has no shard directories p0 and p1: $(ls "$log_dir")"
grep -qx 'Shards=2' "$CAIRN_CONF" || fail "cairn local up --shards 2 wrote no Shards=2"

# 1. Submissions land in their partition's shard.
a=$(sbatch --parsable -p p0 -J zero -o /dev/null --wrap "while [ ! -e $work/go ]; do sleep 0.05; done")
b=$(sbatch --parsable -p p1 -J one -o /dev/null --wrap "while [ ! -e $work/go ]; do sleep 0.05; done")
d=$(sbatch --parsable -J dflt -o /dev/null --wrap true)  # the default partition, p0
[ "$a" -lt "$shard1_first" ] || fail "job $a of p0 has an id of shard 1"
[ "$d" -lt "$shard1_first" ] || fail "job $d of the default partition p0 has an id of shard 1"
[ "$b" = "$shard1_first" ] || fail "the first job of p1 is $b, expected $shard1_first"
cairn log dump --shard 0 --kind JobSubmitted | finds "job=$a " || fail "job $a is not in shard 0"
cairn log dump --shard 1 --kind JobSubmitted | finds "job=$b " || fail "job $b is not in shard 1"
[ -z "$(cairn log dump --shard 0 --job "$b")" ] || fail "shard 0 holds events of job $b"
[ -z "$(cairn log dump --shard 1 --job "$a")" ] || fail "shard 1 holds events of job $a"
wait_state "$a" RUNNING
wait_state "$b" RUNNING
[ "$(squeue -h -j "$b" -o '%P %N')" = "p1 n2" ] || fail "job $b runs on: $(squeue -h -j "$b" -o '%P %N')"
[ "$(squeue -h -j "$a" -o '%P %N')" = "p0 n1" ] || fail "job $a runs on: $(squeue -h -j "$a" -o '%P %N')"
# The node events of n2 are shard 1's.
cairn log dump --shard 1 --kind NodeRegistered | finds "node=n2 " || fail "n2's registration is not in shard 1"

# 2. The read side shows both shards, merged (and, below, their past: --at).
squeue -h -o '%i' | finds -x "$a" || fail "squeue misses job $a"
squeue -h -o '%i' | finds -x "$b" || fail "squeue misses job $b"
scontrol show job "$b" | finds "Partition=p1 " || fail "scontrol show job $b"
sinfo -h -o '%P %D' | finds '^p1 1$' || fail "sinfo: $(sinfo -h -o '%P %D')"

# 2b. ControllerAddr= may list several controllers: the CLI tries each in turn (over TCP, where
#     the socket is not there); nothing listens on 127.0.0.2.
sed -e "s|^ControllerSocket=.*|ControllerSocket=$work/nowhere.sock|" -e 's/^ControllerAddr=.*/ControllerAddr=127.0.0.2,127.0.0.1/' \
  "$CAIRN_CONF" > listed.conf
CAIRN_CONF=listed.conf squeue -h -o '%i' | finds -x "$b" || fail "squeue through the second ControllerAddr"
sed -i 's/^ControllerAddr=.*/ControllerAddr=127.0.0.2/' listed.conf
! CAIRN_CONF=listed.conf squeue -h >/dev/null 2>&1 || fail "squeue answered with no controller at ControllerAddr"

# 3. A dependency across shards: a job of shard 0 after one of shard 1, and the reverse.
after_b=$(sbatch --parsable -p p0 -o /dev/null -d "afterok:$b" --wrap true)
after_a=$(sbatch --parsable -p p1 -o /dev/null -d "afterok:$a" --wrap true)
wait_reason "$after_b" Dependency
wait_reason "$after_a" Dependency
sleep 1.1  # --at takes whole seconds: a moment strictly between the starts and the ends
then=$(date +%Y-%m-%dT%H:%M:%S)
sleep 1.1
touch "$work/go"
wait_state "$after_b" COMPLETED 60
wait_state "$after_a" COMPLETED 60
failing=$(sbatch --parsable -p p1 -o /dev/null --wrap 'exit 3')
never=$(sbatch --parsable -p p0 -o /dev/null -d "afterok:$failing" --wrap true)
wait_state "$failing" FAILED
wait_reason "$never" DependencyNeverSatisfied
sacct -n -X -P -o JobID | finds -x "$b" || fail "sacct misses job $b"
# The past of both shards: --at merges them too.
squeue --at "$then" -h -o '%i %T' | finds -x "$a RUNNING" || fail "squeue --at $then: $(squeue --at "$then")"
squeue --at "$then" -h -o '%i %T' | finds -x "$b RUNNING" || fail "squeue --at $then: $(squeue --at "$then")"
squeue --at "$then" -h -o '%i %T %r' | finds -x "$after_a PENDING Dependency" || fail "squeue --at: $(squeue --at "$then")"

# 3b. An array of shard 1: its tasks, split off as they start, get ids of shard 1.
array=$(sbatch --parsable -p p1 -a 1-3 -o /dev/null --wrap true)
[ "$array" -ge "$shard1_first" ] || fail "array $array of p1 has an id of shard 0"
for task in 1 2 3; do wait_state "${array}_$task" COMPLETED 60; done

# 4. cairn shards / scontrol show shards: one writer for both.
ctl=$(head -1 pids)
cairn shards | finds -E "^1 +cairnctld@[^ ]+:$ctl +$ctl +running +1 " || fail "cairn shards: $(cairn shards)"
scontrol show shards | finds "ShardId=1 Owner=cairnctld@.*:$ctl OwnerPid=$ctl OwnerState=running" ||
  fail "scontrol show shards: $(scontrol show shards)"

# 5. A restart replays both shards; each goes on with its own ids, none issued twice.
kill_hard "$ctl"
restart_controller
ctl=${extra_pids[-1]}
next1=$(sbatch --parsable -p p1 -o /dev/null --wrap true)
next0=$(sbatch --parsable -p p0 -o /dev/null --wrap true)
[ "$next1" -gt "$failing" ] && [ "$next1" -ge "$shard1_first" ] || fail "shard 1 issued $next1 after $failing"
[ "$next0" -gt "$never" ] && [ "$next0" -lt "$shard1_first" ] || fail "shard 0 issued $next0 after $never"
wait_state "$next1" COMPLETED 60
[ "$(state_of "$b")" = COMPLETED ] || fail "job $b after the restart: $(state_of "$b")"
cairn shards | finds -E "^0 +cairnctld@[^ ]+:$ctl +$ctl +running +2 " || fail "cairn shards after the restart: $(cairn shards)"
dups=$(cairn log dump --kind JobSubmitted | sed -n 's/.* job=\([0-9]*\) .*/\1/p' | sort | uniq -d)
[ -z "$dups" ] || fail "job ids submitted twice: $dups"

# Every job event is in its job id's shard (submissions, allocations, array tasks, ends...).
wrong=$(cairn log dump --shard 0 | sed -n 's/.* job=\([0-9]*\) .*/\1/p' | awk -v f="$shard1_first" '$1 >= f')
[ -z "$wrong" ] || fail "shard 0 holds events of jobs of shard 1: $wrong"
wrong=$(cairn log dump --shard 1 | sed -n 's/.* job=\([0-9]*\) .*/\1/p' | awk -v f="$shard1_first" '$1 < f')
[ -z "$wrong" ] || fail "shard 1 holds events of jobs of shard 0: $wrong"
cairn log verify > verify.out || fail "cairn log verify: $(cat verify.out)"
# Both shards' logs written meanwhile: the two replays still fold the same records.
verify_while_submitting 4
# What a wrong order or shard would give: an event for a job not yet known, an id outside its
# shard. (A JobCpusBound an agent reports after a job's quick end is refused live as in replay.)
! grep -Ei "anomaly at .*(unknown job|outside)" verify.out || fail "replaying both shards: $(cat verify.out)"

# 6. Bad input: fewer shards than the log has, and a Shard= that does not exist.
kill_hard "$ctl"
sed -e 's/^Shards=2$/Shards=1/' -e 's/ Shard=1 / /' "$CAIRN_CONF" > fewer.conf
rc=0
cairnctld --conf fewer.conf >fewer.out 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a controller with Shards=1 on a log of 2 shards exited $rc"
finds "Shards=1, but the event log .* has 2 shards (p0 to p1): a shard cannot be removed; set Shards=2" fewer.out ||
  fail "the refusal: $(cat fewer.out)"
sed -e 's/ Shard=1 / Shard=2 /' "$CAIRN_CONF" > missing.conf
rc=0
cairnctld --conf missing.conf >missing.out 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a controller with Shard=2 of Shards=2 exited $rc"
finds "partition 'p1' has Shard=2, but Shards=2 (line [0-9]*): shards are 0 to 1" missing.out ||
  fail "the refusal: $(cat missing.out)"
restart_controller
[ "$(state_of "$next0")" = COMPLETED ] || wait_state "$next0" COMPLETED 60
pass "shards: two shards on one controller, their ids, read side, cross-shard afterok, restart, bad input"
