# Shared by the integration scripts (sourced, not a test): a local cluster in a
# temporary directory, stopped by PID on exit, and helpers to wait for job states.
# Usage: source cluster.bash; start_cluster NODES [CPUS] [MEMORY_MB]
source "$(dirname "${BASH_SOURCE[0]}")/finds.bash"
bin=$(cd "$build" && pwd)/bin  # absolute: the tests cd into their work directory
export PATH="$bin:$PATH"
work=$(mktemp -d /tmp/cairn-it-XXXXXX)
chmod 755 "$work"
extra_pids=()     # daemons a test started itself
local_up_args=()  # more options for `cairn local up`, e.g. --tcp or --kafka
orphan_groups=()  # process groups of jobs whose agent the test killed
# At the end of a test that passed: the schedule its cluster made, audited from its event log
# (`cairn log audit-schedule`); a violation fails the test. SKIP_SCHEDULE_AUDIT=1 leaves it out.
audit_schedule_at_exit() {  # exit status
  [ "$1" = 0 ] && [ -d "$work/state/log" ] && [ -z "${SKIP_SCHEDULE_AUDIT:-}" ] || return 0
  local report
  report=$(cairn log audit-schedule --log "$work/state/log" ${CAIRN_CONF:+--conf "$CAIRN_CONF"} 2>&1) && return 0
  if printf '%s\n' "$report" | finds '^VIOLATION'; then
    printf 'FAIL: the schedule audit found violations:\n%s\n' "$report"
    return 1
  fi
  printf 'warning: the schedule audit could not run:\n%s\n' "$report"
}
# A test's own steps at exit (command lines), around the cluster's stop: through cleanup, which
# keeps the test's exit status (a step of a trap run before cleanup would pass its own on).
steps_before_stop=()
steps_after_stop=()
at_exit_before_stop() { steps_before_stop+=("$1"); }
at_exit_after_stop() { steps_after_stop+=("$1"); }
# The spool instances of this cluster's agents (each names its agents' cgroups).
spool_instances() {
  [ -f "${CAIRN_CONF:-}" ] || return 0
  cat $(spool_dir '*')/instance 2>/dev/null || true
}
# This shell's cgroup in a cgroup v1 hierarchy (memory, cpuset), where the agents it starts
# make their job cgroups.
v1_cgroup_dir() {  # hierarchy
  echo "/sys/fs/cgroup/$1$(awk -F: -v h="$1" '$2 ~ "(^|,)" h "(,|$)" { print $3 }' /proc/self/cgroup)"
}
# What the cgroups of node $1's agent (the one `cairn local up` started) are named after:
# cairnd-NODE-SPOOL_INSTANCE-PID (another cluster's dead agent may have had the same pid).
agent_cgroup_prefix() {  # node
  echo "cairnd-$1-$(cat "$(spool_dir "$1")/instance")-$(local_agent_pid "$1")"
}
# Cgroups left by agents the test killed: the next agent of their spool would clear them, and
# none comes. Once the cluster is down, what holds no process is removed (rmdir refuses the
# rest), so that test runs do not pile them up on the host. cgroup v1 hierarchies only.
remove_left_cgroups() {  # spool instance...
  local hierarchy dir instance cgroup
  for hierarchy in memory cpuset; do
    dir=$(v1_cgroup_dir "$hierarchy")
    [ -d "$dir" ] || continue
    for instance; do
      for cgroup in "$dir"/cairnd-*-"$instance"-*; do
        # (Under the tests' set -e: a refused rmdir must not end the cleanup.)
        if [ -d "$cgroup" ]; then find "$cgroup" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi
      done
    done
  done
  return 0
}
cleanup() {
  local status=$? step instances
  for step in "${steps_before_stop[@]}"; do eval "$step" || true; done
  audit_schedule_at_exit "$status" || status=1
  instances=$(spool_instances)
  cairn local down --dir "$work" >/dev/null 2>&1 || true
  for step in "${steps_after_stop[@]}"; do eval "$step" || true; done
  for pid in "${extra_pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pgid in "${orphan_groups[@]}"; do kill -9 -- "-$pgid" 2>/dev/null || true; done
  [ -z "$instances" ] || remove_left_cgroups $instances || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  for log in "$work"/*.log; do [ -f "$log" ] && { echo "--- $log"; tail -20 "$log"; }; done
  exit 1
}

# What cannot run here is said, and never passes. `skip_test REASON`: the whole test, at once;
# `skip_part REASON`: one part, and the test goes on but ends with `pass`'s exit 77 instead
# of passing. 77 is ctest's SKIP_RETURN_CODE: reported as skipped. Under CI=true a skip is a
# failure: CI runs as root with the cgroup v1 memory controller, munge, kcat and a writable
# /dev/shm, so it can run every test.
skipped_parts=()
skip_test() {  # reason
  echo "SKIP: $*"
  if [ "${CI:-}" = true ]; then echo "FAIL: CI must be able to run this"; exit 1; fi
  exit 77
}
skip_part() {  # reason
  echo "SKIP: $*"
  if [ "${CI:-}" = true ]; then echo "FAIL: CI must be able to run this"; exit 1; fi
  skipped_parts+=("$*")
}
pass() {  # message: the test's last line
  if [ ${#skipped_parts[@]} -gt 0 ]; then
    echo "SKIP: ${#skipped_parts[@]} part(s) skipped (the others passed): $(printf '%s; ' "${skipped_parts[@]}" | sed 's/; $//')"
    exit 77
  fi
  echo "$1"
}

start_cluster() {  # nodes [cpus] [memory_mb] [extra config file]
  local extra=("${local_up_args[@]}")
  [ -z "${4:-}" ] || extra+=(--extra-config "$4")
  eval "$(cairn local up --dir "$work" --nodes "$1" --cpus "${2:-2}" --memory "${3:-1000}" "${extra[@]}")"
  [ -n "${CAIRN_CONF:-}" ] || fail "cairn local up printed no CAIRN_CONF"
  cd "$work"
}

# start_cluster with more cairn.conf lines, given as text.
start_cluster_with() {  # nodes cpus memory_mb config_lines
  local extra
  extra=$(mktemp /tmp/cairn-it-extra-XXXXXX)
  printf '%s\n' "$4" > "$extra"
  start_cluster "$1" "$2" "$3" "$extra"
  rm -f "$extra"
}

# True once process `pid` has exited: gone, or a zombie with no thread left. A killed
# multi-threaded daemon's main thread shows Z while its other threads are still exiting, and
# its files (and the locks on them: a spool's, a log's) stay open until the last one is gone.
exited() {  # pid
  [ -e "/proc/$1" ] || return 0
  [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ] || return 1
  [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -le 1 ]
}

# kill -9 of a daemon, returning once it has exited: its locks are released then.
kill_hard() {  # pid
  kill -9 "$1" 2>/dev/null || true
  for _ in $(seq 200); do
    exited "$1" && return 0
    sleep 0.05
  done
  fail "process $1 survived kill -9"
}

# kill -STOP that returns once process `pid` is stopped: every thread in state T. kill returns
# before that: the kernel stops a multi-threaded process only once the thread it picked to take
# the signal (a daemon's main thread, parked in sigwait) runs, and its other threads go on until
# then (a Kafka mock's broker thread answers requests meanwhile, on a busy machine for long enough
# to acknowledge a whole command).
stop_process() {  # pid
  local states=""
  kill -STOP "$1"
  for _ in $(seq 500); do
    states=$(sed 's/.*) \(.\).*/\1/' /proc/"$1"/task/*/stat 2>/dev/null | tr -d '\n')
    [[ "$states" =~ ^T+$ ]] && return 0
    sleep 0.01
  done
  kill -CONT "$1"
  fail "process $1 did not stop within 5 s (its threads' states: $states)"
}

# A controller restarted by the test after killing the one `cairn local up` started.
restart_controller() {
  "$bin/cairnctld" --conf "$CAIRN_CONF" >>"$work/cairnctld.log" 2>&1 &
  extra_pids+=($!)
  disown
  for _ in $(seq 100); do squeue >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "the restarted controller does not answer"
}

# An agent restarted by the test after killing the one `cairn local up` started; $agent is its pid.
# A 2-shard cluster's one controller replaced by two owners: ctl_a writes shard 0 (on
# ControllerSocket=), ctl_b shard 1 (on $work/ctl-b.sock); their logs ctl-a.log, ctl-b.log.
start_shard_owners() {
  kill_hard "$(head -1 "$work/pids")"
  start_owner_pair
}
# The two owners alone (the log's writer already stopped): also to restart them.
start_owner_pair() {
  "$bin/cairnctld" --conf "$CAIRN_CONF" --shards 0 >>"$work/ctl-a.log" 2>&1 &
  ctl_a=$!
  extra_pids+=("$ctl_a")
  "$bin/cairnctld" --conf "$CAIRN_CONF" --shards 1 --socket "$work/ctl-b.sock" >>"$work/ctl-b.log" 2>&1 &
  ctl_b=$!
  extra_pids+=("$ctl_b")
}
# Waits (30 s at most) until node's agent has registered with the controller listening on
# SOCKET (it follows its shard's owner); else fails with WHY and the agent's last lines.
wait_agent_at() {  # node socket why
  for _ in $(seq 300); do
    finds "registered with the controller.*unix:$2" "$work/cairnd-$1.log" && return 0
    sleep 0.1
  done
  fail "$3: $(tail -3 "$work/cairnd-$1.log")"
}
restart_agent() {  # node (n1, n2, ...)
  "$bin/cairnd" --conf "$CAIRN_CONF" --node "$1" 2>>"$work/cairnd-$1.log" &
  agent=$!
  extra_pids+=("$agent")
  disown
}

# The agent of node nN that `cairn local up` started.
local_agent_pid() { sed -n "$(( ${1#n} + 1 ))p" "$work/pids"; }

# A node's spool directory (SlurmdSpoolDir, else <StateSaveLocation>/cairnd-<node>).
spool_dir() {  # node
  local pattern
  pattern=$(sed -n 's/^SlurmdSpoolDir=//p' "$CAIRN_CONF")
  if [ -n "$pattern" ]; then echo "${pattern//%n/$1}"; else echo "$(sed -n 's/^StateSaveLocation=//p' "$CAIRN_CONF")/cairnd-$1"; fi
}

# Times the node's agent registered, per the log.
registrations_of() { cairn log dump 2>/dev/null | grep -c "NodeRegistered node=$1 " || true; }
wait_registrations() {  # node count
  for _ in $(seq 300); do [ "$(registrations_of "$1")" -ge "$2" ] && return 0; sleep 0.1; done
  fail "$1 registered $(registrations_of "$1") times, expected $2"
}

# A munged of our own (munge_auth.sh, kafka_multi_host.sh): its socket directory must be
# searchable by all, its key private.
start_munged() {  # dir
  mkdir -p "$1"
  chmod 755 "$1"
  dd if=/dev/urandom of="$1/munge.key" bs=1024 count=1 status=none
  chmod 600 "$1/munge.key"
  munged --foreground --socket="$1/munge.sock" --key-file="$1/munge.key" --pid-file="$1/munged.pid" \
    --log-file="$1/munged.log" --seed-file="$1/munged.seed" >"$1/stderr.log" 2>&1 &
  local pid=$!
  extra_pids+=("$pid")
  for _ in $(seq 100); do
    [ -S "$1/munge.sock" ] && munge --socket="$1/munge.sock" -n >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  skip_test "munged does not start here: $(tail -2 "$1/stderr.log" | tr '\n' ' ')"
}
stop_munged() {  # pid: TERM, by PID only
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# True once `command...` prints `expected` (polled every 50 ms), false after `seconds`.
poll_until() {  # seconds expected command...
  local deadline=$((SECONDS + $1)) expected=$2
  shift 2
  while [ $SECONDS -lt $deadline ]; do
    [ "$("$@")" = "$expected" ] && return 0
    sleep 0.05
  done
  return 1
}

# A line matching the grep arguments (PATTERN FILE, options first) within 30 s. A controller
# logs its "ready" line just after its listener is up, so it may answer a moment before.
wait_line() {  # grep arguments...
  for _ in $(seq 300); do finds "$@" && return 0; sleep 0.1; done
  return 1
}

# `cairn log verify ARGS...` TIMES times while a loop submits held jobs: the log it checks grows
# meanwhile, as a live controller's does.
verify_while_submitting() {  # times [verify arguments...]
  local times=$1 submitter
  shift
  ( for _ in $(seq 300); do sbatch -H -Q --wrap true >/dev/null || break; done ) &
  submitter=$!
  for _ in $(seq "$times"); do
    cairn log verify "$@" > live-verify.out || fail "cairn log verify of a log being written: $(grep -v '^  ' live-verify.out)"
  done
  kill "$submitter" 2>/dev/null || true
  wait "$submitter" || true
}

# The job's state, without the " by <uid>" that sacct adds to CANCELLED.
state_of() { sacct -j "$1" -X -n -P -o State 2>/dev/null | head -1 | sed 's/ by [0-9]*$//'; }
reason_of() { squeue -h -j "$1" -o %r 2>/dev/null; }

wait_state() {  # job state [seconds]
  poll_until "${3:-20}" "$2" state_of "$1" || fail "job $1 is '$(state_of "$1")', expected $2"
}
wait_reason() {  # job reason [seconds]
  poll_until "${3:-20}" "$2" reason_of "$1" || fail "job $1 waits for '$(reason_of "$1")', expected $2"
}
expect_reason() {  # job reason
  [ "$(reason_of "$1")" = "$2" ] || fail "job $1 waits for '$(reason_of "$1")', expected $2"
}

# How many CPUs a taskset list names.
# A refusal: the command fails and says exactly the text. Slurm's clients exit 1 on a refusal.
expect_error() {  # text command...
  local text=$1; shift
  set +e; out=$("$@" 2>&1); rc=$?; set -e
  [ "$rc" = 1 ] || fail "'$*' exited $rc: $out"
  [ "$out" = "$text" ] || fail "'$*' said '$out', expected '$text'"
}
# A failure whose output contains the text somewhere (for messages with a variable part).
expect_error_containing() {  # text command...
  local text=$1; shift
  set +e; out=$("$@" 2>&1); rc=$?; set -e
  [ "$rc" != 0 ] || fail "'$*' succeeded: $out"
  grep -qF -- "$text" <<<"$out" || fail "'$*' said '$out', expected '$text'"
}

# A daemon's threads by name, counted ("2 caf.actor; 1 caf.clock; ..."), for failure messages.
thread_names() { cat /proc/"$1"/task/*/comm 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ';'; }
# How many CAF worker threads a daemon has (0 when its actors run on its loop thread).
worker_threads() { cat /proc/"$1"/task/*/comm 2>/dev/null | grep -c '^caf.multiplexer$' || true; }

count_cpus() {  # taskset list -> how many CPUs
  local total=0 part
  for part in ${1//,/ }; do
    if [[ "$part" == *-* ]]; then total=$((total + ${part#*-} - ${part%-*} + 1)); else total=$((total + 1)); fi
  done
  echo "$total"
}

# CPU confinement tests need a second CPU, which no CI setting gives a one-CPU runner: a
# skip there is not a failure, even under CI=true. No cgroup controller is needed.
require_two_cpus() {
  local machine_cpus
  machine_cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
  if [ "$(count_cpus "$machine_cpus")" -lt 2 ]; then
    echo "SKIP: this machine gives the test CPU $machine_cpus only: two jobs cannot get disjoint CPUs"
    exit 77
  fi
}
