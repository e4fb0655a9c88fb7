#!/usr/bin/env bash
# Timeline pages of 10,000 and 100,000 job runs (synthetic busy clusters, make_timeline_log):
# how long `cairn log timeline` takes, how big the page is, and how long headless chromium
# takes to open it until the first drawing is on screen (the page's own performance.now(),
# from navigation start), then to redraw a zoom. Figures only: no threshold asserted.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /tmp/cairn-bench-timeline-XXXXXX)
trap 'rm -rf "$dir"' EXIT
browser=yes
command -v chromium >/dev/null && command -v python3 >/dev/null || browser=
[ -n "$browser" ] || echo "timeline.open skipped: chromium or python3 missing (deploy/install-deps.sh installs them)"
for spec in "10000 64" "100000 256"; do
  set -- $spec
  runs=$1 nodes=$2
  "$build/test/make_timeline_log" --synthetic "$dir/log-$runs" "$runs" "$nodes" >/dev/null
  start=${EPOCHREALTIME/./}
  "$build/bin/cairn" log timeline --log "$dir/log-$runs" --html "$dir/timeline-$runs.html" --svg "$dir/timeline-$runs.svg" >/dev/null
  elapsed=$(( ${EPOCHREALTIME/./} - start ))
  echo "timeline.write runs=$runs nodes=$nodes: cairn log timeline --html --svg in $(( elapsed / 1000 )) ms;" \
       "page $(( $(stat -c %s "$dir/timeline-$runs.html") / 1000000 )) MB, svg $(( $(stat -c %s "$dir/timeline-$runs.svg") / 1000000 )) MB"
  if [ -n "$browser" ]; then
    for trial in 1 2 3; do
      python3 "$here/../integration/timeline_browser.py" measure "$dir/timeline-$runs.html" "$runs" | grep '^timeline page' |
        sed "s/^/timeline.open trial $trial: /"
    done
  fi
  rm -rf "$dir/log-$runs" "$dir/timeline-$runs".*
done
