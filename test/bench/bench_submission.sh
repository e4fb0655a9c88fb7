#!/usr/bin/env bash
# Acknowledged submissions per second from 16 concurrent sbatch loops on a 2-node local
# cluster (CAIRN_BENCH_CLIENTS, CAIRN_BENCH_SUBMISSIONS change them). Jobs are held (-H):
# the figure is the submission path alone (parse, RPC, durable append, answer), not the
# launches that would share the same CPUs. And the CPU time per sbatch of the controller and
# of the sbatch processes.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
source "$(dirname "$0")/bench_lib.bash"
start_bench_cluster 2 2 4000
ctl=$(head -1 pids)

clients=${CAIRN_BENCH_CLIENTS:-16}
total=${CAIRN_BENCH_SUBMISSIONS:-3200}
per_client=$(( total / clients ))
total=$(( per_client * clients ))
sbatch -Q -H --wrap true  # first submission: lazily built parts of the controller
ctl_ticks=$(cpu_ticks "$ctl") cli_ticks=$(cli_cpu_ticks)
start=$(now)
for client in $(seq "$clients"); do
  (for _ in $(seq "$per_client"); do sbatch --parsable -H --wrap true; done > "ids.$client") &
done
wait
end=$(now)
cli_ticks=$(( $(cli_cpu_ticks) - cli_ticks )) ctl_ticks=$(( $(cpu_ticks "$ctl") - ctl_ticks ))
acknowledged=$(cat ids.* | grep -c '^[0-9][0-9]*$' || true)
if [ "$acknowledged" != "$total" ]; then
  echo "submission: $acknowledged of $total sbatch acknowledged with a job id"
  exit 1
fi
figure submission.concurrent_sbatch_per_s "$(echo "$total / ($end - $start)" | bc -l | xargs printf '%.0f')" sbatch/s ">= 1000" \
  "$clients loops of $per_client held jobs"
figure submission.controller_cpu_ms_per_sbatch "$(ticks_per "$ctl_ticks" "$total")" cpu_ms/sbatch
figure submission.cli_cpu_ms_per_sbatch "$(ticks_per "$cli_ticks" "$total")" cpu_ms/sbatch "" "the sbatch processes"
