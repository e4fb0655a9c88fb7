#!/usr/bin/env bash
# Two clusters on one host, both with a node n1 (two `cairn local up`, or two tests at
# once): a job that outlives its killed agent is not killed by the other cluster's n1
# agent, which clears the cgroups its own dead predecessors left when it starts. Once
# that killed the job (signal 9, FAILED) whenever the other agent started while this one
# was dead, or after it had adopted the job (whose cgroup still bears the dead agent's pid).
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
start_cluster 1 2 1000

if scontrol show node n1 | finds "MemoryEnforcement=off"; then
  skip_test "the agent runs without memory enforcement here (no job cgroups to confuse): $(grep -h "memory enforcement off" "$work"/*.log | head -1)"
fi

other=$work/other
other_up() { cairn local up --dir "$other" --nodes 1 --cpus 2 --memory 1000 >/dev/null; }
at_exit_after_stop 'cairn local down --dir "$other" >/dev/null 2>&1'
count_lines() { grep -c "$1" "$2" 2>/dev/null || true; }  # pattern file
# The other cluster's n1 agent has started (its stale cgroups are cleared before it says which it uses).
wait_other_agent_starts() {  # count
  poll_until 30 "$1" count_lines "memory enforcement: cgroup" "$other/cairnd-n1.log" ||
    fail "the other cluster's agent did not start ($(tail -3 "$other/cairnd-n1.log"))"
}
shell_alive() { [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat")" != Z ]; }
# kill -9 of an agent this script started, once reaped: no zombie still named cairnd is left
# for the other agent to take for a live one.
kill_agent() {  # pid
  kill_hard "$1"
  for _ in $(seq 200); do [ -e "/proc/$1" ] || return 0; sleep 0.05; done
  fail "agent $1 was not reaped"
}

# The job's agent is a child of this script (`cairn local up` leaves its agents to init).
kill_hard "$(local_agent_pid n1)"
restart_agent n1
wait_registrations n1 2

job=$(sbatch --parsable -o held.out --wrap 'echo $$ > held.pid; echo started; while [ ! -e release ]; do sleep 0.1; done; echo done')
wait_state "$job" RUNNING
for _ in $(seq 100); do [ -s held.pid ] && break; sleep 0.1; done
shell=$(cat held.pid)
grep -q "cairnd-n1-.*\.job$job\.0" "/proc/$shell/cgroup" || fail "job $job is in no job cgroup: $(cat "/proc/$shell/cgroup")"

# 1. The other cluster's n1 agent starts while this cluster's is dead.
kill_agent "$agent"
other_up
wait_other_agent_starts 1
shell_alive "$shell" || fail "the other cluster's agent killed job $job while its agent was down"

# 2. This cluster's agent adopts the job; then the other cluster's agent restarts.
restart_agent n1
poll_until 30 1 count_lines "JobId=$job (run 0) adopted" "$work/cairnd-n1.log" || fail "job $job was not adopted"
kill_hard "$(sed -n 2p "$other/pids")"
"$bin/cairnd" --conf "$other/cairn.conf" --node n1 2>>"$other/cairnd-n1.log" &
extra_pids+=($!)
disown
wait_other_agent_starts 2
shell_alive "$shell" || fail "the other cluster's restarted agent killed job $job, adopted by this cluster's agent"

touch release
wait_state "$job" COMPLETED 60
[ "$(cat held.out)" = "$(printf 'started\ndone')" ] || fail "job $job lost output: $(cat held.out)"
echo "agent_kill_beside_another_cluster: all checks passed"
