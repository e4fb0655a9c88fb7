#!/usr/bin/env bash
# cairnd's actor schedulers (common/loop_scheduler.hpp, docs/decisions.md "cairnd's actors on
# its kj loop thread"): by default the agent has no CAF worker thread (its actors run on its
# kj loop thread), and CAIRN_CAF_SCHEDULER=workers in its environment gives it worker threads
# again. Either way batch jobs, a step (srun), scancel of a running job, and scancel of one that
# ignores SIGTERM (ended by the SIGKILL the agent's KillWait timer sends, a timer of CAF's clock)
# work.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
unset CAIRN_CAF_SCHEDULER
start_cluster_with 2 2 1000 "KillWait=2"

# Jobs on `node` as a user would run them; fails the test on the first that does not behave.
exercise() {  # node
  local node=$1
  local plain step ignores_term running
  plain=$(sbatch --parsable -w "$node" -o "plain-$node.out" --wrap 'echo hello from $SLURMD_NODENAME')
  step=$(sbatch --parsable -w "$node" -o "step-$node.out" --wrap 'srun echo step on $SLURMD_NODENAME')
  ignores_term=$(sbatch --parsable -w "$node" -o /dev/null --wrap 'trap "" TERM; while :; do sleep 0.1; done')
  running=$(sbatch --parsable -w "$node" -o /dev/null --wrap 'sleep 300')
  wait_state "$plain" COMPLETED
  wait_state "$step" COMPLETED
  grep -qx "hello from $node" "plain-$node.out" || fail "job $plain on $node wrote: $(cat "plain-$node.out")"
  grep -qx "step on $node" "step-$node.out" || fail "the step of job $step on $node wrote: $(cat "step-$node.out")"
  wait_state "$running" RUNNING
  wait_state "$ignores_term" RUNNING
  scancel "$running" "$ignores_term"
  wait_state "$running" CANCELLED
  # Only the SIGKILL that follows KillWait (2 s) ends it.
  wait_state "$ignores_term" CANCELLED
}

# 1. The default: the agents' actors run on their loop threads; no worker thread exists.
for node in n1 n2; do
  pid=$(local_agent_pid "$node")
  [ "$(worker_threads "$pid")" = 0 ] || fail "agent $node has CAF worker threads by default: $(thread_names "$pid")"
done
exercise n1

# 2. CAIRN_CAF_SCHEDULER=workers: n2's agent, restarted so, has worker threads, and works alike.
old=$(local_agent_pid n2)
kill "$old"
for _ in $(seq 100); do exited "$old" && break; sleep 0.1; done
exited "$old" || fail "agent n2 did not stop on SIGTERM"
before=$(registrations_of n2)
CAIRN_CAF_SCHEDULER=workers restart_agent n2
wait_registrations n2 $((before + 1))
[ "$(worker_threads "$agent")" -ge 1 ] || fail "agent n2 has no CAF worker thread with CAIRN_CAF_SCHEDULER=workers: $(thread_names "$agent")"
exercise n2

pass "cairnd's actors on its loop thread by default, on worker threads when asked; jobs, steps, scancel and KillWait either way"
