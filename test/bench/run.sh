#!/usr/bin/env bash
# Runs every benchmark and prints its figures. Usage: run.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
status=0
for bench in "$build"/bench/*; do
  [ -x "$bench" ] || continue
  echo "== $(basename "$bench")"
  "$bench" || status=1
done
for script in "$(dirname "$0")"/*.sh; do
  [ "$(basename "$script")" = run.sh ] && continue
  echo "== $(basename "$script")"
  bash "$script" "$build" || status=1
done
exit $status
