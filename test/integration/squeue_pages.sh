#!/usr/bin/env bash
# squeue over more jobs than one listJobs page (the controller answers at most 2,000 jobs a
# page, and squeue asks for the next page before it reads and prints the one it has): every
# job once, in id order, from lean views (the default format, -o %i) and from whole views (a
# column beyond the lean ones), over a controller whose log holds 5,000 finished jobs.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
source "$(dirname "$0")/../bench/bench_site.bash"
jobs=5000
mkdir -p "$work/pages"
write_bench_site_conf "$work/cairn.conf" "$work/pages" MinJobAge=100000000 "SlurmUser=$(id -un)"
export CAIRN_CONF=$work/cairn.conf
"$build/test/make_bench_log" "$work/pages" "$jobs" >/dev/null || fail "make_bench_log failed"
"$bin/cairnctld" --conf "$CAIRN_CONF" >>"$work/cairnctld.log" 2>&1 &
extra_pids+=($!)
disown
for _ in $(seq 600); do squeue -h -j 1 >/dev/null 2>&1 && break; sleep 0.1; done
squeue -h -j 1 -t all -o %i | finds '^1$' || fail "the controller does not answer"

squeue -t all -h -o %i > "$work/ids"
[ "$(wc -l < "$work/ids")" = "$jobs" ] || fail "squeue -o %i listed $(wc -l < "$work/ids") jobs, expected $jobs"
sort -n -u "$work/ids" | cmp -s - "$work/ids" || fail "squeue -o %i listed a job twice or out of order"

squeue -t all > "$work/default"
[ "$(head -1 "$work/default" | tr -s ' ')" = " JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)" ] ||
  fail "default header: '$(head -1 "$work/default")'"
tail -n +2 "$work/default" | awk '{print $1}' | cmp -s - "$work/ids" || fail "the default format lists other jobs than -o %i"
[ "$(tail -n +2 "$work/default" | awk '{print $5}' | sort -u)" = CD ] || fail "jobs not shown COMPLETED"

# A column the lean view lacks: the whole views, paged the same way.
squeue -t all -h -O jobid:12,workdir:30 | awk '{print $1}' > "$work/whole"
cmp -s "$work/whole" "$work/ids" || fail "whole views list other jobs than lean ones"

# Without -t: pending and running jobs only, and here every job has ended.
[ -z "$(squeue -h)" ] || fail "squeue without -t lists finished jobs"
pass "squeue over $jobs jobs: every page, every job once, lean and whole views"
