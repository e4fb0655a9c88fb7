#!/usr/bin/env bash
# Prometheus metrics and sdiag: Debian's prometheus server scrapes a local cluster's controller
# (MetricsPort=) and agent (AgentMetricsPort=); after known actions (jobs submitted and run, one
# cancelled, one suspended) its HTTP query API gives the counts; `promtool check metrics` finds
# no problem in a scrape; sdiag counts the same jobs, and sdiag --reset is an operator's.
# A metrics port in use stops either daemon at its start, with the key named.
set -euo pipefail
build=$1
dashboard="$(cd "${2:-$(dirname "$0")/../..}" && pwd)/deploy/grafana/cairn.json"
source "$(dirname "$0")/cluster.bash"

command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  skip_test "Debian's prometheus (prometheus, promtool) is not installed: deploy/install-deps.sh installs it"
command -v curl >/dev/null || skip_test "curl is not installed"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctl_port=$(free_port)
agent_port=$(free_port)
prom_port=$(free_port)
while [ "$agent_port" = "$ctl_port" ]; do agent_port=$(free_port); done

start_cluster_with 1 2 1000 "MetricsAddr=127.0.0.1
MetricsPort=$ctl_port
AgentMetricsPort=$agent_port
BurstBuffer=Pool=fast Capacity=10G Path=$work/bb"
mkdir -p bb

# Both endpoints answer.
for port in "$ctl_port" "$agent_port"; do
  poll_until 30 0 sh -c "curl -sf http://127.0.0.1:$port/metrics >/dev/null; echo \$?" || fail "no /metrics on port $port"
done
# Prometheus scrapes both every second.
mkdir -p prom
cat > prom/prometheus.yml <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: cairnctld
    static_configs: [{targets: ['127.0.0.1:$ctl_port']}]
  - job_name: cairnd
    static_configs: [{targets: ['127.0.0.1:$agent_port']}]
YML
prometheus --config.file=prom/prometheus.yml --storage.tsdb.path=prom/data \
  --web.listen-address="127.0.0.1:$prom_port" >prom/prometheus.log 2>&1 &
extra_pids+=($!)
disown
# The value of a PromQL query's first series ("" while there is none).
query() {
  curl -sf "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null ||
    true
}
expect_metric() {  # query value
  poll_until 60 "$2" query "$1" || fail "Prometheus: $1 is '$(query "$1")', expected $2 ($(tail -3 prom/prometheus.log))"
}

# Known actions: 5 jobs that complete, one cancelled, one killed for its memory, one suspended (left so).
for _ in 1 2 3 4 5; do sbatch --parsable --wrap true >/dev/null; done
cancelled=$(sbatch --parsable --wrap 'sleep 300')
wait_state "$cancelled" RUNNING
scancel "$cancelled"
wait_state "$cancelled" CANCELLED
# One job over its --mem, where the agent enforces memory: an OOM kill.
oom=0
if scontrol show node n1 | finds 'MemoryEnforcement=off'; then
  skip_part "the agent runs without memory enforcement here: no OOM kill to count"
else
  over=$(sbatch --parsable --mem=50M --wrap 'dd if=/dev/zero of=/dev/null bs=300M count=1')
  wait_state "$over" OUT_OF_MEMORY
  oom=1
fi
# One job requeued once (a resubmission), held, so it waits with a reason; one waiting for its
# begin time. The suspended one holds 1G of the burst-buffer pool and a CPU.
requeued=$(sbatch --parsable --wrap 'sleep 300')
wait_state "$requeued" RUNNING
scontrol requeuehold "$requeued"
wait_reason "$requeued" JobHeldAdmin
later=$(sbatch --parsable --begin=now+1hour --wrap true)
wait_reason "$later" BeginTime
suspended=$(sbatch --parsable --bb 'capacity=1G' --wrap 'sleep 300')
wait_state "$suspended" RUNNING
scontrol suspend "$suspended"
wait_state "$suspended" SUSPENDED
running=$(sbatch --parsable --mem=100M --wrap 'sleep 300')
wait_state "$running" RUNNING

expect_metric 'cairn_jobs_submitted_total' $((10 + oom))
expect_metric 'cairn_jobs_started_total' $((9 + oom))
expect_metric 'cairn_jobs_completed_total' 5
expect_metric 'cairn_jobs_canceled_total' 1
expect_metric 'cairn_jobs_failed_total' $oom
expect_metric 'cairn_job_oom_kills_total' $oom
expect_metric 'cairnd_oom_kills_total > bool 0' $oom
expect_metric 'cairn_job_suspends_total' 1
expect_metric 'slurm_queue_suspended' 1
expect_metric 'cairn_jobs{state="suspended"}' 1
expect_metric 'cairn_agents{status="up"}' 1
expect_metric 'cairn_rpc_calls_total{method="submit",result="ok"}' $((10 + oom))
# Every figure item 3 of the issue names (docs/metrics.md): jobs by state and partition, pending
# by reason, resubmissions, log offset and batch size, per-node allocation, pool used and free.
expect_metric 'cairn_jobs{state="running",partition="debug"}' 1
expect_metric 'cairn_jobs_pending{reason="JobHeldAdmin"}' 1
expect_metric 'cairn_jobs_pending{reason="BeginTime"}' 1
expect_metric 'cairn_job_resubmissions_total' 1
expect_metric 'cairn_eventlog_end_offset{shard="0"} > bool 0' 1
expect_metric 'cairn_eventlog_batch_size_count > bool 0' 1
expect_metric 'cairn_eventlog_commit_seconds_sum > bool 0' 1
expect_metric 'cairn_node_cpus_alloc{node="n1"} > bool 0' 1
expect_metric 'cairn_node_memory_alloc_bytes{node="n1"} >= bool 104857600' 1
expect_metric 'cairn_bb_pool_used_bytes{pool="fast"}' 1073741824
expect_metric 'cairn_bb_pool_free_bytes{pool="fast"}' 9663676416
expect_metric 'cairn_agents{status="down"}' 0
expect_metric 'cairn_rpc_duration_seconds_count{method="submit"}' $((10 + oom))
expect_metric 'cairn_eventlog_reader_lag' 0
expect_metric 'cairn_scheduling_pass_seconds_count > bool 0' 1
expect_metric 'cairn_eventlog_append_latency_seconds_count > bool 0' 1
expect_metric 'cairnd_controller_registered{node="n1"}' 1
expect_metric 'cairnd_orders_total{method="launch",result="ok"}' $((9 + oom))
expect_metric 'cairnd_orders_total{method="suspend",result="ok"}' 1
expect_metric 'cairnd_job_ends_total' $((7 + oom))

# A scrape of each after those actions (every family has series now): promtool finds no problem.
curl -sf "http://127.0.0.1:$ctl_port/metrics" > controller.prom
curl -sf "http://127.0.0.1:$agent_port/metrics" > agent.prom
for scrape in controller.prom agent.prom; do
  problems=$(promtool check metrics < "$scrape" 2>&1) || fail "promtool check metrics $scrape: $problems"
  [ -z "$problems" ] || fail "promtool check metrics $scrape: $problems"
done
grep -q '^# TYPE cairn_scheduling_pass_seconds histogram' controller.prom || fail "no scheduling pass histogram"
grep -q '^cairnd_controller_registered{node="n1"} 1' agent.prom || fail "the agent's scrape: $(cat agent.prom)"

# Every metric the Grafana dashboard plots is one the daemons serve.
python3 - "$dashboard" controller.prom agent.prom <<'PY' || fail "the dashboard plots unknown metrics"
import json, re, sys
served = set()
for scrape in sys.argv[2:]:
    for line in open(scrape):
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            served.add(name)
            if kind in ("histogram", "summary"):
                served.update({name + "_bucket", name + "_sum", name + "_count"})
words = {"rate", "sum", "by", "max", "histogram_quantile", "le", "method", "node", "result", "reason", "state",
         "partition", "shard", "pool", "status", "job", "controller"}
unknown = set()
for panel in json.load(open(sys.argv[1]))["panels"]:
    for target in panel["targets"]:
        expr = re.sub(r'\{[^}]*\}|"[^"]*"|\[[^]]*\]', "", target["expr"])
        for name in re.findall(r"[a-z_][a-z0-9_]*", expr):
            if name not in words and name not in served:
                unknown.add(name)
if unknown:
    print("not served:", sorted(unknown))
    sys.exit(1)
PY

# sdiag: the same counts, in Slurm's layout.
out=$(sdiag)
for line in "Jobs submitted: $((10 + oom))" "Jobs started:   $((9 + oom))" "Jobs completed: 5" "Jobs canceled:  1" \
            "Jobs failed:    $oom" \
            "Jobs running:   1" "Main schedule statistics (microseconds):" "Event log statistics (microseconds):"; do
  grep -qxF "$line" <<<"$out" || fail "sdiag has no line '$line': $out"
done
grep -Eq $'^\tsubmit +\\(    1\\) count:'"$((10 + oom))"' ' <<<"$out" || fail "sdiag: no submit RPC count of $((10 + oom)): $out"
head -1 <<<"$out" | finds -x '\*\{55\}' || fail "sdiag's header: $out"

# sdiag --reset: an operator's (root here); nobody is refused with Slurm's words.
if command -v setpriv >/dev/null; then
  set +e
  refused=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$bin/sdiag" --reset 2>&1)
  status=$?
  set -e
  [ "$status" = 255 ] || fail "sdiag --reset by nobody: exit $status ($refused)"
  [ "$refused" = "slurm_reset_statistics: Access/permission denied" ] || fail "sdiag --reset by nobody: '$refused'"
fi
[ "$(sdiag --reset)" = "Reset scheduling statistics" ] || fail "sdiag --reset"
sdiag | finds -xF "Jobs submitted: 0" || fail "sdiag after a reset: $(sdiag)"
sbatch --parsable --wrap true >/dev/null
poll_until 30 1 sh -c "sdiag | sed -n 's/^Jobs submitted: //p'" || fail "sdiag after a reset and a submission: $(sdiag)"
# The Prometheus counters never go back.
expect_metric 'cairn_jobs_submitted_total' $((11 + oom))

# A metrics port in use: the daemon does not start, and says which key.
busy_conf="$work/busy.conf"
sed "s/^MetricsPort=.*/MetricsPort=$agent_port/" "$CAIRN_CONF" > "$busy_conf"
set +e
said=$(timeout 60 "$bin/cairnctld" --conf "$busy_conf" 2>&1)
status=$?
set -e
[ "$status" = 1 ] || fail "cairnctld with MetricsPort in use: exit $status ($said)"
grep -q "MetricsPort=$agent_port: cannot listen on 127.0.0.1:$agent_port" <<<"$said" || fail "cairnctld's words: $said"
[ "$(grep -c . <<<"$said")" = 1 ] || fail "more than one line: $said"
set +e
said=$(timeout 60 "$bin/cairnd" --conf "$CAIRN_CONF" --node n1 --metrics-port "$ctl_port" 2>&1)
status=$?
set -e
[ "$status" = 1 ] || fail "cairnd with --metrics-port in use: exit $status ($said)"
grep -q "\-\-metrics-port=$ctl_port: cannot listen on 127.0.0.1:$ctl_port" <<<"$said" || fail "cairnd's words: $said"
squeue >/dev/null || fail "the running controller was disturbed"

pass "metrics: Prometheus read the counts of both daemons; promtool: no problem; sdiag agrees; a busy port is refused"
