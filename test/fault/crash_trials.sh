#!/usr/bin/env bash
# Crash trials: storms of submissions and cancels from several clients, the controller
# killed with -9 at a random moment, restarted, and every acknowledgement compared with
# the state: each acknowledged job is there once (ids never reused), each acknowledged
# cancel ends its job CANCELLED. TRIALS trials (3 in `make test`, FAULT_TRIALS in
# `make fault`); SEED replays a run (printed at the start).
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
trials=${FAULT_TRIALS:-3}
seed=${SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$seed
echo "crash_trials: $trials trials, SEED=$seed"

start_cluster 1 4 4000
controller_pid() { if [ ${#extra_pids[@]} -gt 0 ]; then echo "${extra_pids[-1]}"; else head -1 pids; fi; }

acks=$work/acks
mkdir -p "$acks"
# One client: submits (a quick job or a held one) and cancels one of its own earlier jobs
# now and then, recording what the controller acknowledged.
storm_client() {  # name
  local n=0 id
  while [ ! -e "$acks/stop" ]; do
    n=$((n + 1))
    if [ $((n % 3)) = 0 ]; then
      id=$(sbatch --parsable -H --wrap true 2>/dev/null) && echo "$id" >>"$acks/submitted.$1"
    else
      id=$(sbatch --parsable --wrap 'sleep 0.2' 2>/dev/null) && echo "$id" >>"$acks/submitted.$1"
    fi
    if [ $((n % 4)) = 0 ] && [ -s "$acks/submitted.$1" ]; then
      id=$(tail -1 "$acks/submitted.$1")
      scancel "$id" 2>/dev/null && echo "$id" >>"$acks/cancelled.$1"
    fi
  done
}

final_state() { sacct -j "$1" -X -n -P -o State 2>/dev/null | head -1 | sed 's/ by [0-9]*$//'; }

for trial in $(seq "$trials"); do
  rm -f "$acks/stop"
  client_pids=()
  for c in 1 2 3; do storm_client "$trial.$c" & client_pids+=($!); done
  # Kill the controller somewhere between 0.3 and 1.5 s into the storm.
  sleep "$(printf '0.%03d' $((300 + RANDOM % 700)))"
  [ $((RANDOM % 2)) = 0 ] && sleep 0.5
  kill_hard "$(controller_pid)"
  touch "$acks/stop"
  for pid in "${client_pids[@]}"; do wait "$pid" || true; done
  restart_controller
done

# Every acknowledged submission exists, once; no id was handed out twice.
cat "$acks"/submitted.* | sort >"$acks/all"
[ -s "$acks/all" ] || fail "no submission was acknowledged in $trials trials"
dups=$(uniq -d "$acks/all" | tr '\n' ' ')
[ -z "$dups" ] || fail "job ids acknowledged twice: $dups (SEED=$seed)"
known=$(sacct -a -X -n -P -o JobID | sort)
missing=$(comm -23 "$acks/all" <(echo "$known") | tr '\n' ' ')
[ -z "$missing" ] || fail "acknowledged jobs missing after the crashes: $missing (SEED=$seed)"
# Every acknowledged cancel ends its job CANCELLED (once running jobs have ended).
cat "$acks"/cancelled.* 2>/dev/null | sort -un >"$acks/cancels" || true
while read -r id; do
  poll_until 30 CANCELLED final_state "$id" ||
    fail "job $id was acknowledged cancelled but is $(final_state "$id") (SEED=$seed)"
done <"$acks/cancels"
# The live state is what a replay of the log gives.
verify=$(cairn log replay --verify) || fail "replay --verify: $verify"
grep -q "^identical" <<<"$verify" || fail "replay --verify: $verify"
echo "crash_trials: $(wc -l <"$acks/all") acknowledged submissions and $(wc -l <"$acks/cancels") cancels survived $trials kill -9 (SEED=$seed)"
