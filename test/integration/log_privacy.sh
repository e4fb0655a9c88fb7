#!/usr/bin/env bash
# The event log and the snapshots hold every job's script and environment: they are
# private to SlurmUser (directories 0700, files 0600, owned by SlurmUser when the
# controller runs as root). Another user's `cairn log` is refused with a clear message
# and learns nothing; SlurmUser reads them. Needs root to create two throwaway users
# (removed on exit).
set -euo pipefail
build=$1
export PATH="$PATH:/usr/sbin:/sbin"
source "$(dirname "$0")/cluster.bash"
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v runuser >/dev/null; then
  skip_test "needs root, useradd and runuser to run the CLI as throwaway users"
fi

suffix=$$
operator=cairn-op-$suffix
reader=cairn-rd-$suffix
created_users=()
remove_users() {
  for user in "${created_users[@]}"; do userdel "$user" >/dev/null 2>&1 || true; done
}
at_exit_after_stop remove_users
for user in "$operator" "$reader"; do
  useradd --system --no-create-home --shell /usr/sbin/nologin "$user" || fail "useradd $user"
  created_users+=("$user")
done
as() { local user=$1; shift; (cd / && runuser -u "$user" -- "$@"); }
# The throwaway users run the CLI from here; copies when the build directory is not open to them.
user_bin=$bin
if ! as "$reader" test -x "$bin/cairn"; then
  user_bin=$work/user-bin
  mkdir -m 755 "$user_bin"
  cp "$bin/cairn" "$bin/cairn-slurm" "$user_bin/"
  ln -s cairn-slurm "$user_bin/squeue"
  as "$reader" test -x "$user_bin/cairn" || skip_test "$reader cannot run $bin/cairn nor a copy in $user_bin"
fi

start_cluster_with 1 2 1000 "SlurmUser=$operator
SnapshotInterval=5"
job=$(SECRET_TOKEN=hunter2-$suffix sbatch --parsable --export=ALL --wrap 'echo $SECRET_TOKEN')
wait_state "$job" COMPLETED
for _ in 1 2 3; do last=$(sbatch --parsable --wrap true); done
wait_state "$last" COMPLETED
for _ in $(seq 200); do ls state/snapshots/snapshot-*.capnp >/dev/null 2>&1 && break; sleep 0.05; done
ls state/snapshots/snapshot-*.capnp >/dev/null 2>&1 || fail "no snapshot was written"

# Modes and owners: SlurmUser's, nobody else's.
expect_private() {  # path mode
  [ "$(stat -c '%a %U' "$1")" = "$2 $operator" ] || fail "$1 is $(stat -c '%a %U' "$1"), expected $2 $operator"
}
expect_private state/log 700
expect_private state/log/p0 700
expect_private state/log/META 600
expect_private state/log/LOCK 600
for segment in state/log/p0/*.seg; do expect_private "$segment" 600; done
expect_private state/snapshots 700
for snapshot in state/snapshots/snapshot-*.capnp; do expect_private "$snapshot" 600; done

# Another user: refused, clearly, and shown nothing of the job.
for command in "dump --job $job --json" "audit --job $job" "stats" "verify"; do
  # shellcheck disable=SC2086
  set +e; out=$(as "$reader" "$user_bin/cairn" log $command --log "$work/state/log" 2>&1); rc=$?; set -e
  [ "$rc" = 1 ] || fail "cairn log $command by $reader exited $rc: $out"
  [ "$out" = "cairn log: permission denied reading the event log $work/state/log: only SlurmUser/root may read it; use squeue/sacct/scontrol" ] ||
    fail "cairn log $command by $reader said: $out"
done
set +e; out=$(as "$reader" env CAIRN_CONF="$CAIRN_CONF" "$user_bin/cairn" log dump --json 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && grep -q "permission denied reading the event log" <<<"$out" || fail "cairn log dump (configured log): $out"
if as "$reader" cat "$work"/state/log/p0/*.seg "$work"/state/snapshots/snapshot-*.capnp 2>/dev/null | finds -a "hunter2"; then
  fail "$reader read a job's environment from the files"
fi
# --at reads the log in the CLI: on a file log it is SlurmUser's and root's too (docs/decisions.md).
set +e; out=$(as "$reader" env CAIRN_CONF="$CAIRN_CONF" "$user_bin/squeue" --at "$(date +%Y-%m-%dT%H:%M:%S)" 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && grep -qF "squeue: error: permission denied reading the event log $work/state/log" <<<"$out" ||
  fail "squeue --at by $reader: $out"
# What the controller's permission rules allow still works for them.
as "$reader" env CAIRN_CONF="$CAIRN_CONF" "$user_bin/squeue" -h -t all -o %i -j "$job" | finds -x "$job" ||
  fail "squeue by $reader"

# SlurmUser reads the log.
as "$operator" "$user_bin/cairn" log dump --job "$job" --json --log "$work/state/log" | finds "hunter2-$suffix" ||
  fail "SlurmUser cannot read the event log"
as "$operator" "$user_bin/cairn" log verify --log "$work/state/log" | finds "two replays identical" ||
  fail "SlurmUser's cairn log verify"
echo "log_privacy: all checks passed"
