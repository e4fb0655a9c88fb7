#!/usr/bin/env bash
# What a hostile or careless user sends is refused with Slurm's words and a non-zero exit:
# a negative nice from a plain user, counts whose product wraps, scripts and environments
# over SchedulerParameters=max_script_size (refused by sbatch, and by the controller when
# sbatch is told otherwise), job lists naming no job, an unknown user, a field list without
# a field; and a configuration file that is empty or has two default partitions.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster_with 2 2 1000 "SchedulerParameters=bf_continue,max_script_size=100000"


# 1. Only operators may lower their nice value (the check is the controller's).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
  mkdir -m 777 shared
  cd shared
  expect_error "sbatch: error: Batch job submission failed: Invalid --nice value" \
    as_nobody "$bin/sbatch" --nice=-100000 --wrap true
  expect_error "sbatch: error: Batch job submission failed: Invalid --nice value" \
    as_nobody "$bin/sbatch" --nice=-1 --hold --wrap true
  job=$(as_nobody "$bin/sbatch" --parsable --nice=50 --hold --wrap true)
  scontrol show job "$job" | finds "Nice=50 " || fail "a positive nice was not kept"
  cd ..
else
  echo "SKIP part 1 (plain user): needs root and setpriv to run sbatch as another user"
fi
job=$(sbatch --parsable --nice=-100000 --hold --wrap true)
scontrol show job "$job" | finds "Nice=-100000 " || fail "root's negative nice was not kept"
expect_error "sbatch: error: Invalid --nice value, out of range (+/- 2147483645)" sbatch --nice=-2147483646 --wrap true

# 2. Products of user numbers are computed without wrapping.
expect_error "sbatch: error: Batch job submission failed: More processors requested than permitted" \
  sbatch -n 65536 -c 65536 --wrap true
expect_error "sbatch: error: Batch job submission failed: More processors requested than permitted" \
  sbatch -n 3 -c 2 --wrap true  # the partition has 4 CPUs
expect_error "sbatch: error: Batch job submission failed: Memory required by task is not available" \
  sbatch -n 2 --mem-per-cpu=8388608T --wrap true  # 2^43 MB per CPU
job=$(sbatch --parsable -N -1 --hold --wrap true)  # Slurm's "at most one node": one node
scontrol show job "$job" | finds "NumNodes=1 " || fail "-N -1: $(scontrol show job "$job" | grep -o 'NumNodes=[^ ]*')"

# 3. max_script_size bounds the script and the environment; sbatch checks first, the controller too.
small=$(printf '#!/bin/sh\ntrue\n')
big="$small
$(head -c 110000 /dev/zero | tr '\0' '#')"
half=$(head -c 60000 /dev/zero | tr '\0' x)  # two of them: one variable may not pass 128 KiB (execve)
too_long="sbatch: error: Batch job submission failed: Pathname of a file, directory or other parameter too long"
expect_error "$too_long" sbatch <<<"$big"
expect_error "$too_long" env "BIG1=$half" "BIG2=$half" sbatch --wrap true
# A CLI configured with a larger limit sends them: the controller refuses them with the same words.
sed 's/max_script_size=100000/max_script_size=1000000/' "$CAIRN_CONF" > lenient.conf
expect_error "$too_long" env CAIRN_CONF="$PWD/lenient.conf" sbatch <<<"$big"
expect_error "$too_long" env CAIRN_CONF="$PWD/lenient.conf" "BIG1=$half" "BIG2=$half" sbatch --wrap true
sbatch --parsable --hold <<<"$small" >/dev/null || fail "a small script was refused"

# 4. Job lists that name no job, unknown users, field lists without a field.
for verb in hold release suspend resume requeue; do
  expect_error "Invalid job id specified for job " scontrol "$verb" ''
done
expect_error "Invalid job id specified for job ," scontrol hold ,
expect_error "scancel: error: Invalid job id specified: $job,,$job" scancel "$job,,$job"
expect_error "scancel: error: Invalid job id specified: " scancel ''
expect_error "squeue: error: Invalid user: nosuchuser-cairn" squeue -u nosuchuser-cairn
expect_error "scancel: error: Invalid user name: nosuchuser-cairn" scancel -u nosuchuser-cairn
squeue -u root -h -o %i | finds -x "$job" || fail "squeue -u root does not list job $job"
squeue -u 0 -h -o %i | finds -x "$job" || fail "squeue -u 0 (a uid, as Slurm takes it) does not list job $job"
expect_error 'sacct: error: Invalid field requested: ""' sacct -o ,,,
sacct -n -X -o JobID, -j "$job" | finds "$job" || fail "sacct -o JobID, (a trailing comma) failed"

# 5. A controller refuses an empty configuration file, and two default partitions, naming them.
: > empty.conf
set +e; out=$("$bin/cairnctld" --conf "$PWD/empty.conf" 2>&1); rc=$?; set -e
[ "$rc" != 0 ] && echo "$out" | finds "$PWD/empty.conf: the configuration file is empty" ||
  fail "cairnctld on an empty file: rc=$rc '$out'"
printf 'NodeName=x1\nPartitionName=a Nodes=x1 Default=YES\nPartitionName=b Nodes=x1 Default=YES\n' > two.conf
set +e; out=$("$bin/cairnctld" --conf "$PWD/two.conf" 2>&1); rc=$?; set -e
[ "$rc" != 0 ] && echo "$out" | finds "two.conf:3: partitions 'a' (line 2) and 'b' both say Default=YES" ||
  fail "cairnctld with two default partitions: rc=$rc '$out'"
echo "PASS"
