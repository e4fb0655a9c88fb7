#!/usr/bin/env bash
# Read-your-writes: a command is checked against a state that holds every event acknowledged
# before it, however late the read side applies them. Several clients each drive one job through tight suspend/resume and hold/release
# pairs at once; every command must succeed (each follows its own acknowledged opposite), and
# the log must hold exactly one event per acknowledged command.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
probe="$(cd "$build" && pwd)/test/command_probe"
pairs=${RYW_PAIRS:-40}
# The read side applies each event late, as a busy one would (a fault hook of cairnctld's):
# without read-your-writes, commands would be checked against states missing their predecessors.
export CAIRN_FAULT_APPLY_DELAY_MS=10
start_cluster 2 4 2000
unset CAIRN_FAULT_APPLY_DELAY_MS

running=()
for _ in 1 2 3; do running+=("$(sbatch --parsable -n1 --wrap 'sleep 600')"); done
held=()  # pending until their begin time: hold and release never race the scheduler
for _ in 1 2 3; do held+=("$(sbatch --parsable --begin=now+3600 --wrap true)"); done
for job in "${running[@]}"; do wait_state "$job" RUNNING; done

# One client per job; each command must succeed, in order. Half go through scontrol (its
# commands reach the job by way of the query view), half straight to Controller.control.
socket="unix:$(sed -n 's/^ControllerSocket=//p' "$CAIRN_CONF")"
drive() {  # job first second
  for _ in $(seq $((pairs / 2))); do
    scontrol "$2" "$1" || { echo "scontrol $2 $1 failed" >"$work/failed.$1"; return 1; }
    scontrol "$3" "$1" || { echo "scontrol $3 $1 failed" >"$work/failed.$1"; return 1; }
  done
  "$probe" "$socket" "$1" $((pairs - pairs / 2)) "$2" "$3" >"$work/failed.$1" || return 1
  rm -f "$work/failed.$1"
}
clients=()
for job in "${running[@]}"; do drive "$job" suspend resume & clients+=($!); done
for job in "${held[@]}"; do drive "$job" hold release & clients+=($!); done
status=0
for pid in "${clients[@]}"; do wait "$pid" || status=1; done
[ "$status" = 0 ] || fail "a command answered wrongly: $(cat "$work"/failed.* 2>/dev/null)"

# Exactly one event per acknowledged command.
count() { cairn log dump --log state/log --job "$1" --kind "$2" | grep -c "$2" || true; }
for job in "${running[@]}"; do
  [ "$(count "$job" JobSuspend)" = "$pairs" ] || fail "job $job: $(count "$job" JobSuspend) JobSuspend events for $pairs suspends"
  [ "$(count "$job" JobResume)" = "$pairs" ] || fail "job $job: $(count "$job" JobResume) JobResume events for $pairs resumes"
  [ "$(squeue -h -j "$job" -o %T)" = RUNNING ] || fail "job $job ends $(squeue -h -j "$job" -o %T), not RUNNING"
done
for job in "${held[@]}"; do
  [ "$(count "$job" JobReleased)" = "$pairs" ] || fail "job $job: $(count "$job" JobReleased) JobReleased for $pairs releases"
  [ "$(count "$job" JobHeld)" = "$pairs" ] || fail "job $job: $(count "$job" JobHeld) JobHeld for $pairs holds"
done
scancel "${running[@]}" "${held[@]}"
echo "read_your_writes: $((pairs * 12)) commands, each checked against what was acknowledged before it"
