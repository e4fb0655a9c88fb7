#!/usr/bin/env bash
# Shards on the file log (issue 17). Figures only: nothing here asserts a time.
# 1. Takeover: A writes shard 0, B shard 1, S stands by for shard 1 (cairnctld --standby
#    --shards 1); kill -9 of B until an sbatch to shard 1's partition, sent through A, is
#    acknowledged (by S). Goal < 3 s.
# 2. Acknowledged submissions/s of 16 concurrent sbatch loops (held jobs), all to shard 0
#    through A, then half to shard 0 through A and half to shard 1 through its owner; same
#    run, same machine. CPU time of the controllers and of the sbatch processes per sbatch.
# 3. squeue with BENCH_SHARDS_JOBS (100,000) jobs in the state, alone (goal < 300 ms), then
#    while one sbatch loop goes on:
#    squeue's wall time, and the largest acknowledgement delay meanwhile (the slowest sbatch
#    minus the median sbatch without squeue running; goal <= 10 ms), beside the slowest sbatch
#    without squeue (the machine's noise).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
source "$(dirname "$0")/bench_lib.bash"
source "$(dirname "$0")/bench_site.bash"
export PATH="$build/bin:$PATH"
micros() { echo $(( ${EPOCHREALTIME/./} )); }
dir=$(mktemp -d /tmp/cairn-bench-shards-XXXXXX)
chmod 755 "$dir"
pids=()
trap 'cairn local down --dir "$dir" >/dev/null 2>&1 || true; for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
eval "$(cairn local up --dir "$dir" --nodes 2 --cpus 2 --memory 4000 --shards 2)"
cd "$dir"
kill -9 "$(head -1 pids)"
while kill -0 "$(head -1 pids)" 2>/dev/null; do sleep 0.05; done
cairnctld --conf "$CAIRN_CONF" --shards 0 >>ctl-a.log 2>&1 & a=$!; pids+=($a)
cairnctld --conf "$CAIRN_CONF" --shards 1 --socket "$dir/ctl-b.sock" >>ctl-b.log 2>&1 & b=$!; pids+=($b)
until grep -q ready ctl-a.log 2>/dev/null && grep -q ready ctl-b.log 2>/dev/null; do sleep 0.05; done
cairnctld --conf "$CAIRN_CONF" --standby --shards 1 --socket "$dir/ctl-b.sock" >>ctl-s.log 2>&1 & s=$!; pids+=($s)
until grep -q "standby: " ctl-s.log 2>/dev/null; do sleep 0.05; done
sed "s|^ControllerSocket=.*|ControllerSocket=$dir/ctl-b.sock|" "$CAIRN_CONF" > cairn-b.conf

# 2. Submissions through one shard, then two.
clients=${CAIRN_BENCH_CLIENTS:-16}
total=${CAIRN_BENCH_SUBMISSIONS:-1600}
per_client=$(( total / clients ))
total=$(( per_client * clients ))
sbatch -Q -H -p p0 --wrap true
CAIRN_CONF=$PWD/cairn-b.conf sbatch -Q -H -p p1 --wrap true
submit_round() {  # name shards
  local name=$1 shards=$2 client start end ctl_ticks cli_ticks acked
  rm -f ids.*
  ctl_ticks=$(cpu_ticks "$a" "$b") cli_ticks=$(cli_cpu_ticks)
  local loops=()
  start=$(now)
  for client in $(seq "$clients"); do
    if [ "$shards" = 2 ] && [ $((client % 2)) = 0 ]; then
      (for _ in $(seq "$per_client"); do CAIRN_CONF=$PWD/cairn-b.conf sbatch --parsable -H -p p1 --wrap true; done > "ids.$client") &
    else
      (for _ in $(seq "$per_client"); do sbatch --parsable -H -p p0 --wrap true; done > "ids.$client") &
    fi
    loops+=($!)
  done
  wait "${loops[@]}"
  end=$(now)
  cli_ticks=$(( $(cli_cpu_ticks) - cli_ticks )) ctl_ticks=$(( $(cpu_ticks "$a" "$b") - ctl_ticks ))
  acked=$(cat ids.* | grep -c '^[0-9][0-9]*$' || true)
  [ "$acked" = "$total" ] || { echo "shards: $acked of $total sbatch acknowledged"; exit 1; }
  figure "shards.sbatch_per_s_$name" "$(echo "$total / ($end - $start)" | bc -l | xargs printf '%.0f')" sbatch/s "" \
    "$clients loops of $per_client held jobs, $shards shard(s), each shard's clients through its owner"
  figure "shards.$name.controllers_cpu_ms_per_sbatch" "$(ticks_per "$ctl_ticks" "$total")" cpu_ms/sbatch
  figure "shards.$name.cli_cpu_ms_per_sbatch" "$(ticks_per "$cli_ticks" "$total")" cpu_ms/sbatch "" "the sbatch processes"
}
submit_round one_shard 1
submit_round two_shards 2

# 1. Takeover of shard 1 by the standby.
kill -9 "$b"
killed=$(micros)
until sbatch -Q -H -p p1 --wrap true 2>/dev/null; do sleep 0.02; done
taken=$(micros)
s_ticks=$(cpu_ticks "$s")
figure shards.takeover_file_log_s "$(awk -v us=$((taken - killed)) 'BEGIN { printf "%.3f", us / 1e6 }')" s "< 3" \
  "kill -9 of shard 1's owner until the standby acknowledged an sbatch to p1 (through shard 0's owner); lease 5 s, not waited for: the owner died"
figure shards.takeover.standby_cpu_s "$(ticks_per "$s_ticks" 1 s)" cpu_s "" "the standby's CPU from its start to after the takeover"
cairn local down --dir "$dir" >/dev/null 2>&1 || true
for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done

# 3. squeue with many jobs while submissions go on.
jobs=${BENCH_SHARDS_JOBS:-100000}
qdir=$dir/query
mkdir -p "$qdir"
write_bench_site_conf "$qdir/cairn.conf" "$qdir" MinJobAge=100000000 "SlurmUser=$(id -un)"
export CAIRN_CONF=$qdir/cairn.conf
"$build/test/make_bench_log" "$qdir" "$jobs" >/dev/null
cairnctld --conf "$CAIRN_CONF" >>"$qdir/cairnctld.log" 2>&1 & q=$!; pids+=($q)
until squeue -h -j 1 >/dev/null 2>&1; do kill -0 "$q" || exit 1; sleep 0.05; done
sbatch_times() {  # count file: each sbatch's wall time in µs
  local start
  for _ in $(seq "$1"); do
    start=$(micros)
    sbatch -Q -H -p batch --wrap true
    echo $(( $(micros) - start ))
  done > "$2"
}
# The controller's own time from each submission's arrival to its reply (sdiag, reset before
# each loop): what a concurrent squeue adds inside the controller, apart from the sbatch
# processes' and the sockets' share of the machine.
reply_figure() { sdiag | awk -v key="$1" '$0 ~ key { print $NF }'; }
sdiag --reset >/dev/null
sbatch_times 200 quiet.us
quiet_reply_mean=$(reply_figure 'Mean reply time') quiet_reply_max=$(reply_figure 'Max reply time')
lines=$(squeue -h -t all | wc -l)
# squeue alone: issue #18's goal, squeue over 100,000 jobs in < 300 ms end to end.
alone_walls=() q_ticks=$(cpu_ticks "$q") c_ticks=$(cli_cpu_ticks)
for _ in 1 2 3 4 5; do
  start=$(micros)
  squeue -t all >/dev/null
  alone_walls+=($(( ($(micros) - start) / 1000 )))
done
figure shards.squeue_alone_ms "$(printf '%s\n' "${alone_walls[@]}" | sort -n | sed -n 3p)" ms "< 300" \
  "median of 5 squeue -t all ($lines lines), nothing else running"
figure shards.squeue_alone.controller_cpu_ms_per_squeue "$(ticks_per "$(( $(cpu_ticks "$q") - q_ticks ))" 5)" cpu_ms/squeue
figure shards.squeue_alone.cli_cpu_ms_per_squeue "$(ticks_per "$(( $(cli_cpu_ticks) - c_ticks ))" 5)" cpu_ms/squeue
sdiag --reset >/dev/null
sbatch_times 400 busy.us & loop=$!
squeue_walls=() q_ticks=$(cpu_ticks "$q") c_ticks=$(cli_cpu_ticks)
while kill -0 "$loop" 2>/dev/null; do
  start=$(micros)
  squeue -t all >/dev/null
  squeue_walls+=($(( ($(micros) - start) / 1000 )))
done
wait "$loop"
busy_reply_max=$(reply_figure 'Max reply time')
n=${#squeue_walls[@]}
figure shards.squeue_with_many_jobs_ms "$(printf '%s\n' "${squeue_walls[@]}" | sort -n | sed -n "$(( (n + 1) / 2 ))p")" ms "" \
  "median of $n squeue -t all ($lines lines) while sbatch runs"
median_quiet=$(sort -n quiet.us | sed -n 100p)
max_busy=$(sort -n busy.us | tail -1)
figure shards.ack_delay_during_squeue_ms "$(awk -v m="$max_busy" -v q="$median_quiet" 'BEGIN { printf "%.1f", (m - q) / 1000 }')" ms "<= 10" \
  "slowest of 400 sbatch during squeue minus the median sbatch without ($(awk -v q="$median_quiet" 'BEGIN { printf "%.1f", q / 1000 }') ms)"
figure shards.ack_slowest_without_squeue_ms "$(awk -v m="$(sort -n quiet.us | tail -1)" 'BEGIN { printf "%.1f", m / 1000 }')" ms "" \
  "the slowest of 200 sbatch without squeue: the machine's own noise, for comparison"
figure shards.squeue.controller_cpu_ms_per_squeue "$(ticks_per "$(( $(cpu_ticks "$q") - q_ticks ))" "$n")" cpu_ms/squeue "" \
  "with 400 sbatch in the same time"
figure shards.squeue.cli_cpu_ms_per_squeue "$(ticks_per "$(( $(cli_cpu_ticks) - c_ticks ))" "$n")" cpu_ms/squeue "" \
  "squeue's and the 400 sbatch processes' CPU, per squeue"
figure shards.ack_reply_added_by_squeue_ms "$(awk -v m="$busy_reply_max" -v q="$quiet_reply_mean" 'BEGIN { printf "%.1f", (m - q) / 1000 }')" ms "<= 10" \
  "inside the controller (sdiag): the slowest of 400 submissions' arrival-to-reply during squeue minus the mean without ($(awk -v q="$quiet_reply_mean" 'BEGIN { printf "%.1f", q / 1000 }') ms)"
figure shards.ack_reply_max_without_squeue_ms "$(awk -v m="$quiet_reply_max" 'BEGIN { printf "%.1f", m / 1000 }')" ms "" \
  "inside the controller: the slowest of 200 submissions without squeue (the machine's own noise)"
