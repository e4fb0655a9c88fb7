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
# The machine's own speed first and after every bench: compare.py judges a CPU figure against
# the readings just before and after its bench, the host's speed moving within a run too.
reading() {  # label
  echo "== bench_machine_reference $1"
  "$build/bench/bench_machine_reference" "$1" || status=1
}
reading at_start
# The lifecycle bench first: others create and delete tens of thousands of files (job
# output, staged copies), and ext4's inode allocator then scans past the inodes freed in
# the last minutes on every file creation (recently_deleted()): ~0.3 ms more per job
# output file, a cost of the previous bench's cleanup, not of Cairn.
echo "== bench_lifecycle.sh"
bash "$here/bench_lifecycle.sh" "$build" || status=1
reading after.bench_lifecycle
for bench in "$build"/bench/*; do
  [ -x "$bench" ] && [ -f "$bench" ] || continue
  [ "$(basename "$bench")" = bench_machine_reference ] && continue
  echo "== $(basename "$bench")"
  "$bench" || status=1
  reading "after.$(basename "$bench")"
done
for script in "$here"/*.sh; do
  case "$(basename "$script")" in run.sh | bench_lifecycle.sh) continue ;; esac
  echo "== $(basename "$script")"
  bash "$script" "$build" || status=1
  reading "after.$(basename "$script" .sh)"
done
python3 "$here/collect_results.py" "$CAIRN_BENCH_RESULTS" "$build/bench/results.json" || status=1
exit $status
