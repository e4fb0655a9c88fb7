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
# GOAL is tasks_per_s's; the remaining arguments go to sbatch.
run_array() {  # prefix goal sbatch-option...
  local prefix=$1 goal=$2
  shift 2
  local ctl agents ctl_ticks agent_own agent_children start submitted end id done_count ctl_used own_used children_used
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
  ctl_used=$(( $(cpu_ticks "$ctl") - ctl_ticks )) own_used=$(( $(cpu_ticks "${agents[@]}") - agent_own ))
  children_used=$(( $(agent_children_cpu_ticks "${agents[@]}") - agent_children ))
  figure "arrays.${prefix}tasks_per_s" "$(echo "$tasks / ($end - $start)" | bc -l | xargs printf '%.0f')" tasks/s "$goal" \
    "from sbatch to the last task done, squeue polled every 0.5 s"
  figure "arrays.${prefix}controller_cpu_ms_per_task" "$(ticks_per "$ctl_used" "$tasks")" cpu_ms/task "" "squeue's polls included"
  figure "arrays.${prefix}agent_cpu_ms_per_task" "$(ticks_per "$own_used" "$tasks")" cpu_ms/task
  [ "$prefix" = sim. ] && return 0  # nothing is executed on simulated nodes
  figure "arrays.${prefix}agent_children_cpu_ms_per_task" "$(ticks_per "$children_used" "$tasks")" cpu_ms/task "" \
    "supervisors and jobs"
  # What the launches' CPU allows on this machine's cores, whatever the order of the work.
  figure "arrays.${prefix}cpu_bound_tasks_per_s" \
    "$(awk -v used=$(( ctl_used + own_used + children_used )) -v n="$tasks" -v hz="$clock_ticks_per_s" -v cores="$(nproc)" \
      'BEGIN { printf "%.0f", (used > 0 ? cores * n * hz / used : 0) }')" tasks/s "" \
    "$(nproc) cores / (controller + agents + supervisors and jobs) CPU per task: tasks_per_s cannot be higher"
}

start_bench_cluster 2 "$cpus" 16000
# Real launches: bounded by their CPU on these 2 cores (arrays.cpu_bound_tasks_per_s, ~1,000/s);
# the goal of >= 2,000 tasks/s through the controller is the simulated nodes' figure below.
run_array "" ""

cairn local down --dir "$dir" >/dev/null
rm -rf "${dir:?}"/*
eval "$(cairn local up --dir "$dir" --sim-nodes 2 --cpus "$cpus" --memory 16000)"
run_array sim. ">= 2000" --export=ALL,CAIRN_SIM_RUNTIME=0
