#!/usr/bin/env bash
# Runs every benchmark and prints its figures; writes them all to BUILD_DIR/bench/results.json
# (name -> value, unit, goal), which test/bench/compare.py compares with an older one.
# Usage: run.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build/bench"
export CAIRN_BENCH_RESULTS=$(cd "$build/bench" && pwd)/results.jsonl
: > "$CAIRN_BENCH_RESULTS"
status=0
# The machine's own speed first and last (compare.py judges CPU figures against it).
echo "== bench_machine_reference at_start"
"$build/bench/bench_machine_reference" at_start || status=1
# The lifecycle bench first: others create and delete tens of thousands of files (job
# output, staged copies), and ext4's inode allocator then scans past the inodes freed in
# the last minutes on every file creation (recently_deleted()): ~0.3 ms more per job
# output file, a cost of the previous bench's cleanup, not of Cairn.
echo "== bench_lifecycle.sh"
bash "$here/bench_lifecycle.sh" "$build" || status=1
for bench in "$build"/bench/*; do
  [ -x "$bench" ] && [ -f "$bench" ] || continue
  [ "$(basename "$bench")" = bench_machine_reference ] && continue
  echo "== $(basename "$bench")"
  "$bench" || status=1
done
for script in "$here"/*.sh; do
  case "$(basename "$script")" in run.sh | bench_lifecycle.sh) continue ;; esac
  echo "== $(basename "$script")"
  bash "$script" "$build" || status=1
done
echo "== bench_machine_reference at_end"
"$build/bench/bench_machine_reference" at_end || status=1
python3 "$here/collect_results.py" "$CAIRN_BENCH_RESULTS" "$build/bench/results.json" || status=1
exit $status
