# Shared by the bench scripts (sourced): CPU time of processes by kind, and figures printed
# and recorded for results.json. Wall figures move with the machine's load; CPU figures
# (user + system) much less, so every bench gives both.
#
# A figure: `figure NAME VALUE UNIT [GOAL] [NOTE]` prints "NAME value=VALUE UNIT (goal GOAL; NOTE)"
# and, when CAIRN_BENCH_RESULTS names a file (test/bench/run.sh sets it), appends it there as a
# JSON line; collect_results.py makes results.json of them. Units of CPU figures start with
# "cpu_" (cpu_ms/job, cpu_s/1M events): compare.py flags their regressions.

clock_ticks_per_s=$(getconf CLK_TCK)

# Fields of /proc/PID/stat after the command name (which may hold spaces): index 0 is the
# state (field 3), 8 cminflt, 11 utime, 12 stime, 13 cutime, 14 cstime.
_stat_fields() {  # pid
  local line
  read -r line < "/proc/$1/stat" || return 1
  _fields=(${line##*) })
}

# CPU ticks (user + system) of live processes, all their threads, without their children.
cpu_ticks() {  # pid...
  local total=0 pid
  for pid; do
    _stat_fields "$pid" || continue
    total=$(( total + _fields[11] + _fields[12] ))
  done
  echo "$total"
}

# CPU ticks of the children live processes have reaped (an agent's job supervisors and jobs).
children_cpu_ticks() {  # pid...
  local total=0 pid
  for pid; do
    _stat_fields "$pid" || continue
    total=$(( total + _fields[13] + _fields[14] ))
  done
  echo "$total"
}

# CPU ticks of the agents' supervisor servers (`cairn-stepd --server`, live children of an
# agent that lead no session; the supervisors they fork do, and are the agent's children):
# the agents' children's ticks count a server only once it has ended.
supervisor_server_ticks() {  # agent pid...
  local total=0 agent pid
  for agent; do
    for pid in $(cat /proc/"$agent"/task/*/children 2>/dev/null); do
      _stat_fields "$pid" || continue
      [ "${_fields[3]}" != "$pid" ] || continue
      [[ $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) == *" --server "* ]] || continue
      total=$(( total + _fields[11] + _fields[12] ))
    done
  done
  echo "$total"
}

# The agents' children (supervisors and jobs) with their live supervisor servers.
agent_children_cpu_ticks() {  # agent pid...
  echo $(( $(children_cpu_ticks "$@") + $(supervisor_server_ticks "$@") ))
}

# Minor page faults of every command this script ran and waited for (cminflt), into
# $cli_minor_faults: a count that the machine's speed and load do not move. Not a function
# to call in $(...): that subshell's own faults would count.
read_cli_minor_faults() { _stat_fields "$$" && cli_minor_faults=${_fields[8]}; }

# CPU ticks of every command this script ran and waited for (the CLI: sbatch, squeue...,
# and the few helpers such as date), read without starting a process.
cli_cpu_ticks() { children_cpu_ticks "$$"; }

# CPU ticks of the whole machine (user, nice, system, irq, softirq of every core): every
# process's and the kernel's work, this bench's and anyone else's (meaningful when quiet).
machine_cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }

# TICKS spread over UNITS, in ms (or s with a 4th argument "s", per million with a factor).
ticks_per() {  # ticks units [scale: ms (default) | s] [factor]
  local divisor=1
  [ "${3:-ms}" = s ] && divisor=1000
  awk -v t="$1" -v n="$2" -v hz="$clock_ticks_per_s" -v d="$divisor" -v f="${4:-1}" \
    'BEGIN { printf "%.3f", (n > 0 ? t * 1000 / hz / d / n * f : 0) }'
}

_json_string() {  # text
  local text=${1//\\/\\\\}
  text=${text//\"/\\\"}
  printf '"%s"' "$text"
}

figure() {  # name value unit [goal] [note]
  local name=$1 value=$2 unit=$3 goal=${4:-} note=${5:-} extra=
  case $value in .*) value=0$value ;; -.*) value=-0${value#-} ;; esac  # bc writes .5: JSON needs 0.5
  if ! [[ $value =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then
    echo "$name: no figure (value '$value')"
    return 0
  fi
  [ -n "$goal" ] && extra="goal $goal"
  [ -n "$note" ] && extra="${extra:+$extra; }$note"
  echo "$name value=$value $unit${extra:+ ($extra)}"
  [ -n "${CAIRN_BENCH_RESULTS:-}" ] || return 0
  printf '{"name": %s, "value": %s, "unit": %s, "goal": %s}\n' "$(_json_string "$name")" "$value" \
    "$(_json_string "$unit")" "$([ -n "$goal" ] && _json_string "$goal" || echo null)" >> "$CAIRN_BENCH_RESULTS"
}

# A local cluster of the build's binaries in a fresh directory, taken down at exit; the
# script continues in that directory ($dir) with its controller's and agents' pids in `pids`.
start_bench_cluster() {  # nodes cpus memory_mb
  export PATH="$build/bin:$PATH"
  bench_top=$(mktemp -d /tmp/cairn-bench-XXXXXX)  # global: the exit trap removes it
  # The cluster's directory, where the jobs' output goes, inside a directory marked as a top of
  # a tree (ext4's TOPDIR flag): ext4 then places it in a block group of its own choice (Orlov)
  # instead of beside its parent. On ext4 without a journal, creating a file near inodes freed in
  # the last minutes (a test run's or an earlier bench's clean-up in /tmp) reads past each of
  # them (recently_deleted()): 10 times the CPU for every job's slurm-N.out, a cost of the
  # machine's history, not of Cairn (lifecycle.output_file_create_cpu_us shows it).
  chattr +T "$bench_top" 2>/dev/null || true
  dir=$bench_top/cluster
  mkdir "$dir"
  chmod 755 "$bench_top" "$dir"  # jobs of other users (the OOM bench's) write their output here
  trap 'cairn local down --dir "$dir" >/dev/null 2>&1; rm -rf "$bench_top"' EXIT
  eval "$(cairn local up --dir "$dir" --nodes "$1" --cpus "$2" --memory "$3")"
  cd "$dir"
}

now() { date +%s.%N; }
