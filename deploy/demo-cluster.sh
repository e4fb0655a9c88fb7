#!/usr/bin/env bash
# `make demo`: a local cluster (cairnctld + 2 cairnd) runs a few real batch jobs,
# shows squeue, scontrol show job, sacct and the job's audit trail, writes a timeline of
# the run (BUILD/demo/timeline.html), then stops.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
export PATH="$build/bin:$PATH"
dir=$(mktemp -d /tmp/cairn-demo-XXXXXX)
trap 'cairn local down --dir "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
show() { echo; echo "\$ $*"; "$@"; }

echo "Starting a local cluster in $dir ..."
eval "$(cairn local up --dir "$dir" --nodes 2 --cpus 2 --memory 2000)"
cd "$dir"
show sinfo

cat > hello.sh <<'SCRIPT'
#!/bin/sh
#SBATCH -J hello
#SBATCH -t 0:30
#SBATCH -n2
echo "Hello from job $SLURM_JOB_ID on $SLURMD_NODENAME ($SLURM_JOB_NODELIST)"
srun -n2 -l sh -c 'echo "step $SLURM_STEP_ID task $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME"'
sleep 2
SCRIPT
show sbatch hello.sh
show sbatch -J sleeper -t 1 --wrap 'sleep 3; echo done sleeping'
show sbatch -J failing --wrap 'echo about to fail >&2; exit 3'
show sbatch -J held -H --wrap 'true'
sleep 1
show squeue
show scontrol show job 1
show scancel 4
for _ in $(seq 100); do
  [ -z "$(squeue -h -t PD,R,CG)" ] && break
  sleep 0.1
done
show srun -N2 -l printenv SLURMD_NODENAME
show sacct -o JobID,JobName,State,ExitCode,Elapsed,NodeList
show cat slurm-1.out
show cairn log audit --job 1
# Pictures of this run, kept after the cluster is gone.
pictures="$build/demo"
mkdir -p "$pictures"
show cairn log timeline --html "$pictures/timeline.html" --svg "$pictures/timeline.svg"
show cairn log audit --job 1 --html "$pictures/audit-job1.html"
echo
echo "The timeline of this run: file://$pictures/timeline.html (open it in a browser; job 1's story: file://$pictures/audit-job1.html)"
echo
echo "Demo done; stopping the cluster."
