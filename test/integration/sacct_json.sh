#!/usr/bin/env bash
# sacct --json: Slurm 22.05's answer (meta, errors, jobs with their steps) for real jobs,
# valid JSON (python3 -m json.tool), with the jobs' ids, states, steps and exit codes; --yaml
# gives the same answer in YAML (libyaml, as Slurm's serializer/yaml).
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
command -v python3 >/dev/null || skip_test "python3 is missing: the JSON cannot be checked"
start_cluster 1 2 1000

done_job=$(sbatch --parsable -J fine --wrap 'srun true')
failed_job=$(sbatch --parsable -J broken --wrap 'kill -KILL $$')
wait_state "$done_job" COMPLETED 60
wait_state "$failed_job" FAILED 60
sacct --json -j "$done_job,$failed_job" > out.json
python3 -m json.tool out.json > /dev/null || fail "sacct --json is not valid JSON: $(head -c 2000 out.json)"
[ "$(tail -c 1 out.json)" = "}" ] || fail "sacct --json should end with '}' and no newline, as Slurm's"
release=$(sacct -V | awk '{print $2}')
python3 - "$done_job" "$failed_job" "$release" <<'PY' || fail "sacct --json: $(head -c 3000 out.json)"
import json, sys
done_id, failed_id, release = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
answer = json.load(open("out.json"))
assert list(answer) == ["meta", "errors", "jobs"], list(answer)
assert answer["meta"]["plugin"]["type"] == "openapi/dbv0.0.38"
assert answer["meta"]["Slurm"]["release"] == release, answer["meta"]
assert answer["errors"] == []
jobs = {job["job_id"]: job for job in answer["jobs"]}
assert sorted(jobs) == sorted([done_id, failed_id]), sorted(jobs)
fine, broken = jobs[done_id], jobs[failed_id]
expected_keys = ["account", "comment", "allocation_nodes", "array", "association", "cluster", "constraints",
                 "container", "derived_exit_code", "time", "exit_code", "flags", "group", "het", "job_id", "name",
                 "mcs", "nodes", "partition", "priority", "qos", "required", "kill_request_user", "reservation",
                 "state", "steps", "tres", "user", "wckey", "working_directory"]
assert list(fine) == expected_keys, list(fine)
assert fine["name"] == "fine" and fine["state"]["current"] == "COMPLETED", fine["state"]
assert fine["exit_code"] == {"status": "SUCCESS", "return_code": 0}, fine["exit_code"]
assert [step["step"]["id"] for step in fine["steps"]] == ["batch", 0], fine["steps"]
assert fine["steps"][1]["state"] == "COMPLETED" and fine["steps"][1]["nodes"]["range"] == "n1"
assert fine["time"]["start"] >= fine["time"]["submission"] > 0 and fine["time"]["end"] >= fine["time"]["start"]
assert fine["nodes"] == "n1" and fine["allocation_nodes"] == 1
assert [t["type"] for t in fine["tres"]["allocated"]][:1] == ["cpu"], fine["tres"]
assert broken["state"]["current"] == "FAILED", broken["state"]
assert broken["exit_code"]["status"] == "SIGNALED" and broken["exit_code"]["signal"]["signal_id"] == 9, broken["exit_code"]
PY
# --yaml: the same answer through libyaml (python3's yaml, a libyaml reader, reads it back).
sacct --yaml -j "$done_job,$failed_job" > answer.yaml || fail "sacct --yaml failed: $(cat answer.yaml)"
head -2 answer.yaml | finds -xF -- '--- !!map' || fail "sacct --yaml's document start: $(head -3 answer.yaml)"
python3 - answer.yaml out.json <<'PY' || fail "sacct --yaml does not hold --json's answer"
import json, sys, yaml
as_yaml = yaml.safe_load(open(sys.argv[1]))
as_json = json.load(open(sys.argv[2]))
assert as_yaml == as_json, (as_yaml, as_json)
PY
# The last of --json and --yaml wins, as in Slurm.
sacct --yaml --json -j "$done_job" | finds -F '"meta": {' || fail "sacct --yaml --json is not JSON"
pass "sacct --json and --yaml: Slurm 22.05's answer"
