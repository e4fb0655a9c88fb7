#!/usr/bin/env bash
# Burst buffers end to end: reservation against the pool ledger, real stage-in
# and stage-out by the agent's stager, release on every ending, cancel during
# stage-in, and a controller killed (-9) during stage-in.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
bbconf=$(mktemp /tmp/cairn-bb-conf-XXXXXX)
at_exit_after_stop 'rm -f "$bbconf"'
echo "BurstBuffer=Pool=fast Capacity=100G Path=$work/bb Granularity=1G" > "$bbconf"
start_cluster 2 2 1000 "$bbconf"
mkdir -p bb

used() { scontrol show burstbuffer | sed -n 's/.*PoolName\[0\]=fast .*UsedSpace=\([^ ]*\) .*/\1/p'; }
wait_used() {  # size [seconds]
  poll_until "${2:-20}" "$1" used || fail "pool fast uses '$(used)', expected $1"
}
# A source big enough that its stage-in is seen (sparse: no disk needed to create it).
big_source() { truncate -s "$2" "$1"; }

# 1. Larger than the whole pool: refused at submit, with a clear error.
if out=$(sbatch --bb "capacity=200G" --wrap true 2>&1); then fail "a 200G request was accepted: $out"; fi
grep -q "exceeds the capacity of pool fast (100G)" <<<"$out" || fail "200G refusal said: $out"

# 2. Staged data is visible to the job, its results are staged out, the directory goes, capacity is released.
mkdir -p input/tree/sub results
echo "payload" > input/data.txt
echo "deep" > input/tree/sub/leaf.txt
cat > staged.sh <<'SCRIPT'
#!/bin/sh
#BB capacity=10G
#BB stage_in source=input/data.txt destination=$BB_JOB_DIR/data.txt
#BB stage_in source=input/tree destination=$BB_JOB_DIR/tree
#BB stage_out source=$BB_JOB_DIR/out destination=results/out
cat "$BB_JOB_DIR/data.txt" "$DW_JOB_STRIPED/tree/sub/leaf.txt"
mkdir -p "$BB_JOB_DIR/out" && echo "result of $SLURM_JOB_ID" > "$BB_JOB_DIR/out/answer.txt"
echo "dir=$BB_JOB_DIR"
SCRIPT
job=$(sbatch --parsable staged.sh)
wait_state "$job" COMPLETED 30
grep -q "^payload$" "slurm-$job.out" || fail "the job did not see its staged file: $(cat "slurm-$job.out")"
grep -q "^deep$" "slurm-$job.out" || fail "the job did not see its staged tree: $(cat "slurm-$job.out")"
grep -q "dir=$work/bb/job_$job" "slurm-$job.out" || fail "BB_JOB_DIR: $(cat "slurm-$job.out")"
[ "$(cat results/out/answer.txt)" = "result of $job" ] || fail "stage-out did not bring the results back"
wait_used 0
[ ! -e "bb/job_$job" ] || fail "the job's burst-buffer directory was left behind"
[ "$(sacct -j "$job" -X -n -P -o BBStagedIn)" = 13 ] || fail "staged bytes: $(sacct -j "$job" -X -n -P -o BBStagedIn)"
scontrol show job "$job" | finds "BurstBuffer=fast:10G" || fail "scontrol show job: no BurstBuffer="
for kind in BbReserved BbStageStarted BbStageReady BbStageOutDone BbReleased; do
  [ "$(cairn log dump --kind "$kind" --job "$job" | wc -l)" -ge 1 ] || fail "no $kind for job $job"
done
[ "$(cairn log dump --kind BbReleased --job "$job" | wc -l)" = 1 ] || fail "released more than once"

# 3. Two 60G jobs on a 100G pool: the second waits for the first's release.
# The first runs until the test has looked (a fixed sleep could end first on a loaded machine).
first=$(sbatch --parsable --bb "capacity=60G" --wrap "while [ ! -e $work/first.go ]; do sleep 0.05; done")
wait_state "$first" RUNNING
second=$(sbatch --parsable --bb "capacity=60G" --wrap 'true')
wait_reason "$second" BurstBufferResources
[ "$(used)" = 60G ] || fail "used while one 60G job runs: $(used)"
scontrol show burstbuffer | finds "JobID=$first Pool=fast Size=60G State=running" || fail "holder not shown: $(scontrol show burstbuffer)"
touch "$work/first.go"
wait_state "$first" COMPLETED 20
wait_state "$second" COMPLETED 20
wait_used 0

# 4. A stage-in that takes a while shows BurstBufferStageIn; cancelling it releases and removes everything.
big_source big.dat 3G
job=$(sbatch --parsable --bb "capacity=20G stage_in=big.dat:big.dat" --wrap 'true')
wait_reason "$job" BurstBufferStageIn
for _ in $(seq 100); do [ -e "bb/job_$job/big.dat" ] && break; sleep 0.05; done
[ -e "bb/job_$job/big.dat" ] || fail "stage-in did not start copying"
scontrol show job "$job" | finds "BurstBufferState=staging-in" || fail "BurstBufferState while staging in"
scancel "$job"
wait_state "$job" CANCELLED
wait_used 0
for _ in $(seq 100); do [ ! -e "bb/job_$job" ] && break; sleep 0.05; done
[ ! -e "bb/job_$job" ] || fail "cancel during stage-in left bb/job_$job behind"

# 5. A missing source fails the job with a clear reason and releases the capacity.
job=$(sbatch --parsable --bb "capacity=1G stage_in=no-such-file:x" --wrap 'true')
wait_state "$job" FAILED
scontrol show job "$job" | finds "Reason=BurstBufferOperationFailure" || fail "stage-in failure reason"
scontrol show job "$job" | finds "SystemComment=stage-in failed: cannot stage .*no-such-file: No such file or directory" ||
  fail "stage-in failure message: $(scontrol show job "$job" | grep SystemComment)"
wait_used 0
[ ! -e "bb/job_$job" ] || fail "a failed stage-in left its directory"

# 6. The controller is killed (-9) during stage-in; after a restart the job still completes.
rm -f big.dat
big_source big.dat 1500M
job=$(sbatch --parsable --bb "capacity=20G stage_in=big.dat:big.dat" --wrap 'ls -l "$BB_JOB_DIR"')
wait_reason "$job" BurstBufferStageIn
kill_hard "$(head -1 pids)"
restart_controller
wait_state "$job" COMPLETED 60
grep -q "big.dat" "slurm-$job.out" || fail "the job did not see its data after the restart"
wait_used 0
[ "$(cairn log dump --kind BbReleased --job "$job" | wc -l)" = 1 ] || fail "released more than once after a restart"
echo "burst_buffer: all checks passed"
