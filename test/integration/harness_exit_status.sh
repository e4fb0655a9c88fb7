#!/usr/bin/env bash
# The test harness itself (cluster.bash): a test that fails still fails when it added its own
# exit steps (at_exit_before_stop / at_exit_after_stop), the steps run in their order, and its
# work directory goes. A trap that ran a step before cleanup passed the step's status on, so such
# tests could not fail.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
harness=$(cd "$(dirname "$0")" && pwd)/cluster.bash

# run_child OUTCOME: a test script that adds two steps and then ends with OUTCOME.
run_child() {
  cat >"$work/child.sh" <<EOF2
set -euo pipefail
build=$build
source "$harness"
echo "work=\$work"
at_exit_before_stop 'echo step-before; false'
at_exit_after_stop 'echo step-after'
$1
EOF2
  set +e
  child_out=$(bash "$work/child.sh" 2>&1)
  child_status=$?
  set -e
  child_work=$(sed -n 's/^work=//p' <<<"$child_out")
}

run_child 'fail "deliberate"'
[ "$child_status" = 1 ] || fail "a failing test with exit steps exited $child_status: $child_out"
[ "$(grep -E '^step-(before|after)$' <<<"$child_out" | tr '\n' ' ')" = "step-before step-after " ] ||
  fail "exit steps not run in order: $child_out"
[ -n "$child_work" ] && [ ! -e "$child_work" ] || fail "work directory '$child_work' left behind"

run_child 'exit 3'
[ "$child_status" = 3 ] || fail "a test exiting 3 with exit steps exited $child_status: $child_out"

run_child 'true'
[ "$child_status" = 0 ] || fail "a passing test with exit steps exited $child_status: $child_out"
echo "PASS"
