#!/usr/bin/env bash
# The timeline pages in a real browser: Debian's chromium, headless, opens the page of
# the scripted scenario (suspend, OOM, requeue, burst buffer, two nodes) and the test
# checks the rendered DOM (a bar per job run, the suspend hatch on the suspended job, the
# OOM marker, requeue links, stages, the audit of a clicked job), with JavaScript on and
# off, the --svg file alone, a job's story, a busy cluster (aggregated when zoomed out), and
# pages that must say why they are empty.
# Screenshots are kept in BUILD/test-artifacts/timeline/.
set -euo pipefail
build=$1 source=$2
cairn=$build/bin/cairn
here=$(cd "$(dirname "$0")" && pwd)
artifacts=$(cd "$build" && pwd)/test-artifacts/timeline
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL (CI=true, so no skip): $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
command -v python3 >/dev/null || skip "python3 is not installed (deploy/install-deps.sh installs it)"
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null ||
  skip "chromium is not installed (deploy/install-deps.sh installs Debian's chromium)"
work=$(mktemp -d /tmp/cairn-timeline-browser-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$artifacts"
browse() { python3 "$here/timeline_browser.py" "$@"; }

"$build/test/make_timeline_log" --scenario "$work/log" >/dev/null
"$cairn" log timeline --log "$work/log" --html "$work/timeline.html" --svg "$work/timeline.svg" >/dev/null
cp "$work/timeline.html" "$work/timeline.svg" "$artifacts/"
browse scenario "$work/timeline.html" "$work/timeline.svg" "$artifacts"

"$cairn" log audit --log "$work/log" --job 4 --html "$work/audit-job4.html" >/dev/null
cp "$work/audit-job4.html" "$artifacts/"
browse story "$work/audit-job4.html" "$artifacts"

"$build/test/make_timeline_log" --empty "$work/empty-log" >/dev/null
"$cairn" log timeline --log "$work/empty-log" --html "$work/empty-log.html" 2>/dev/null >/dev/null
browse empty "$work/empty-log.html" "The log holds no events" "$artifacts"
"$cairn" log timeline --log "$work/log" --from 2027-01-01T00:00:00 --to 2027-01-02T00:00:00 \
  --html "$work/empty-window.html" 2>/dev/null >/dev/null
browse empty "$work/empty-window.html" "No job was queued or ran between 2027-01-01T00:00:00" "$artifacts"
"$cairn" log timeline --log "$work/log" --job 99 --html "$work/unknown-job.html" 2>/dev/null >/dev/null
browse empty "$work/unknown-job.html" "Job 99 is not in the log." "$artifacts"
# A busy cluster (10,000 runs on 64 nodes): aggregated when zoomed out, bars when zoomed in.
"$build/test/make_timeline_log" --synthetic "$work/busy" 10000 64 >/dev/null
"$cairn" log timeline --log "$work/busy" --html "$work/busy.html" >/dev/null
browse aggregate "$work/busy.html" "$artifacts"

"$build/test/make_timeline_log" --newer "$work/newer" >/dev/null
"$cairn" log timeline --log "$work/newer" --html "$work/newer.html" 2>/dev/null >/dev/null
python3 "$here/timeline_browser.py" measure "$work/newer.html" 8 | tee "$work/newer.out"
grep -q "ok   no script error" "$work/newer.out" || { echo "FAIL: a log with events of a newer schema broke the page"; exit 1; }
echo "timeline_browser: all checks passed; screenshots in $artifacts"
