#!/usr/bin/env bash
# Job arrays on a 2-node local cluster: time to submit a 10,000-task array (one
# JobSubmitted event), and wall time until all its `--wrap true` tasks COMPLETED.
# CAIRN_BENCH_ARRAY_TASKS changes the size; CAIRN_BENCH_ARRAY_CPUS the CPUs per node.
# And the CPU time per task of the controller, the agents and their children (supervisors, jobs).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
source "$(dirname "$0")/bench_lib.bash"
cpus=${CAIRN_BENCH_ARRAY_CPUS:-16}
start_bench_cluster 2 "$cpus" 16000

tasks=${CAIRN_BENCH_ARRAY_TASKS:-10000}
ctl=$(head -1 pids)
agents=($(sed -n '2,$p' pids))
ctl_ticks=$(cpu_ticks "$ctl") agent_own=$(cpu_ticks "${agents[@]}") agent_children=$(children_cpu_ticks "${agents[@]}")
start=$(now)
id=$(sbatch --parsable --array=0-$((tasks - 1)) -o /dev/null --wrap true)
submitted=$(now)
figure arrays.submit_s "$(echo "$submitted - $start" | bc -l | xargs printf '%.3f')" s "" "$tasks tasks"
# Polled twice a second: each squeue answer carries every task still shown.
while [ -n "$(squeue -h -j "$id" -t PD,R,CG -o %i | head -1)" ]; do sleep 0.5; done
end=$(now)
done_count=$(sacct -j "$id" -X -n -P -o State | grep -c '^COMPLETED$' || true)
if [ "$done_count" != "$tasks" ]; then
  echo "arrays: only $done_count of $tasks tasks COMPLETED"
  sacct -j "$id" -X -n -P -o JobID,JobIDRaw,State,ExitCode | grep -v '|COMPLETED|' | head
  exit 1
fi
figure arrays.all_tasks_completed_wall_s "$(echo "$end - $start" | bc -l | xargs printf '%.2f')" s "" "$tasks tasks on $((2 * cpus)) CPUs"
figure arrays.tasks_per_s "$(echo "$tasks / ($end - $start)" | bc -l | xargs printf '%.0f')" tasks/s ">= 2000" \
  "from sbatch to the last task done, squeue polled every 0.5 s"
figure arrays.controller_cpu_ms_per_task "$(ticks_per $(( $(cpu_ticks "$ctl") - ctl_ticks )) "$tasks")" cpu_ms/task "" "squeue's polls included"
figure arrays.agent_cpu_ms_per_task "$(ticks_per $(( $(cpu_ticks "${agents[@]}") - agent_own )) "$tasks")" cpu_ms/task
figure arrays.agent_children_cpu_ms_per_task \
  "$(ticks_per $(( $(children_cpu_ticks "${agents[@]}") - agent_children )) "$tasks")" cpu_ms/task "" "supervisors and jobs"
