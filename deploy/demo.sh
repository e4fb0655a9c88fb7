#!/usr/bin/env bash
# `make demo`. Until the controller lands (issue "Controller, node agent and CLI")
# this shows the event-log tooling on a sample history; it says so plainly.
set -euo pipefail
build=${1:-build}
bin="$build/bin"
if [ -x "$bin/cairnctld" ] && [ -x "$bin/cairnd" ]; then
  exec bash "$(dirname "$0")/demo-cluster.sh" "$build"
fi
echo "The local cluster demo needs cairnctld and cairnd, which are not built yet."
echo "Showing the event log instead: a sample history written to a file log."
dir=$(mktemp -d /tmp/cairn-demo-XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$build/test/make_sample_log" "$dir/log"
for cmd in "log dump" "log audit --job 1" "log audit --job 3" "log stats" "log verify"; do
  echo
  echo "\$ cairn $cmd --log \$DIR"
  # shellcheck disable=SC2086
  "$bin/cairn" $cmd --log "$dir/log"
done
mkdir -p "$build/demo"
"$bin/cairn" log timeline --log "$dir/log" --html "$build/demo/timeline.html"
echo "The sample history as a picture: file://$(cd "$build/demo" && pwd)/timeline.html"
