#!/usr/bin/env bash
# srun's stdin reaches its tasks as Slurm 22.05's does (-i/--input; the default is every
# task): `echo hello | srun cat`, every task with --input=all, one with --input=N, none with
# --input=none (EOF at once), a file, a file per task (%t), a few MB intact through a task
# that reads slowly (back-pressure), in a step inside a batch job and in srun's own job; and
# sbatch -i, the batch script's stdin from a file.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 1 2 1000

# 1. srun outside an allocation: the default forwards stdin.
out=$(echo hello | timeout 120 srun cat)
[ "$out" = hello ] || fail "echo hello | srun cat printed '$out'"

# 2. --input=all: every task gets it; -l tells them apart.
out=$(timeout 120 srun -n2 -l --input=all cat <<< x | sort)
[ "$out" = "$(printf '0: x\n1: x')" ] || fail "srun -n2 --input=all cat <<< x printed '$out'"
out=$(timeout 120 srun -n2 -l cat <<< y | sort)
[ "$out" = "$(printf '0: y\n1: y')" ] || fail "srun -n2 cat (the default: all) printed '$out'"

# 3. --input=1: task 1 only; task 0 reads EOF at once.
out=$(printf 'a\n' | timeout 120 srun -n2 --input=1 sh -c 'echo "$SLURM_PROCID:$(cat)"' | sort)
[ "$out" = "$(printf '0:\n1:a')" ] || fail "srun -n2 --input=1 printed '$out'"

# 4. --input=none: EOF at once, even while srun's own stdin never ends.
out=$(timeout 120 srun --input=none sh -c 'cat | wc -c' < /dev/zero)
[ "$out" = 0 ] || fail "srun --input=none: the task read '$out' bytes"

# 5. A few MB, intact, through a task that reads slowly at first (srun must wait for it).
head -c 3000000 /dev/urandom > big.in
want=$(md5sum < big.in | cut -d' ' -f1)
got=$(timeout 300 srun sh -c 'sleep 1; md5sum | cut -d" " -f1' < big.in)
[ "$got" = "$want" ] || fail "3 MB through srun's stdin: md5 $got, not $want"
got=$(timeout 300 srun -n2 sh -c 'md5sum | cut -d" " -f1' < big.in | sort -u)
[ "$got" = "$want" ] || fail "3 MB to two tasks: md5 '$got', not $want"

# 6. A file for every task, a file per task, and srun's error for a missing one.
got=$(timeout 300 srun --input=big.in sh -c 'md5sum | cut -d" " -f1')
[ "$got" = "$want" ] || fail "srun --input=big.in: md5 $got, not $want"
echo zero > in.0
echo one > in.1
out=$(timeout 120 srun -n2 -l --input='in.%t' cat | sort)
[ "$out" = "$(printf '0: zero\n1: one')" ] || fail "srun --input=in.%t printed '$out'"
set +e
err=$(srun --input=no.such.file true 2>&1)
status=$?
set -e
[ "$status" = 1 ] && [ "$err" = "srun: error: Could not open stdin file: No such file or directory" ] ||
  fail "srun --input=no.such.file: exit $status, '$err'"

# 7. A step inside a batch job: the script's own stdin (here a pipe it makes) goes to the step.
cat > step.sh <<'EOF'
#!/bin/sh
echo inside | srun cat
printf 'p\nq\n' | srun -n2 --input=0 sh -c 'echo "$SLURM_PROCID:$(wc -l)"'
EOF
job=$(sbatch --parsable -n2 -o step.out step.sh)
wait_state "$job" COMPLETED 120
grep -qx inside step.out || fail "echo inside | srun cat in a batch job: $(cat step.out)"
grep -qx "0:2" step.out && grep -qx "1:0" step.out || fail "--input=0 in a batch job: $(cat step.out)"

# 8. sbatch -i: the batch script's stdin is the file, and scontrol shows it as StdIn=.
printf 'line1\nline2\n' > script.in
job=$(sbatch --parsable -i script.in -o in.out --wrap 'wc -l')
wait_state "$job" COMPLETED 120
[ "$(cat in.out)" = 2 ] || fail "sbatch -i script.in: the script read '$(cat in.out)' lines"
scontrol show job "$job" | finds "^   StdIn=$(pwd)/script.in$" ||
  fail "scontrol show job: $(scontrol show job "$job" | grep StdIn)"
job=$(sbatch --parsable -i no.such.input -o none.out --wrap 'cat')
wait_state "$job" FAILED 120
pass "srun stdin: OK"
