#!/usr/bin/env bash
# `cairn log timeline` and `cairn log audit --html` on a scripted scenario: the page embeds
# exactly the golden data, filters, a log of two partitions merged by time, and bad input
# (an empty log, an empty window, an unknown job, events of a newer schema, bad options).
# The pages as a browser draws them: timeline_browser.sh.
set -euo pipefail
source "$(dirname "$0")/finds.bash"
build=$1 source=$2
cairn=$build/bin/cairn
make_log=$build/test/make_timeline_log
work=$(mktemp -d /tmp/cairn-timeline-cli-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The data embedded in a page: its JSON, and the audit lines.
embedded() {  # page json|audit
  python3 - "$1" "$2" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
which = "cairn-data" if sys.argv[2] == "json" else "cairn-audit"
match = re.search(r'<script type="[^"]*" id="%s">\n?(.*?)</script>' % which, page, re.S)
sys.stdout.write(match.group(1) if match else "MISSING\n")
PY
}

runs_in() { embedded "$1" json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["runs"]))'; }

"$make_log" --scenario "$work/log" >/dev/null
out=$("$cairn" log timeline --log "$work/log" --html "$work/page.html" --svg "$work/page.svg" 2>"$work/err")
[ ! -s "$work/err" ] || fail "notes on a clean log: $(cat "$work/err")"
grep -q "^timeline: $work/page.html (8 runs of 6 jobs on 2 nodes, 44 events)$" <<<"$out" || fail "summary: $out"
grep -q "^timeline: $work/page.svg " <<<"$out" || fail "svg summary: $out"
[ "$(stat -c %a "$work/page.html")" = 600 ] || fail "the page is not private (it holds what cairn log audit shows)"
diff -u "$source/test/golden/timeline_scenario.json" <(embedded "$work/page.html" json) || fail "embedded JSON differs from golden"
diff -u "$source/test/golden/timeline_scenario_audit.txt" <(embedded "$work/page.html" audit) || fail "embedded audit differs from golden"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$work/page.svg" || fail "the SVG is not well-formed XML"
grep -q '<svg xmlns="http://www.w3.org/2000/svg" class="cairn-timeline"' "$work/page.svg" || fail "svg root"
! grep -q '<script' "$work/page.svg" || fail "the SVG must not need a script"
# Self-contained: nothing fetched from anywhere.
! grep -Eq '(src|href)="(https?:)?//' "$work/page.html" || fail "the page loads something from the network"
! grep -Eiq '<(link|img|iframe)\b' "$work/page.html" || fail "the page refers to another file"

# One job's story: the same rows as the text audit.
out=$("$cairn" log audit --log "$work/log" --job 2 --html "$work/job2.html")
grep -q "^audit: $work/job2.html (job 2, 8 events)$" <<<"$out" || fail "audit --html summary: $out"
rows=$(grep -c '^<tr><td>2026-' "$work/job2.html")
[ "$rows" = "$("$cairn" log audit --log "$work/log" --job 2 | tail -n +2 | wc -l)" ] || fail "audit --html has $rows rows"
grep -q '<td>OomDetected</td><td>root(0)/agent</td><td>out of memory on node=n2 peak=300.0M limit=50M oom_kills=1</td>' \
  "$work/job2.html" || fail "audit --html details"
grep -q 'class="oom"' "$work/job2.html" || fail "job 2's story has its OOM"

# Filters.
"$cairn" log timeline --log "$work/log" --job 2,5 --html "$work/jobs.html" >/dev/null
[ "$(runs_in "$work/jobs.html")" = 3 ] || fail "--job 2,5: three runs"
"$cairn" log timeline --log "$work/log" --user carol --svg "$work/carol.svg" >/dev/null
[ "$(grep -o '<rect class="run"' "$work/carol.svg" | wc -l)" = 1 ] || fail "--user carol: one run"
[ "$(grep -o '<rect class="stage' "$work/carol.svg" | wc -l)" = 2 ] || fail "--user carol: two stages"
"$cairn" log timeline --log "$work/log" --from 2026-11-18T11:06:56 --to 2026-11-18T11:07:02 --html "$work/window.html" >/dev/null
embedded "$work/window.html" json | finds '"origin":"2026-11-18T11:06:56.000000Z","from":0,"to":6000' || fail "--from/--to window"

# Two partitions are read merged by time: n3 (partition 1) counts from 30 s to 33 s.
"$make_log" --two-partitions "$work/two" >/dev/null
"$cairn" log timeline --log "$work/two" --html "$work/two.html" >/dev/null
embedded "$work/two.html" json | python3 -c '
import json, sys
data = json.load(sys.stdin)
cluster = data["utilisation"][0]
assert cluster["partition"] == "", cluster["partition"]
assert cluster["t"] == sorted(cluster["t"]), "series out of time order: partitions not merged by time"
total = dict(zip(cluster["t"], cluster["total"]))
assert total[50000] == 16 and total[53000] == 8, total
assert [n["name"] for n in data["nodes"]] == ["n1", "n2", "n3"], data["nodes"]
' || fail "two partitions merged by time"

# Bad input: a page that says why, a note on stderr, or an error.
expect() {  # expected-code expected-text command...
  local code=$1 text=$2; shift 2
  set +e; said=$("$@" 2>&1); rc=$?; set -e
  [ "$rc" = "$code" ] || fail "'$*' exited $rc, expected $code: $said"
  grep -qF -- "$text" <<<"$said" || fail "'$*' said '$said', expected '$text'"
}
"$make_log" --empty "$work/empty" >/dev/null
expect 0 "The log holds no events: nothing has happened on this cluster yet." \
  "$cairn" log timeline --log "$work/empty" --html "$work/empty.html"
embedded "$work/empty.html" json | finds '"empty":"The log holds no events' || fail "empty log: the page says why"
expect 0 "No job was queued or ran between 2027-01-01T00:00:00.000000Z and 2027-01-02T00:00:00.000000Z" \
  "$cairn" log timeline --log "$work/log" --from 2027-01-01T00:00:00 --to 2027-01-02T00:00:00 --html "$work/late.html"
expect 0 "Job 99 is not in the log." "$cairn" log timeline --log "$work/log" --job 99 --html "$work/unknown.html"
embedded "$work/unknown.html" json | finds '"empty":"Job 99 is not in the log."' || fail "unknown job: the page says why"
"$make_log" --newer "$work/newer" >/dev/null
expect 0 "1 event of a newer schema (kinds this cairn does not know) was skipped" \
  "$cairn" log timeline --log "$work/newer" --html "$work/newer.html"
embedded "$work/newer.html" json | finds '"skipped_newer":1' || fail "newer schema: counted in the page"
[ "$(runs_in "$work/newer.html")" = 8 ] || fail "newer schema: the rest is drawn"
expect 1 "cairn log audit: no events for job 99" "$cairn" log audit --log "$work/log" --job 99 --html "$work/none.html"
[ ! -e "$work/none.html" ] || fail "no page for a job with no events"
expect 2 "--html FILE or --svg FILE is required" "$cairn" log timeline --log "$work/log"
expect 2 "invalid value for --from: 'someday'" "$cairn" log timeline --log "$work/log" --from someday --html "$work/x.html"
expect 2 "--to is before --from" \
  "$cairn" log timeline --log "$work/log" --from 2026-11-18T12:00:00 --to 2026-11-18T11:00:00 --html "$work/x.html"
expect 2 "invalid value for --job" "$cairn" log timeline --log "$work/log" --job 1,x --html "$work/x.html"
expect 1 "no event log at" "$cairn" log timeline --log "$work/nothing" --html "$work/x.html"
expect 1 "cannot write $work/no/such/dir/x.html" "$cairn" log timeline --log "$work/log" --html "$work/no/such/dir/x.html"
echo "timeline_cli: all checks passed"
