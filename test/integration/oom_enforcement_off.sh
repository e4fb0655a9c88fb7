#!/usr/bin/env bash
# An agent that does not enforce memory (here by ConstrainRAMSpace=no; the same
# path as a node without a usable memory controller) says so once at start,
# registers with enforcement off for scontrol show node, and runs jobs without
# a memory limit: never a silent pass.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster_with 1 2 2000 "ConstrainRAMSpace=no"

scontrol show node n1 | finds "MemoryEnforcement=off" || fail "scontrol show node: $(scontrol show node n1)"
[ "$(grep -c 'memory enforcement off: ConstrainRAMSpace=no' "$work/cairnd-n1.log")" = 1 ] ||
  fail "the agent did not say once that memory enforcement is off"

job=$(sbatch --parsable --mem=50M --wrap 'dd if=/dev/zero of=/dev/null bs=300M count=1')
wait_state "$job" COMPLETED
cairn log dump --job "$job" | finds OomDetected && fail "an unenforced job was reported as OOM"
echo "oom_enforcement_off: all checks passed"
