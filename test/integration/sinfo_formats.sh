#!/usr/bin/env bash
# sinfo's layouts against a real cluster: -s (NODES(A/I/O/T)), -l (the date line, then Slurm's
# long columns), -O names, %C CPUS(A/I/O/T) following a running job, SINFO_FORMAT, and the
# refusals (-o with -l, an unknown letter or -O name: Slurm's words, exit 1).
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

poll_until 60 "0/2/0/2" sinfo -h -o %F || fail "the two nodes are not idle: $(sinfo)"
summary=$(sinfo -h -s)
echo "$summary" | grep -Eq '^debug\* +up +[^ ]+ +0/2/0/2 n\[1-2\]$' || fail "sinfo -s: '$summary'"

holder=$(sbatch --parsable -o /dev/null -N1 -c 2 --wrap "while [ ! -e $work/release ]; do sleep 0.05; done")
wait_state "$holder" RUNNING
[ "$(sinfo -h -o %C)" = "2/2/0/4" ] || fail "sinfo %C with one busy node: '$(sinfo -h -o %C)'"
[ "$(sinfo -h -O nodeaiot:0)" = "1/1/0/2" ] || fail "sinfo -O nodeaiot: '$(sinfo -h -O nodeaiot:0)'"
[ "$(SINFO_FORMAT='%A' sinfo -h)" = "1/1" ] || fail "SINFO_FORMAT not used: '$(SINFO_FORMAT='%A' sinfo -h)'"

long=$(sinfo -l)
echo "$long" | head -1 | grep -Eq '^[A-Z][a-z]{2} [A-Z][a-z]{2} [0-9]{2} [0-9:]{8} [0-9]{4}$' ||
  fail "sinfo -l does not start with the date: '$(echo "$long" | head -1)'"
echo "$long" | sed -n 2p | finds "^PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST$" ||
  fail "sinfo -l header: '$(echo "$long" | sed -n 2p)'"
echo "$long" | grep -Eq ' allocated n1$| allocated n2$' || fail "sinfo -l shows no allocated node: $long"

refused() {  # expected-stderr command...
  local expected=$1
  shift
  local status=0
  "$@" >"$work/out" 2>"$work/err" || status=$?
  [ "$status" -ne 0 ] || fail "'$*' succeeded"
  [ "$(cat "$work/err")" = "$expected" ] || fail "'$*' said '$(cat "$work/err")', expected '$expected'"
}
refused "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry." \
  sinfo -l -o %P
refused "Invalid node format specification: Q" sinfo -o "%P %Q"
refused "sinfo: error: Invalid job format specification: nosuch" sinfo -O partition,nosuch

touch "$work/release"
wait_state "$holder" COMPLETED
pass "sinfo -s, -l, -O, %C and format refusals"
