#!/usr/bin/env bash
# Job arrays on a 2-node local cluster: time to submit a 10,000-task array (one
# JobSubmitted event), and wall time until all its `--wrap true` tasks COMPLETED.
# CAIRN_BENCH_ARRAY_TASKS changes the size; CAIRN_BENCH_ARRAY_CPUS the CPUs per node.
# And the CPU time per task of the controller, the agents and their children (supervisors, jobs).
# Then the same array on two simulated nodes (cairnd --simulate: each task ends by timer,
# nothing is executed): the controller's array path without the process launches that share
# its 2 cores here (arrays.sim.*).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
source "$(dirname "$0")/bench_lib.bash"
cpus=${CAIRN_BENCH_ARRAY_CPUS:-16}
tasks=${CAIRN_BENCH_ARRAY_TASKS:-10000}

# One array of $tasks tasks from submission to the last one done; figures named arrays.PREFIX*.
# The remaining arguments go to sbatch.
run_array() {  # prefix sbatch-option...
  local prefix=$1
  shift
  local ctl agents ctl_ticks agent_own agent_children start submitted end id done_count
  ctl=$(head -1 pids)
  agents=($(sed -n '2,$p' pids))
  ctl_ticks=$(cpu_ticks "$ctl") agent_own=$(cpu_ticks "${agents[@]}") agent_children=$(agent_children_cpu_ticks "${agents[@]}")
  start=$(now)
  id=$(sbatch --parsable --array=0-$((tasks - 1)) -o /dev/null "$@" --wrap true)
  submitted=$(now)
  figure "arrays.${prefix}submit_s" "$(echo "$submitted - $start" | bc -l | xargs printf '%.3f')" s "" "$tasks tasks"
  # Polled twice a second: each squeue answer carries every task still shown.
  while [ -n "$(squeue -h -j "$id" -t PD,R,CG -o %i | head -1)" ]; do sleep 0.5; done
  end=$(now)
  done_count=$(sacct -j "$id" -X -n -P -o State | grep -c '^COMPLETED$' || true)
  if [ "$done_count" != "$tasks" ]; then
    echo "arrays: only $done_count of $tasks tasks COMPLETED"
    sacct -j "$id" -X -n -P -o JobID,JobIDRaw,State,ExitCode | grep -v '|COMPLETED|' | head
    exit 1
  fi
  figure "arrays.${prefix}all_tasks_completed_wall_s" "$(echo "$end - $start" | bc -l | xargs printf '%.2f')" s "" \
    "$tasks tasks on $((2 * cpus)) CPUs"
  figure "arrays.${prefix}tasks_per_s" "$(echo "$tasks / ($end - $start)" | bc -l | xargs printf '%.0f')" tasks/s ">= 2000" \
    "from sbatch to the last task done, squeue polled every 0.5 s"
  figure "arrays.${prefix}controller_cpu_ms_per_task" "$(ticks_per $(( $(cpu_ticks "$ctl") - ctl_ticks )) "$tasks")" \
    cpu_ms/task "" "squeue's polls included"
  figure "arrays.${prefix}agent_cpu_ms_per_task" "$(ticks_per $(( $(cpu_ticks "${agents[@]}") - agent_own )) "$tasks")" cpu_ms/task
  [ "$prefix" = sim. ] && return 0  # nothing is executed on simulated nodes
  figure "arrays.${prefix}agent_children_cpu_ms_per_task" \
    "$(ticks_per $(( $(agent_children_cpu_ticks "${agents[@]}") - agent_children )) "$tasks")" cpu_ms/task "" \
    "supervisors and jobs"
}

start_bench_cluster 2 "$cpus" 16000
run_array ""

cairn local down --dir "$dir" >/dev/null
rm -rf "${dir:?}"/*
eval "$(cairn local up --dir "$dir" --sim-nodes 2 --cpus "$cpus" --memory 16000)"
run_array sim. --export=ALL,CAIRN_SIM_RUNTIME=0
