#!/usr/bin/env bash
# Scheduling order on a real cluster, through the CLI: FIFO among equal priority with Slurm's
# pending reasons, --nice, and EASY backfill (a short job runs ahead of a blocked head job; a long
# one that would delay it does not). One node with 2 CPUs; every job appends its name to a file
# when it starts, so the file is the start order.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 1 2 1000

submit() {  # name [sbatch options...]: a job that records its start and ends at once
  local name=$1; shift
  sbatch --parsable -o /dev/null -J "$name" "$@" --wrap "echo $name >> $work/order"
}
blocker() {  # name file [sbatch options...]: records its start, runs until FILE exists
  local name=$1 file=$2; shift 2
  sbatch --parsable -o /dev/null -J "$name" "$@" \
    --wrap "echo $name >> $work/order; while [ ! -e $work/$file ]; do sleep 0.05; done"
}
start_order() { tr '\n' ' ' <"$work/order" 2>/dev/null | sed 's/ $//'; }
wait_order() {  # expected start order, space separated
  poll_until 20 "$1" start_order || fail "start order is '$(start_order)', expected '$1'"
}

# 1. FIFO among equal priority; a positive --nice goes after them. The node is busy: the first
# job in line waits for Resources, the ones behind it for Priority, as Slurm shows them.
: >"$work/order"
b=$(blocker B go1 -c 2 -t 1:00)
wait_state "$b" RUNNING
n=$(submit N -c 2 -t 1:00 --nice=100)
j1=$(submit J1 -c 2 -t 1:00)
j2=$(submit J2 -c 2 -t 1:00)
j3=$(submit J3 -c 2 -t 1:00)
expect_reason "$j1" Resources
expect_reason "$j2" Priority
expect_reason "$j3" Priority
expect_reason "$n" Priority
touch "$work/go1"
wait_order "B J1 J2 J3 N"
for job in "$j1" "$j2" "$j3" "$n"; do wait_state "$job" COMPLETED; done

# 2. Backfill. B holds 1 of 2 CPUs for at most 8 s; the head H needs both, so it starts when B
# ends (at the latest when B's time limit is reached). L (1 CPU, 30 s) would still run then and
# delay H: it waits. S (1 CPU, 3 s) ends before H could start: it runs now, ahead of both.
: >"$work/order"
b=$(blocker B go2 -c 1 -t 0:08)
wait_order B  # its shell wrote first (RUNNING alone does not say so): S runs on the other CPU
h=$(submit H -c 2 -t 0:05)
l=$(blocker L go3 -c 1 -t 0:30)
s=$(submit S -c 1 -t 0:03)
wait_state "$s" COMPLETED
[ "$(state_of "$h")" = PENDING ] || fail "the head job is $(state_of "$h") while B runs"
[ "$(state_of "$l")" = PENDING ] || fail "the long job was backfilled ($(state_of "$l")) and would delay the head"
expect_reason "$h" Resources
expect_reason "$l" Priority
wait_order "B S"
touch "$work/go2" "$work/go3"
wait_order "B S H L"
wait_state "$b" COMPLETED
wait_state "$h" COMPLETED
wait_state "$l" COMPLETED
echo "scheduling_order: all checks passed"
