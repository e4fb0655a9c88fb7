#!/usr/bin/env bash
# GPUs as generic resources with real daemons on fake device files: n1 has four typed GPUs
# listed in gres.conf (character devices made with mknod, plain files where that is refused),
# n2 two counted-only ones. Counts and types are scheduled per node; jobs, steps and tasks get
# SLURM_JOB_GPUS / SLURM_STEP_GPUS and CUDA_VISIBLE_DEVICES & co. as Slurm 22.05 sets them
# (ConstrainDevices=yes: numbered from 0), --gpu-bind per task and -G per step; a job
# confined to two of the four devices cannot open the other two (v1 devices cgroup); sinfo
# %G, squeue %b, scontrol show node/job, sacct's TRES; the device choice survives a controller
# restart; bad requests get Slurm's errors and queue nothing.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"

mkdir "$work/dev"
fake_devices=char
# Four readable character devices of distinct numbers (zero, full, random, urandom): opening
# one the cgroup denies fails with EPERM, whatever the device is.
minor=(5 7 8 9)
for i in 0 1 2 3; do
  if ! mknod "$work/dev/gpu$i" c 1 "${minor[$i]}" 2>/dev/null; then
    fake_devices=plain
    : > "$work/dev/gpu$i"
  fi
done
chmod 666 "$work"/dev/gpu*
cat > "$work/gres.conf.in" <<EOF
# n1: four typed GPUs with device files; n2's two are counted only (its Gres= alone)
NodeName=n1 Name=gpu Type=mi300x File=$work/dev/gpu[0-3]
EOF
local_up_args=(--gres n1=gpu:mi300x:4 --gres n2=gpu:2 --gres-conf "$work/gres.conf.in")
start_cluster_with 2 4 4000 "ConstrainDevices=yes"

queued() { squeue -h -o %i | wc -l; }
contains() {  # text pattern what
  [[ "$1" == *"$2"* ]] || fail "$3: no '$2' in: $1"
}
# scontrol show job -d prints a node's GRES= once the agent said which CPUs the job has: polled.
wait_job_gres() {  # job gres
  for _ in $(seq 400); do
    [[ "$(scontrol show job -d "$1")" == *"GRES=$2"* ]] && return 0
    sleep 0.05
  done
  fail "scontrol show job -d $1 has no GRES=$2: $(scontrol show job -d "$1")"
}

# 1. sinfo and scontrol show node: the configured GRES.
nodes=$(sinfo -N -h -o '%N %G')
contains "$nodes" "n1 gpu:mi300x:4" "sinfo %G"
contains "$nodes" "n2 gpu:2" "sinfo %G"
node=$(scontrol show node n1)
contains "$node" "Gres=gpu:mi300x:4" "scontrol show node n1"
contains "$node" "GresUsed=gpu:mi300x:0(IDX:N/A)" "scontrol show node n1 (idle)"
contains "$(scontrol show node n2)" "GresUsed=gpu:0" "scontrol show node n2 (idle)"

# 2. Two jobs of two GPUs each on n1 get disjoint devices; each sees its own, numbered from 0.
# open.JOB appears whole (renamed): the test reads it as soon as it exists.
probe='env | grep -E "^(SLURM_JOB_GPUS|SLURM_GPUS_ON_NODE|CUDA_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|ZE_AFFINITY_MASK)=" | sort > env.$SLURM_JOB_ID
for d in '"$work"'/dev/gpu*; do if head -c1 "$d" >/dev/null 2>&1; then echo "$d open"; else echo "$d denied"; fi; done > open.tmp.$SLURM_JOB_ID
mv open.tmp.$SLURM_JOB_ID open.$SLURM_JOB_ID
while [ ! -e release.$SLURM_JOB_ID ]; do sleep 0.05; done'
first=$(sbatch --parsable -w n1 --gres=gpu:mi300x:2 --wrap "$probe")
second=$(sbatch --parsable -w n1 --gres=gpu:2 --wrap "$probe")
wait_state "$first" RUNNING
wait_state "$second" RUNNING
for job in "$first" "$second"; do
  for _ in $(seq 400); do [ -s "open.$job" ] && break; sleep 0.05; done
  [ -s "open.$job" ] || fail "job $job wrote no open.$job"
done
expected_first="CUDA_VISIBLE_DEVICES=0,1
GPU_DEVICE_ORDINAL=0,1
ROCR_VISIBLE_DEVICES=0,1
SLURM_GPUS_ON_NODE=2
SLURM_JOB_GPUS=0,1
ZE_AFFINITY_MASK=0,1"
[ "$(cat "env.$first")" = "$expected_first" ] || fail "job $first's GPU environment: $(cat "env.$first")"
[ "$(cat "env.$second")" = "${expected_first//SLURM_JOB_GPUS=0,1/SLURM_JOB_GPUS=2,3}" ] ||
  fail "job $second's GPU environment: $(cat "env.$second")"
contains "$(squeue -h -j "$first" -o %b)" "gres:gpu:mi300x:2" "squeue %b"
contains "$(scontrol show job "$first")" "TresPerNode=gres:gpu:mi300x:2" "scontrol show job"
contains "$(scontrol show job "$first")" "billing=1,gres/gpu=2,gres/gpu:mi300x=2" "scontrol show job TRES="
contains "$(scontrol show node n1)" "GresUsed=gpu:mi300x:4(IDX:0-3)" "scontrol show node n1 (busy)"
wait_job_gres "$second" "gpu:mi300x:2(IDX:2-3)"

# 3. Confinement: each job opens its two devices and not the other two.
if grep -q "device confinement: devices cgroups" "$work"/cairnd-n1.log && [ "$fake_devices" = char ]; then
  expected_open="$work/dev/gpu0 open
$work/dev/gpu1 open
$work/dev/gpu2 denied
$work/dev/gpu3 denied"
  [ "$(cat "open.$first")" = "$expected_open" ] || fail "job $first confined to gpu0-1 opened: $(cat "open.$first")"
  [ "$(cat "open.$second")" = "$(echo "$expected_open" | sed 's/open$/X/; s/denied$/open/; s/X$/denied/')" ] ||
    fail "job $second confined to gpu2-3 opened: $(cat "open.$second")"
else
  why=$(grep -h "device confinement" "$work"/cairnd-n1.log | head -1)
  skip_part "device confinement not checked (fake devices: $fake_devices files; agent: ${why:-no word})"
fi

# 4. A third GPU job waits for resources; the controller's choice survives its restart.
third=$(sbatch --parsable -w n1 --gres=gpu:1 --wrap true)
wait_reason "$third" Resources
kill_hard "$(sed -n 1p "$work/pids")"
restart_controller
wait_job_gres "$second" "gpu:mi300x:2(IDX:2-3)"  # after a restart: from the log
touch "release.$first" "release.$second"
wait_state "$first" COMPLETED
wait_state "$third" COMPLETED
alloc=$(sacct -j "$first" -X -n -P -o AllocTRES,ReqTRES)
contains "$alloc" "cpu=1," "sacct AllocTRES"
[[ "$alloc" == *",gres/gpu=2,gres/gpu:mi300x=2|"*",gres/gpu=2,gres/gpu:mi300x=2" ]] ||
  fail "sacct AllocTRES|ReqTRES of job $first: $alloc"

# 5. Counted-only GPUs (n2): their count, no device list.
counted=$(sbatch --parsable -w n2 --gpus=2 --wrap "$probe")
wait_state "$counted" RUNNING
for _ in $(seq 400); do [ -s "open.$counted" ] && break; sleep 0.05; done
[ "$(cat "env.$counted")" = "SLURM_GPUS_ON_NODE=2" ] || fail "counted-only GPUs' environment: $(cat "env.$counted")"
contains "$(squeue -h -j "$counted" -o %b)" "N/A" "squeue %b of a --gpus job"
contains "$(scontrol show job "$counted")" "TresPerJob=gres:gpu:2" "scontrol show job of a --gpus job"
touch "release.$counted"
wait_state "$counted" COMPLETED

# 5b. --ntasks-per-gpu sets the tasks from the GPUs (or the GPUs from -n); --gpus-per-socket
# counts per node with --sockets-per-node; --gres-flags and --gpu-freq are accepted hints.
per_gpu=$(sbatch --parsable -H --ntasks-per-gpu=2 --gpus=2 --gres-flags=enforce-binding --gpu-freq=high --wrap true)
contains "$(scontrol show job "$per_gpu")" "NumTasks=4 " "--ntasks-per-gpu with --gpus"
from_tasks=$(sbatch --parsable -H --ntasks-per-gpu=2 -n 4 --wrap true)
contains "$(scontrol show job "$from_tasks")" "TresPerJob=gres:gpu:2" "--ntasks-per-gpu with -n"
per_socket=$(sbatch --parsable -H --gpus-per-socket=1 --sockets-per-node=2 --wrap true)
contains "$(scontrol show job "$per_socket")" "TresPerNode=gres:gpu:2" "--gpus-per-socket"
scancel "$per_gpu" "$from_tasks" "$per_socket"

# 6. Steps: all of the job's GPUs by default, -G N of them, --gpu-bind per task.
cat > steps.sh <<'EOF'
#!/bin/bash
srun -n1 printenv SLURM_STEP_GPUS CUDA_VISIBLE_DEVICES | paste -sd' ' | sed 's/^/all: /'
srun -n1 -G1 printenv SLURM_STEP_GPUS CUDA_VISIBLE_DEVICES | paste -sd' ' | sed 's/^/one: /'
srun -n2 -l --gpu-bind=single:1 printenv CUDA_VISIBLE_DEVICES | sort | sed 's/^/single: /'
srun -n2 -l --gpu-bind=map_gpu:3,0 printenv CUDA_VISIBLE_DEVICES | sort | sed 's/^/map: /'
EOF
stepped=$(sbatch --parsable -w n1 -n2 --gres=gpu:4 -o steps.out steps.sh)
wait_state "$stepped" COMPLETED
expected_steps="all: 0,1,2,3 0,1,2,3
one: 0 0
single: 0: 0
single: 1: 1
map: 0: 3
map: 1: 0"
[ "$(cat steps.out)" = "$expected_steps" ] || fail "steps' GPUs: $(cat steps.out)"

# 6b. Concurrent -G1 steps of a 2-GPU job hold different GPUs; a third waits (srun's "step
# creation temporarily disabled" lines) until one ends and then gets its GPU; -G3 is refused.
cat > concurrent.sh <<'SCRIPT'
#!/bin/bash
for s in a b; do
  srun -n1 -G1 bash -c "printenv SLURM_STEP_GPUS > step.$s; while [ ! -e release.$s ]; do sleep 0.05; done" &
done
while [ ! -s step.a ] || [ ! -s step.b ]; do sleep 0.05; done
srun -n1 -G1 printenv SLURM_STEP_GPUS > step.c
touch release.b
srun -n1 -G3 true
wait
SCRIPT
concurrent=$(sbatch --parsable -w n1 -n2 --gres=gpu:2 -o concurrent.out concurrent.sh)
for _ in $(seq 600); do finds -s "step creation temporarily disabled" concurrent.out && break; sleep 0.05; done
[ "$(sort step.a step.b | paste -sd' ')" = "0 1" ] || fail "concurrent steps' GPUs: $(cat step.a step.b)"
[ ! -s step.c ] || fail "a third step ran while both GPUs were held: $(cat step.c)"
touch release.a
wait_state "$concurrent" COMPLETED
[ "$(cat step.c)" = "$(cat step.a)" ] || fail "the third step did not get the freed GPU: $(cat step.a step.c)"
expected_concurrent="srun: Job $concurrent step creation temporarily disabled, retrying (Requested nodes are busy)
srun: Step created for job $concurrent
srun: error: Unable to create step for job $concurrent: Invalid generic resource (gres) specification"
[ "$(cat concurrent.out)" = "$expected_concurrent" ] || fail "srun's lines: $(cat concurrent.out)"

# 7. Bad requests: Slurm's errors, non-zero, nothing queued.
before=$(queued)
bad() {  # expected-error sbatch-options...
  local expected=$1 out
  shift
  if out=$(sbatch "$@" --wrap true 2>&1); then fail "sbatch $* was accepted: $out"; fi
  [ "$out" = "sbatch: error: Batch job submission failed: $expected" ] || fail "sbatch $*: $out"
}
bad "Invalid generic resource (gres) specification" --gres=fpga:1
bad "Invalid generic resource (gres) specification" --gres=gpu::1
bad "Invalid generic resource (gres) specification" --gpus=a:b:1
bad "Requested node configuration is not available" --gres=gpu:abc
bad "Requested node configuration is not available" --gres=gpu:a100:1
bad "Requested node configuration is not available" --gres=gpu:mi300x:5
bad "Requested node configuration is not available" --gpus-per-node=5
out=$(sbatch --gpu-bind=sideways --wrap true 2>&1) && fail "--gpu-bind=sideways was accepted"
[ "$out" = "sbatch: error: Invalid --gpu-bind argument: gpu:sideways" ] || fail "--gpu-bind=sideways: $out"
[ "$(queued)" = "$before" ] || fail "a refused request was queued: $(squeue)"

pass "gres: counts, types, devices, environment, binding, displays, errors"
