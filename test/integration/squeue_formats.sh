#!/usr/bin/env bash
# squeue's formats against a real cluster: -O names with sizes and suffixes, SQUEUE_FORMAT and
# SQUEUE_FORMAT2 (ignored when -o, -O or -l is given), and Slurm's refusals: -o with -O,
# -o with -l, an unknown letter or name (non-zero, Slurm's words).
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 1 2 1000

held=$(sbatch --parsable -H -o /dev/null -J formats --comment "a note" --wrap true)
me=$(id -un)

line=$(squeue -h -j "$held" -O "jobid:.8|,username:10,state:0,name:.9,comment:0")
expected=$(printf '%8s|%-10s%s%9s%s' "$held" "$me" PENDING formats "a note")
[ "$line" = "$expected" ] || fail "squeue -O gives '$line', expected '$expected'"
header=$(squeue -j "$held" -O "jobid:.8,reason:12" | head -1)
[ "$header" = "   JOBIDREASON      " ] || fail "squeue -O header '$header'"
# A name without a size is 20 wide, left-justified.
[ "$(squeue -h -j "$held" -O reason)" = "JobHeldUser         " ] || fail "-O default width: '$(squeue -h -j "$held" -O reason)'"

[ "$(SQUEUE_FORMAT='%i:%t' squeue -h -j "$held")" = "$held:PD" ] || fail "SQUEUE_FORMAT not used"
[ "$(SQUEUE_FORMAT2='statecompact:3' squeue -h -j "$held")" = "PD " ] || fail "SQUEUE_FORMAT2 not used"
[ "$(SQUEUE_FORMAT='%i:%t' squeue -h -j "$held" -o %T)" = PENDING ] || fail "-o does not override SQUEUE_FORMAT"
SQUEUE_FORMAT='%i:%t' squeue -h -l -j "$held" | finds "JobHeldUser" || fail "-l does not override SQUEUE_FORMAT"

refused() {  # expected-stderr command...
  local expected=$1
  shift
  local status=0
  "$@" >"$work/out" 2>"$work/err" || status=$?
  [ "$status" -ne 0 ] || fail "'$*' succeeded"
  [ "$(cat "$work/err")" = "$expected" ] || fail "'$*' said '$(cat "$work/err")', expected '$expected'"
}
refused "squeue: error: -O (--Format) is incompatible with -o (--format)" squeue -o %i -O jobid
refused "squeue: error: -o (--format) is incompatible with -O (--Format)" squeue -O jobid -o %i
refused "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry." \
  squeue -l -o %i
refused "squeue: error: Invalid job format specification: @" squeue -o "%i %@"
refused "squeue: error: Invalid job format specification: nosuchfield" squeue -O jobid,nosuchfield

scancel "$held"
pass "squeue -O, SQUEUE_FORMAT/SQUEUE_FORMAT2 and format refusals"
