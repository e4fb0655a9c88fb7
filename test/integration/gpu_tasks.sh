#!/usr/bin/env bash
# Issue 23's remaining GPU gaps with real daemons on fake device files (two nodes of four GPUs
# each): --ntasks-per-gpu (SLURM_NTASKS_PER_GPU in the batch job, SLURM_NTASKS_PER_TRES in
# its steps, each task bound to its GPU as the implicit --gpu-bind=single:K binds it) and
# sacct's TRES with gres/gpu for the batch step and the steps of srun.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"

mkdir "$work/dev"
for i in 0 1 2 3 4 5 6 7; do : > "$work/dev/gpu$i"; done
cat > "$work/gres.conf.in" <<EOF
NodeName=n1 Name=gpu Type=a100 File=$work/dev/gpu[0-3]
NodeName=n2 Name=gpu Type=a100 File=$work/dev/gpu[4-7]
EOF
local_up_args=(--gres n1=gpu:a100:4 --gres n2=gpu:a100:4 --gres-conf "$work/gres.conf.in")
start_cluster 2 4 4000

# What a node's running jobs hold (scontrol show node's GresUsed=, from their allocations).
gres_used() { scontrol show node "$1" | sed -n 's/^ *GresUsed=//p'; }

# 1. --ntasks-per-gpu=2 with --gpus=2: four tasks; the script sees SLURM_NTASKS_PER_GPU; srun's
# tasks (from that variable) SLURM_NTASKS_PER_TRES, and GPU 0 for tasks 0-1, GPU 1 for 2-3 (a task's
# SLURM_STEP_GPUS narrowed to its own, as gres_common's is_task lists).
cat > per_gpu.sh <<'EOF'
#!/bin/bash
echo "script: NTASKS=$SLURM_NTASKS PER_GPU=$SLURM_NTASKS_PER_GPU"
srun bash -c 'echo "task $SLURM_PROCID: CUDA=$CUDA_VISIBLE_DEVICES STEP_GPUS=$SLURM_STEP_GPUS PER_TRES=$SLURM_NTASKS_PER_TRES"' | sort
srun -n 2 --ntasks-per-gpu=1 bash -c 'echo "pair $SLURM_PROCID: CUDA=$CUDA_VISIBLE_DEVICES"' | sort
EOF
job=$(sbatch --parsable -w n1 --gpus=2 --ntasks-per-gpu=2 -o per_gpu.out per_gpu.sh)
wait_state "$job" COMPLETED 60
expected="script: NTASKS=4 PER_GPU=2
task 0: CUDA=0 STEP_GPUS=0 PER_TRES=2
task 1: CUDA=0 STEP_GPUS=0 PER_TRES=2
task 2: CUDA=1 STEP_GPUS=1 PER_TRES=2
task 3: CUDA=1 STEP_GPUS=1 PER_TRES=2
pair 0: CUDA=0
pair 1: CUDA=1"
[ "$(cat per_gpu.out)" = "$expected" ] || fail "--ntasks-per-gpu: $(cat per_gpu.out)"
# An explicit --gpu-bind wins over the implicit one; -n not a multiple of K is Slurm's gres error.
cat > explicit.sh <<'EOF'
#!/bin/bash
srun --gpu-bind=map_gpu:1 bash -c 'echo "task $SLURM_PROCID: CUDA=$CUDA_VISIBLE_DEVICES"' | sort
srun -n 3 --ntasks-per-gpu=2 true || true
EOF
job=$(sbatch --parsable -w n1 --gpus=2 --ntasks-per-gpu=1 -o explicit.out explicit.sh)
wait_state "$job" COMPLETED 60
expected="task 0: CUDA=1
task 1: CUDA=1
srun: error: Unable to create step for job $job: Invalid generic resource (gres) specification"
[ "$(cat explicit.out)" = "$expected" ] || fail "--gpu-bind with --ntasks-per-gpu: $(cat explicit.out)"

# 2. sacct: the batch step's AllocTRES has the first node's GPUs; a step of srun -G its own.
cat > tres.sh <<'EOF'
#!/bin/bash
srun -n1 -G1 true
srun -n1 true
EOF
job=$(sbatch --parsable -w n1 -n2 --gres=gpu:a100:2 -o /dev/null tres.sh)
wait_state "$job" COMPLETED 60
expected="$job|cpu=2,node=1,billing=2,gres/gpu=2,gres/gpu:a100=2|cpu=2,node=1,billing=2,gres/gpu=2,gres/gpu:a100=2
$job.batch|cpu=2,node=1,gres/gpu=2,gres/gpu:a100=2|
$job.0|cpu=1,node=1,gres/gpu=1,gres/gpu:a100=1|
$job.1|cpu=1,node=1,gres/gpu=2,gres/gpu:a100=2|"
got=$(sacct -n -P -j "$job" -o JobID,AllocTRES,ReqTRES)
[ "$got" = "$expected" ] || fail "sacct TRES: $got"

# 3. --gpus without -N takes as many nodes as its GPUs need, each giving its free ones in turn;
# with -N, node after node leaves one for each next node (Slurm's _set_job_bits1).
job=$(sbatch --parsable --gpus=6 -o /dev/null --wrap 'sleep 300')
wait_state "$job" RUNNING
[ "$(squeue -h -j "$job" -o '%D %N')" = "2 n[1-2]" ] || fail "--gpus=6: $(squeue -h -j "$job" -o '%D %N')"
gres_used n1 | finds -x "gpu:a100:4(IDX:0-3)" || fail "--gpus=6 on n1: $(gres_used n1)"
gres_used n2 | finds -x "gpu:a100:2(IDX:0-1)" || fail "--gpus=6 on n2: $(gres_used n2)"
scancel "$job"
wait_state "$job" CANCELLED
job=$(sbatch --parsable -N 2 --gpus=4 -o /dev/null --wrap 'sleep 300')
wait_state "$job" RUNNING
gres_used n1 | finds -x "gpu:a100:3(IDX:0-2)" || fail "-N 2 --gpus=4 on n1: $(gres_used n1)"
gres_used n2 | finds -x "gpu:a100:1(IDX:0)" || fail "-N 2 --gpus=4 on n2: $(gres_used n2)"
scancel "$job"
expect_error "sbatch: error: Batch job submission failed: Requested node configuration is not available" \
  sbatch --gpus=9 --wrap true
expect_error "sbatch: error: Batch job submission failed: Requested node configuration is not available" \
  sbatch -N 1 --gpus=5 --wrap true

# 4. gres.conf alone changed, then scontrol reconfigure: a configuration change in the log
# (ConfigApplied with what changed), in force at once, and --at shows each moment's.
before=$(date +%s)
while [ "$(date +%s)" = "$before" ]; do sleep 0.1; done  # the change falls in a later second
grep -v "NodeName=n2" "$work/gres.conf" > gres.conf.new  # n2's GPUs become counted only
cat gres.conf.new > "$work/gres.conf"
scontrol reconfigure
cairn log dump | finds "ConfigApplied .*gres.conf changed.*NodeName=n2 GRES units gpu:a100=counted" ||
  fail "no ConfigApplied for gres.conf: $(cairn log dump | grep ConfigApplied)"
scontrol show node n2 | finds "GresUsed=gpu:a100:0$" || fail "n2 live: $(scontrol show node n2 | grep GresUsed)"
scontrol --at "$(date -d "@$before" +%FT%T)" show node n2 | finds 'GresUsed=gpu:a100:0(IDX:N/A)$' ||
  fail "n2 --at before: $(scontrol --at "$(date -d "@$before" +%FT%T)" show node n2 | grep GresUsed)"
scontrol --at now show node n2 | finds "GresUsed=gpu:a100:0$" || fail "n2 --at now"
scontrol reconfigure  # the same files again: nothing to record
[ "$(cairn log dump | grep -c 'ConfigApplied .*gres.conf changed')" = 1 ] || fail "an unchanged reconfigure was recorded"

pass "GPUs: --ntasks-per-gpu, sacct's TRES of steps, --gpus over nodes, gres.conf reconfigured"
