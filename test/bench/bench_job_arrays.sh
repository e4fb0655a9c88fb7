#!/usr/bin/env bash
# Job arrays on a 2-node local cluster: time to submit a 10,000-task array (one
# JobSubmitted event), and wall time until all its `--wrap true` tasks COMPLETED.
# CAIRN_BENCH_ARRAY_TASKS changes the size; CAIRN_BENCH_ARRAY_CPUS the CPUs per node.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
export PATH="$build/bin:$PATH"
dir=$(mktemp -d /tmp/cairn-bench-XXXXXX)
trap 'cairn local down --dir "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
cpus=${CAIRN_BENCH_ARRAY_CPUS:-16}
eval "$(cairn local up --dir "$dir" --nodes 2 --cpus "$cpus" --memory 16000)"
cd "$dir"
now() { date +%s.%N; }

tasks=${CAIRN_BENCH_ARRAY_TASKS:-10000}
start=$(now)
id=$(sbatch --parsable --array=0-$((tasks - 1)) -o /dev/null --wrap true)
submitted=$(now)
echo "arrays.submit_s tasks=$tasks value=$(echo "$submitted - $start" | bc -l | xargs printf '%.3f')"
# Polled twice a second: each squeue answer carries every task still shown.
while [ -n "$(squeue -h -j "$id" -t PD,R,CG -o %i | head -1)" ]; do sleep 0.5; done
end=$(now)
done_count=$(sacct -j "$id" -X -n -P -o State | grep -c '^COMPLETED$' || true)
if [ "$done_count" != "$tasks" ]; then
  echo "arrays: only $done_count of $tasks tasks COMPLETED"
  sacct -j "$id" -X -n -P -o JobID,JobIDRaw,State,ExitCode | grep -v '|COMPLETED|' | head
  exit 1
fi
echo "arrays.all_tasks_completed_wall_s tasks=$tasks cpus=$((2 * cpus)) value=$(echo "$end - $start" | bc -l | xargs printf '%.2f') ($(echo "$tasks / ($end - $start)" | bc -l | xargs printf '%.0f') tasks/s)"
