#!/usr/bin/env bash
# `make scale` in small (test/scale/scale.sh): 200 simulated nodes of 8 CPUs, a seeded 500-job
# synthetic trace compressed to arrive in 15 s offering 1.1 times the site's CPUs, the schedule
# audited at the end; its figures are printed, and it fails on an auditor violation or a job
# left over (never on a time).
set -euo pipefail
build=$1
SCALE_NODES=200 SCALE_CPUS=8 SCALE_JOBS=500 SCALE_WALL=15 SCALE_SEED=18 SCALE_DRAIN=240 \
  bash "$(dirname "$0")/../scale/scale.sh" "$build"
echo "a simulated site of 200 nodes ran a 500-job trace with no auditor violation"
