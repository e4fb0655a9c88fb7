#!/usr/bin/env bash
# Jobs and steps are confined to their CPUs (Slurm's task/affinity): a 1-CPU job sees one
# CPU in /proc/self/status, two jobs on one node get disjoint CPUs, a step's tasks are each
# bound to their own CPU of the job's by default (SLURM_CPU_BIND*), --cpu-bind=none gives
# them the job's whole set; and after a kill -9 and restart of the agent, a new job does not
# get the CPU of a job that ran on.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"

require_two_cpus
start_cluster 1 2 1000
agent=$(local_agent_pid n1)

wait_file() {  # path
  for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done
  fail "$1 was not written"
}
allowed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1"; }

# 1. Two 1-CPU jobs at once: one CPU each, not the same.
holder='grep Cpus_allowed_list /proc/self/status > cpus.$SLURM_JOB_ID; while [ ! -e release.$SLURM_JOB_ID ]; do sleep 0.05; done'
first=$(sbatch --parsable -n1 --wrap "$holder")
second=$(sbatch --parsable -n1 --wrap "$holder")
wait_state "$first" RUNNING
wait_state "$second" RUNNING
wait_file "cpus.$first"
wait_file "cpus.$second"
a=$(allowed "cpus.$first")
b=$(allowed "cpus.$second")
[ "$(count_cpus "$a")" = 1 ] || fail "a 1-CPU job sees CPUs $a"
[ "$(count_cpus "$b")" = 1 ] || fail "a 1-CPU job sees CPUs $b"
[ "$a" != "$b" ] || fail "two jobs on one node got the same CPU $a"
grep -qh "JobId=$first: CPU_IDs=" "$work"/*.log || fail "the agent did not log the CPU ids of job $first"
touch "release.$first" "release.$second"
wait_state "$first" COMPLETED
wait_state "$second" COMPLETED

# 2. A step's tasks: each bound to its own CPU of the job's by default; --cpu-bind=none: the job's.
cat > steps.sh <<'EOF'
#!/bin/sh
srun -n2 sh -c 'echo "task $SLURM_LOCALID $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status) bind=$SLURM_CPU_BIND type=$SLURM_CPU_BIND_TYPE list=$SLURM_CPU_BIND_LIST"'
srun -n2 --cpu-bind=none sh -c 'echo "unbound $SLURM_LOCALID $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status) type=$SLURM_CPU_BIND_TYPE"'
EOF
steps=$(sbatch --parsable -n2 -o steps.out steps.sh)
wait_state "$steps" COMPLETED 40
t0=$(awk '$1 == "task" && $2 == 0 {print $3}' steps.out)
t1=$(awk '$1 == "task" && $2 == 1 {print $3}' steps.out)
[ -n "$t0" ] && [ -n "$t1" ] || fail "the step's tasks did not say their CPUs: $(cat steps.out)"
[ "$(count_cpus "$t0")" = 1 ] && [ "$(count_cpus "$t1")" = 1 ] && [ "$t0" != "$t1" ] ||
  fail "tasks of a 2-CPU step should each have their own CPU: $(cat steps.out)"
grep -q "^task 0 .* bind=quiet,mask_cpu:0x[0-9A-F]*,0x[0-9A-F]* type=mask_cpu: list=0x" steps.out ||
  fail "SLURM_CPU_BIND*: $(cat steps.out)"
u0=$(awk '$1 == "unbound" && $2 == 0 {print $3}' steps.out)
[ "$(count_cpus "$u0")" = 2 ] || fail "--cpu-bind=none should leave a task the job's 2 CPUs: $(cat steps.out)"
grep -q "^unbound 0 .* type=none" steps.out || fail "SLURM_CPU_BIND_TYPE with none: $(cat steps.out)"

# 3. A kill -9 and restart of the agent: the running job keeps its CPU, a new job gets the other.
kept=$(sbatch --parsable -n1 --wrap "$holder")
wait_state "$kept" RUNNING
wait_file "cpus.$kept"
k=$(allowed "cpus.$kept")
kill_hard "$agent"
restart_agent n1
wait_registrations n1 2
grep -qh "JobId=$kept (adopted): CPU_IDs=" "$work"/*.log || fail "the restarted agent did not take back the CPUs of job $kept"
newer=$(sbatch --parsable -n1 --wrap "$holder")
wait_state "$newer" RUNNING
wait_file "cpus.$newer"
n=$(allowed "cpus.$newer")
[ "$n" != "$k" ] || fail "after the agent restarted, job $newer got CPU $n of job $kept, still running"
touch "release.$kept" "release.$newer"
wait_state "$kept" COMPLETED
wait_state "$newer" COMPLETED
pass "cpu binding: OK"
