#!/usr/bin/env bash
# Timeline pages of 10,000 and 100,000 job runs (synthetic busy clusters, make_timeline_log):
# how long `cairn log timeline` takes, how big the page is, and how long headless chromium
# takes to open it until the first drawing is on screen (the page's own performance.now(),
# from navigation start), then to redraw a zoom. Figures only: no threshold asserted. CPU time:
# `cairn log timeline`'s per 1000 runs; the browser's (chromium and its driver) per opening.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bench_lib.bash"
dir=$(mktemp -d /tmp/cairn-bench-timeline-XXXXXX)
trap 'rm -rf "$dir"' EXIT
browser=yes
command -v chromium >/dev/null && command -v python3 >/dev/null || browser=
[ -n "$browser" ] || echo "timeline.open skipped: chromium or python3 missing (deploy/install-deps.sh installs them)"
for spec in "10000 64" "100000 256"; do
  set -- $spec
  runs=$1 nodes=$2
  "$build/test/make_timeline_log" --synthetic "$dir/log-$runs" "$runs" "$nodes" >/dev/null
  cli_ticks=$(cli_cpu_ticks)
  start=${EPOCHREALTIME/./}
  "$build/bin/cairn" log timeline --log "$dir/log-$runs" --html "$dir/timeline-$runs.html" --svg "$dir/timeline-$runs.svg" >/dev/null
  elapsed=$(( ${EPOCHREALTIME/./} - start ))
  cli_ticks=$(( $(cli_cpu_ticks) - cli_ticks ))
  figure "timeline.write_ms.runs_$runs" $(( elapsed / 1000 )) ms "" "cairn log timeline --html --svg, $runs runs on $nodes nodes"
  figure "timeline.write.cli_cpu_ms_per_1000_runs.runs_$runs" "$(ticks_per "$cli_ticks" "$runs" ms 1000)" "cpu_ms/1000 runs"
  figure "timeline.page_bytes.runs_$runs" "$(stat -c %s "$dir/timeline-$runs.html")" bytes
  figure "timeline.svg_bytes.runs_$runs" "$(stat -c %s "$dir/timeline-$runs.svg")" bytes
  if [ -n "$browser" ]; then
    cli_ticks=$(cli_cpu_ticks)
    opened=()
    for trial in 1 2 3; do
      opened+=("$(python3 "$here/../integration/timeline_browser.py" measure "$dir/timeline-$runs.html" "$runs" |
        grep '^timeline page')")
    done
    cli_ticks=$(( $(cli_cpu_ticks) - cli_ticks ))
    for trial in 1 2 3; do echo "timeline.open trial $trial: ${opened[trial - 1]}"; done
    figure "timeline.open_ready_ms.runs_$runs" \
      "$(printf '%s\n' "${opened[@]}" | grep -o 'ready [0-9]* ms' | tr -dc '0-9\n' | sort -n | sed -n 2p)" ms "" \
      "median of 3: navigation start to the first drawing"
    figure "timeline.open.browser_cpu_ms_per_open.runs_$runs" "$(ticks_per "$cli_ticks" 3)" cpu_ms/open "" \
      "chromium and its driver, for the load and a zoom"
  fi
  rm -rf "$dir/log-$runs" "$dir/timeline-$runs".*
done
