#!/usr/bin/env bash
# Per-job usage: a job that burns a known amount of CPU time and holds a known amount of
# memory has non-zero, plausible figures in sacct (MaxRSS, TotalCPU, ...), the same in seff,
# and live ones in sstat while it runs; sstat and seff refuse what they cannot show with
# Slurm's messages and a non-zero exit; another user cannot sstat the job. Lower bounds
# only: no timing assertion.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
command -v python3 >/dev/null || skip_test "needs python3 for the job that burns CPU and holds memory"
start_cluster 1 2 2000

# Seconds from Slurm's CPU time forms: "MM:SS.mmm", "00:MM:SS", "HH:MM:SS", "D-HH:MM:SS".
cpu_seconds() {
  awk -v t="$1" 'BEGIN { d = 0; if (index(t, "-")) { split(t, a, "-"); d = a[1]; t = a[2] }
    n = split(t, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print int(d * 86400 + s) }'
}
# Bytes from convert_num_unit's forms: "1234K", "150.50M", "2G", "1000".
size_bytes() {
  awk -v v="$1" 'BEGIN { u = substr(v, length(v)); n = v + 0; m = 1
    if (u == "K") m = 1024; else if (u == "M") m = 1048576; else if (u == "G") m = 1073741824
    printf "%d\n", n * m }'
}

# The job: 160 MiB touched, at least 2 s of CPU time (process time, whatever the load), then
# it waits for the test to let it go, so that sstat sees it running.
release=$work/release
ready=$work/ready
cat > "$work/burn.py" <<PY
import os, time
hold = b"x" * (160 << 20)
while time.process_time() < 2.0:
    pass
open("$ready", "w").close()
while not os.path.exists("$release"):
    time.sleep(0.05)
print(len(hold))
PY
job=$(sbatch --parsable --mem=1000M --wrap "python3 $work/burn.py")
wait_state "$job" RUNNING
poll_until 120 yes bash -c "[ -e '$ready' ] && echo yes" || fail "the job never got through its CPU time"

# sstat on the running job: the batch step's live figures.
live=$(sstat -j "$job.batch" -n -P -o JobID,MaxRSS,MaxRSSNode,AveCPU,NTasks) || fail "sstat failed: $live"
IFS='|' read -r live_id live_rss live_node live_cpu live_tasks <<<"$live"
[ "$live_id" = "$job.batch" ] || fail "sstat JobID: $live"
[ "$(size_bytes "$live_rss")" -ge $((150 << 20)) ] || fail "sstat MaxRSS below 150M: $live"
[ "$live_node" = n1 ] || fail "sstat MaxRSSNode: $live"
[ "$(cpu_seconds "$live_cpu")" -ge 1 ] || fail "sstat AveCPU below 1 s: $live"
[ "$live_tasks" = 1 ] || fail "sstat NTasks: $live"
# VM size, pages, the processes and the TRES usage strings, sampled from /proc.
vm=$(sstat -j "$job.batch" -n -P -o MaxVMSize,MaxVMSizeNode,MaxPagesNode,Pids,TRESUsageInMax,TRESUsageOutTot) ||
  fail "sstat failed: $vm"
IFS='|' read -r vm_size vm_node pages_node pids tres_in tres_out <<<"$vm"
[ "$(size_bytes "$vm_size")" -ge $((160 << 20)) ] || fail "sstat MaxVMSize below 160M: $vm"
[ "$vm_node" = n1 ] && [ "$pages_node" = n1 ] || fail "sstat MaxVMSizeNode, MaxPagesNode: $vm"
burn_pid=$(pgrep -f "python3 $work/burn.py" | head -1)
[[ ",$pids," == *",$burn_pid,"* ]] || fail "sstat Pids '$pids' lacks the job's python3 ($burn_pid)"
[[ "$tres_in" =~ ^cpu=[0-9:-]+,energy=0,fs/disk=[0-9.]+[KMG]?,mem=[0-9.]+[KMG],pages=[0-9.]+[KMG]?,vmem=[0-9.]+[KMG]$ ]] ||
  fail "sstat TRESUsageInMax: $tres_in"
[[ "$tres_out" =~ ^energy=0,fs/disk=[0-9.]+[KMG]?$ ]] || fail "sstat TRESUsageOutTot: $tres_out"
sstat -i -j "$job.batch" -n -P | finds -x "$job.batch|n1|[0-9,]*$burn_pid[0-9,]*" ||
  fail "sstat -i: $(sstat -i -j "$job.batch" -n -P)"
# -a lists the batch step; without it (and no step) the batch step is skipped, as in Slurm.
sstat -a -j "$job" -n -P -o JobID | finds -x "$job.batch" || fail "sstat -a does not list $job.batch"
[ -z "$(sstat -j "$job" -n -P -o JobID)" ] || fail "sstat -j JOB without -a lists the batch step"
header=$(sstat -j "$job.batch" | head -1)
[[ "$header" == "JobID         MaxVMSize  MaxVMSizeNode  MaxVMSizeTask  AveVMSize     MaxRSS MaxRSSNode MaxRSSTask "* ]] ||
  fail "sstat's default header: $header"
seff "$job" | finds -x "State: RUNNING" || fail "seff of a running job: $(seff "$job")"
seff "$job" | finds -x "WARNING: Efficiency statistics may be misleading for RUNNING jobs." ||
  fail "seff's warning for a running job: $(seff "$job")"

# Another user cannot sstat it (slurmd's "Invalid user id").
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
  set +e
  denied=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$bin/sstat" -j "$job.batch" -n 2>&1)
  status=$?
  set -e
  [ "$status" -ne 0 ] || fail "nobody's sstat of root's job succeeded: $denied"
  grep -q "sstat: error: problem getting step_layout for StepId=$job.batch: Invalid user id" <<<"$denied" ||
    fail "nobody's sstat: $denied"
  grep -q "^$job.batch" <<<"$denied" && fail "nobody's sstat shows the step's figures: $denied"
else
  skip_part "needs root and setpriv to sstat as another user"
fi

touch "$release"
wait_state "$job" COMPLETED

# sacct: the figures on the batch step, TotalCPU/UserCPU/SystemCPU on the job line too.
line=$(sacct -j "$job" -n -P -o JobID,MaxRSS,AveRSS,MaxRSSNode,MaxRSSTask,TotalCPU,UserCPU,SystemCPU,ConsumedEnergy)
batch=$(grep "^$job.batch|" <<<"$line") || fail "no batch step line: $line"
IFS='|' read -r _ max_rss ave_rss rss_node rss_task total_cpu user_cpu system_cpu energy <<<"$batch"
[ "$(size_bytes "$max_rss")" -ge $((150 << 20)) ] || fail "MaxRSS below 150M: $batch"
[ "$(size_bytes "$ave_rss")" -ge $((150 << 20)) ] || fail "AveRSS below 150M: $batch"
[ "$rss_node" = n1 ] && [ "$rss_task" = 0 ] || fail "MaxRSSNode/MaxRSSTask: $batch"
[ "$(cpu_seconds "$total_cpu")" -ge 2 ] || fail "TotalCPU below 2 s: $batch"
# The 160 MiB touched counts as system time (page faults): user time is only said to be some.
[ "$user_cpu" != 00:00:00 ] || fail "no UserCPU: $batch"
[[ "$system_cpu" =~ ^[0-9:.-]+$ ]] || fail "SystemCPU: $batch"
[ "$energy" = 0 ] || fail "ConsumedEnergy: $batch"
job_line=$(grep "^$job|" <<<"$line") || fail "no job line: $line"
IFS='|' read -r _ job_max_rss _ _ _ job_total_cpu _ _ _ <<<"$job_line"
[ -z "$job_max_rss" ] || fail "MaxRSS on the job line (Slurm prints it on steps only): $job_line"
[ "$(cpu_seconds "$job_total_cpu")" -ge 2 ] || fail "the job line's TotalCPU: $job_line"

# seff: consistent with sacct.
report=$(seff "$job")
grep -qx "Job ID: $job" <<<"$report" || fail "seff: $report"
grep -qx "State: COMPLETED (exit code 0)" <<<"$report" || fail "seff state: $report"
utilized=$(sed -n 's/^CPU Utilized: //p' <<<"$report")
[ "$(cpu_seconds "$utilized")" -ge 2 ] || fail "seff CPU Utilized below 2 s: $report"
[ "$(cpu_seconds "$utilized")" -le $(( $(cpu_seconds "$job_total_cpu") + 1 )) ] || fail "seff CPU above sacct's: $report"
grep -Eq '^CPU Efficiency: [0-9]+\.[0-9]{2}% of [0-9:-]+ core-walltime$' <<<"$report" || fail "seff CPU efficiency: $report"
memory=$(sed -n 's/^Memory Utilized: \([0-9.]*\) MB$/\1/p' <<<"$report")
[ -n "$memory" ] && awk -v m="$memory" 'BEGIN { exit !(m >= 150) }' || fail "seff Memory Utilized: $report"
grep -Eq '^Memory Efficiency: [0-9]+\.[0-9]{2}% of 1000\.00 MB$' <<<"$report" || fail "seff memory efficiency: $report"

# An srun step: each task measured on its own (wait4), the step line has the per-task figures.
cat > "$work/task.py" <<'PY'
import time
hold = b"x" * (64 << 20)
while time.process_time() < 0.5:
    pass
PY
stepped=$(sbatch --parsable -n 2 --mem=1000M --wrap "srun -n 2 python3 $work/task.py")
wait_state "$stepped" COMPLETED
step=$(sacct -j "$stepped" -n -P -o JobID,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,TotalCPU,MinCPU,NTasks | grep "^$stepped.0|") ||
  fail "no step line: $(sacct -j "$stepped" -n -P -o JobID,MaxRSS)"
IFS='|' read -r _ step_rss step_node step_task step_ave step_cpu step_min step_tasks <<<"$step"
[ "$(size_bytes "$step_rss")" -ge $((60 << 20)) ] || fail "step MaxRSS below 60M: $step"
[ "$(size_bytes "$step_ave")" -ge $((60 << 20)) ] || fail "step AveRSS below 60M: $step"
[ "$step_node" = n1 ] && { [ "$step_task" = 0 ] || [ "$step_task" = 1 ]; } || fail "step MaxRSSNode/Task: $step"
[ "$(cpu_seconds "$step_cpu")" -ge 1 ] || fail "step TotalCPU below 1 s (two tasks of 0.5 s): $step"
[ "$step_min" = 00:00:00 ] || [[ "$step_min" =~ ^00:00:0[0-9]$ ]] || fail "step MinCPU: $step"
[ "$step_tasks" = 2 ] || fail "step NTasks: $step"

# Refusals.
expect_refusal() {  # expected-status expected-stderr command...
  local want=$1 text=$2
  shift 2
  set +e
  local output
  output=$("$@" 2>&1 >/dev/null)
  local status=$?
  set -e
  [ "$status" -eq "$want" ] || fail "$* exited $status, not $want: $output"
  grep -qF -- "$text" <<<"$output" || fail "$*: '$output' lacks '$text'"
}
expect_refusal 2 "Job not found." seff 999999
expect_refusal 1 "sstat: error: You didn't give me any jobs to stat." sstat
expect_refusal 1 "sstat: error: couldn't get steps for job 999999" sstat -j 999999
expect_refusal 1 "sstat: error: No steps running for job $job" sstat -j "$job"
expect_refusal 1 "sstat: error: StepId=$job.batch not found running." sstat -j "$job.batch"
expect_refusal 1 'sstat: error: Invalid field requested: "Bogus"' sstat -j "$job" -o Bogus
expect_refusal 1 'sacct: error: Invalid field requested: "Bogus"' sacct -j "$job" -o Bogus
held=$(sbatch --parsable -H --wrap true)
expect_refusal 1 "sstat: error: No steps running for job $held" sstat -j "$held"
set +e
pending=$(seff "$held")
status=$?
set -e
[ "$status" -ne 0 ] || fail "seff of a pending job exited 0"
grep -qx "Efficiency not available for jobs in the PENDING state." <<<"$pending" || fail "seff pending: $pending"
scancel "$held"

pass "job usage: sacct MaxRSS $max_rss TotalCPU $total_cpu, seff and sstat agree; refusals as Slurm's"
