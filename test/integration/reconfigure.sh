#!/usr/bin/env bash
# scontrol reconfigure and SIGHUP with real daemons: scontrol show config and show daemons from
# the running controller; a node and a partition added to cairn.conf, the new node's agent
# registering and a job running in the new partition; a partition's MaxTime lowered live (a
# longer job then waits with PartitionTimeLimit, as Slurm's default EnforcePartLimits=NO has
# it); ClusterName changed (refused with the key, nothing changed); a syntax error (refused with
# its line and key); a burst-buffer pool added and resized; SIGHUP to the controller's PID doing
# what reconfigure does; --at seeing the configuration in force then; a restart of the
# controller keeping the reconfigured state (and recording a file changed while it was down);
# scontrol setdebug debug making debug lines appear in the controller's log, and a user's
# setdebug and reconfigure refused.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

conf=$CAIRN_CONF
controller=$(sed -n 1p "$work/pids")
partition_exists() { scontrol show partition "$1" >/dev/null 2>&1 && echo yes || echo no; }

# 1. show config and show daemons, from the controller.
shown=$(scontrol show config)
head -1 <<<"$shown" | grep -Eq '^Configuration data as of [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}$' ||
  fail "show config header: $(head -1 <<<"$shown")"
for line in "ClusterName             = local" "KillWait                = 2 sec" "SLURM_CONF              = $conf" \
            "SlurmctldDebug          = info" "SlurmctldPort           = 0" "MailProg                = /bin/mail"; do
  grep -qxF "$line" <<<"$shown" || fail "show config lacks '$line': $shown"
done
[ "$(tail -1 <<<"$shown")" = "Slurmctld(primary) at 127.0.0.1 is UP" ] || fail "show config ping: $(tail -2 <<<"$shown")"
# The local cluster's nodes (n1, n2) have no NodeAddr naming this host: by the configuration, as
# Slurm reads it, only the controller runs here (Slurm's trailing blank kept).
[ "$(scontrol show daemons)" = "slurmctld " ] || fail "show daemons: '$(scontrol show daemons)'"

# 2. A node and a partition added, KillWait changed: the new agent registers, a job runs there.
before_adding=$(( $(date +%s) + 1 ))
while [ "$(date +%s)" -le "$before_adding" ]; do sleep 0.1; done
mkdir -p "$work/bb"
cat >>"$conf" <<EOF2
NodeName=n3 CPUs=2 RealMemory=1000
PartitionName=extra Nodes=n3 MaxTime=30
BurstBuffer=Pool=fast Capacity=1G Path=$work/bb
EOF2
sed -i 's/^KillWait=2$/KillWait=3/' "$conf"
out=$(scontrol reconfigure 2>&1) || fail "reconfigure refused: $out"
[ -z "$out" ] || fail "scontrol reconfigure printed '$out'"
[ "$(partition_exists extra)" = yes ] || fail "partition extra not there after reconfigure"
scontrol show config | finds -xF "KillWait                = 3 sec" || fail "KillWait not changed live"
scontrol show burstbuffer | finds "PoolName\[0\]=fast .*TotalSpace=1G " || fail "pool not added: $(scontrol show burstbuffer)"
restart_agent n3
wait_registrations n3 1
job=$(sbatch --parsable -p extra --wrap 'echo "on $SLURM_JOB_NODELIST"')
wait_state "$job" COMPLETED
[ "$(cat "slurm-$job.out")" = "on n3" ] || fail "job $job ran on '$(cat "slurm-$job.out")', expected n3"
cairn log dump | finds "ConfigApplied" || fail "no ConfigApplied event in the log"
before_lowering=$(( $(date +%s) + 1 ))
while [ "$(date +%s)" -le "$before_lowering" ]; do sleep 0.1; done  # the clock passes the instant --at asks

# 3. debug's MaxTime lowered live: a longer job waits with PartitionTimeLimit, a shorter one runs.
sed -i 's/^PartitionName=debug Nodes=ALL Default=YES MaxTime=UNLIMITED$/PartitionName=debug Nodes=ALL Default=YES MaxTime=5/' "$conf"
sed -i 's/^BurstBuffer=Pool=fast Capacity=1G /BurstBuffer=Pool=fast Capacity=2G /' "$conf"
scontrol reconfigure || fail "reconfigure of MaxTime refused"
scontrol show burstbuffer | finds "PoolName\[0\]=fast .*TotalSpace=2G " || fail "pool not resized: $(scontrol show burstbuffer)"
scontrol show partition debug | finds "MaxTime=00:05:00 " || fail "MaxTime not lowered: $(scontrol show partition debug)"
long=$(sbatch --parsable -t 10 --wrap true)
wait_reason "$long" PartitionTimeLimit
short=$(sbatch --parsable -t 2 --wrap true)
wait_state "$short" COMPLETED
scancel "$long"
# --at: the partition as it was before the change.
then=$(date -d "@$before_lowering" +%Y-%m-%dT%H:%M:%S)
scontrol --at "$then" show partition debug | finds "MaxTime=UNLIMITED " ||
  fail "show partition --at $then: $(scontrol --at "$then" show partition debug)"
scontrol --at "$then" show config | finds -xF "KillWait                = 3 sec" || fail "show config --at $then"
# The burst-buffer pool as it was: 1G before the resize; absent before it was added.
scontrol --at "$then" show burstbuffer | finds "PoolName\[0\]=fast .*TotalSpace=1G " ||
  fail "show burstbuffer --at $then: $(scontrol --at "$then" show burstbuffer)"
scontrol show burstbuffer | finds "PoolName\[0\]=fast .*TotalSpace=2G " || fail "the pool now: $(scontrol show burstbuffer)"
# Before the additions, neither extra nor n3 (the configuration in force then, from the log).
early=$(date -d "@$before_adding" +%Y-%m-%dT%H:%M:%S)
sinfo --at "$early" -h -o %P | finds -x "extra" && fail "sinfo --at $early shows partition extra: $(sinfo --at "$early")"
sinfo --at "$early" -h -N -o %N | finds -x "n3" && fail "sinfo --at $early shows node n3: $(sinfo --at "$early" -N)"
sinfo --at "$then" -h -o %P | finds -x "extra" || fail "sinfo --at $then lacks partition extra: $(sinfo --at "$then")"
pools_early=$(scontrol --at "$early" show burstbuffer) || fail "show burstbuffer --at $early failed: $pools_early"
[[ "$pools_early" != *fast* ]] || fail "show burstbuffer --at $early shows pool fast: $pools_early"

# 4. ClusterName cannot change live: refused with the key, nothing changed (not even the rest).
cp "$conf" "$work/good.conf"
sed -i 's/^ClusterName=local$/ClusterName=other/' "$conf"
echo "PartitionName=never Nodes=n1" >>"$conf"
expect_error "slurm_reconfigure error: ClusterName cannot change while cairnctld runs (restart it for that); nothing was changed" \
  scontrol reconfigure
[ "$(partition_exists never)" = no ] || fail "a refused reconfigure added a partition"
scontrol show config | finds -xF "ClusterName             = local" || fail "ClusterName changed"

# 5. A syntax error: refused with its line and key, nothing changed.
cp "$work/good.conf" "$conf"
echo "PartitionName=never Nodes=n1" >>"$conf"
echo "KillWait=soon" >>"$conf"
line=$(wc -l <"$conf")
# scontrol itself reads the file first (to find the controller) and stops there; the controller,
# asked by a scontrol that read the good copy, refuses the same way.
expect_error "scontrol: error: $conf:$line: bad number for KillWait: 'soon'" scontrol reconfigure
expect_error "slurm_reconfigure error: $conf:$line: bad number for KillWait: 'soon'" \
  scontrol --conf "$work/good.conf" reconfigure
[ "$(partition_exists never)" = no ] || fail "a file with a syntax error added a partition"

# 6. SIGHUP to the controller's PID does what reconfigure does.
cp "$work/good.conf" "$conf"
echo "PartitionName=late Nodes=n2" >>"$conf"
kill -HUP "$controller"
poll_until 20 yes partition_exists late || fail "SIGHUP did not reconfigure: $(tail -5 "$work/cairnctld.log")"
kill -0 "$controller" || fail "the controller died of SIGHUP"
# cairnd re-reads nothing on SIGHUP (reconfiguration is the controller's): it says so and goes on.
agent1=$(local_agent_pid n1)
kill -HUP "$agent1"
poll_until 20 yes sh -c "grep -q 'SIGHUP received' '$work/cairnd-n1.log' && echo yes" || fail "cairnd said nothing of SIGHUP"
kill -0 "$agent1" || fail "cairnd died of SIGHUP"

# 7. A restart of the controller keeps the reconfigured state (the log replayed, the file read).
kill_hard "$controller"
applied=$(cairn log dump | grep -c ConfigApplied)
sed -i 's/^KillWait=3$/KillWait=4/' "$conf"  # changed while the controller is down
restart_controller
scontrol show config | finds -xF "KillWait                = 4 sec" || fail "the restart did not read the file"
poll_until 20 $((applied + 1)) sh -c 'cairn log dump | grep -c ConfigApplied' ||
  fail "a start on a changed file recorded no ConfigApplied"
for partition in extra late; do
  [ "$(partition_exists $partition)" = yes ] || fail "partition $partition lost across a restart"
done
scontrol show partition debug | finds "MaxTime=00:05:00 " || fail "MaxTime lost across a restart"
wait_registrations n3 2
job=$(sbatch --parsable -p extra --wrap true)
wait_state "$job" COMPLETED
scontrol --at "$then" show partition debug | finds "MaxTime=UNLIMITED " || fail "--at after a restart"

# 8. setdebug: debug lines appear in the controller's log; a user's setdebug is refused.
grep -q " debug cairnctld: " "$work/cairnctld.log" && fail "debug lines before setdebug debug"
scontrol setdebug debug || fail "setdebug debug refused"
scontrol show config | finds -xF "SlurmctldDebug          = debug" || fail "SlurmctldDebug not debug"
squeue >/dev/null
poll_until 20 yes sh -c "grep -q ' debug cairnctld: ' '$work/cairnctld.log' && echo yes" ||
  fail "no debug line after setdebug debug: $(tail -5 "$work/cairnctld.log")"
scontrol setdebug info
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
  expect_error "slurm_set_debug_level error: Permission denied" as_nobody "$bin/scontrol" setdebug debug5
  expect_error "slurm_reconfigure error: Invalid user id" as_nobody "$bin/scontrol" reconfigure
  scontrol show config | finds -xF "SlurmctldDebug          = info" || fail "a user's setdebug changed the level"
else
  skip_part "part 8 (a user refused): needs root and setpriv to run scontrol as another user"
fi
expect_error "invalid debug level: loud" scontrol setdebug loud

pass "reconfigure: nodes and partitions added, limits lowered live, restart-only keys and syntax errors refused, SIGHUP, --at, restart, setdebug"
