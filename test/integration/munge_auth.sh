#!/usr/bin/env bash
# Identity over TCP: a private munged, a controller listening on 127.0.0.1 with AuthType=auth/munge,
# and the real CLI talking to it over TCP only (CAIRN_CONTROLLER=tcp:...). Then the same controller
# with AuthType=auth/none: TCP callers may only query.
set -euo pipefail
build=$1
export PATH="$PATH:/usr/sbin:/sbin"
source "$(dirname "$0")/cluster.bash"
for tool in munged munge; do
  command -v "$tool" >/dev/null || skip_test "$tool is not installed (Debian package munge)"
done

start_munged "$work/munge"
munged_pid=${extra_pids[-1]}
cat >"$work/auth.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.sock
EOF
local_up_args=(--tcp)
start_cluster 1 2 1000 "$work/auth.conf"
port=$(sed -n 's/^ControllerPort=//p' "$CAIRN_CONF")
[ -n "$port" ] && [ "$port" != 0 ] || fail "cairn local up --tcp wrote no ControllerPort"
export CAIRN_CONTROLLER=tcp:127.0.0.1:$port
authenticated() { grep -c "authenticated with MUNGE as $1 " "$work/cairnctld.log" || true; }

# 1. Root over TCP with MUNGE: submit, query, cancel; the events' actor is the verified root.
before=$(authenticated root)
job=$(sbatch --parsable -o /dev/null --wrap 'sleep 60')
wait_state "$job" RUNNING
[ "$(squeue -h -j "$job" -o %u)" = root ] || fail "the job's user is '$(squeue -h -j "$job" -o %u)'"
scancel "$job"
wait_state "$job" CANCELLED
[ "$(authenticated root)" -ge $((before + 4)) ] || fail "the CLI did not authenticate over TCP: $(authenticated root)"
cairn log dump --job "$job" --kind JobCancelled | finds "actor=root(0)/operator" \
  || fail "cancel's actor: $(cairn log dump --job "$job" --kind JobCancelled)"

# Without CAIRN_CONTROLLER a host without the Unix socket goes over TCP by itself.
sed "s|^ControllerSocket=.*|ControllerSocket=$work/no-such.sock|" "$CAIRN_CONF" >"$work/remote.conf"
before=$(authenticated root)
CAIRN_CONTROLLER= CAIRN_CONF=$work/remote.conf squeue -h -j "$job" -t all -o %i | finds -x "$job" \
  || fail "squeue over TCP by ControllerAddr:ControllerPort"
[ "$(authenticated root)" -gt "$before" ] || fail "the remote-host squeue did not come over TCP"

# 2. Another user over TCP: own jobs only. setpriv needs root (or CAP_SETUID).
held=$(sbatch --parsable -H -o /dev/null --wrap 'sleep 60')
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
if "${as_nobody[@]}" true 2>/dev/null; then
  expect_error_containing "Access/permission denied" "${as_nobody[@]}" "$bin/scancel" "$held"
  [ "$(state_of "$held")" = PENDING ] || fail "nobody's scancel changed root's job: $(state_of "$held")"
  mine=$(cd /tmp && "${as_nobody[@]}" "$bin/sbatch" --parsable -H -o /dev/null --wrap 'sleep 60') \
    || fail "nobody cannot submit over TCP"
  [ "$(squeue -h -j "$mine" -o %u)" = nobody ] || fail "nobody's job shows user '$(squeue -h -j "$mine" -o %u)'"
  cairn log dump --job "$mine" --kind JobSubmitted | finds "actor=nobody(65534)/user" \
    || fail "submit's actor: $(cairn log dump --job "$mine" --kind JobSubmitted)"
  "${as_nobody[@]}" "$bin/scancel" "$mine" || fail "nobody cannot cancel their own job"
  wait_state "$mine" CANCELLED
else
  skip_part "part 2: setpriv cannot switch to uid 65534 here (needs root); other users not checked"
fi

# 3. Bad credentials are refused and change nothing.
count_jobs() { squeue -h -t all -o %i | wc -l; }
jobs_before=$(count_jobs)
start_munged "$work/munge2"  # another key: its credentials do not verify
other_munged=${extra_pids[-1]}
sed "s|^AuthInfo=.*|AuthInfo=socket=$work/munge2/munge.sock|" "$CAIRN_CONF" >"$work/otherkey.conf"
expect_error_containing "Authentication refused: invalid MUNGE credential" \
  env CAIRN_CONF="$work/otherkey.conf" sbatch --wrap true
expect_error_containing "Authentication refused: invalid MUNGE credential" \
  env CAIRN_CONF="$work/otherkey.conf" scancel "$held"
stop_munged "$other_munged"
sed "s|^ClusterName=.*|ClusterName=elsewhere|" "$CAIRN_CONF" >"$work/othercluster.conf"
expect_error_containing "the credential is for cluster 'elsewhere', not 'local'" \
  env CAIRN_CONF="$work/othercluster.conf" sbatch --wrap true
sed "s|^AuthInfo=.*|AuthInfo=socket=$work/munge/absent.sock|" "$CAIRN_CONF" >"$work/nomunged.conf"
expect_error_containing "cannot get a MUNGE credential from munged at $work/munge/absent.sock" \
  env CAIRN_CONF="$work/nomunged.conf" sbatch --wrap true
# A credential used twice, or after its TTL, is refused (a probe misuses the protocol on purpose).
for misuse in replay expired; do
  out=$("$bin/../test/auth_probe" "$CAIRN_CONF" "$CAIRN_CONTROLLER" "$misuse") || fail "$misuse: $out"
  want="Replayed credential"
  [ "$misuse" = expired ] && want="Expired credential"
  grep -qF "refused: Authentication refused: invalid MUNGE credential: $want" <<<"$out" || fail "$misuse: $out"
done
[ "$(count_jobs)" = "$jobs_before" ] || fail "a refused command changed the job list"
[ "$(state_of "$held")" = PENDING ] || fail "a refused scancel changed job $held: $(state_of "$held")"

# A client without MUNGE (its AuthType=auth/none) is anonymous over TCP: it may query only.
sed "s|^AuthType=.*|AuthType=auth/none|" "$CAIRN_CONF" >"$work/noauth.conf"
CAIRN_CONF=$work/noauth.conf squeue -h -j "$held" -o %i | finds -x "$held" || fail "anonymous squeue"
expect_error_containing "Access/permission denied: unauthenticated connection" \
  env CAIRN_CONF="$work/noauth.conf" sbatch --wrap true
expect_error_containing "Access/permission denied: unauthenticated connection" \
  env CAIRN_CONF="$work/noauth.conf" scancel "$held"

# 4. The controller restarted with AuthType=auth/none: over TCP only queries; MUNGE is refused.
cp "$CAIRN_CONF" "$work/munge-client.conf"
kill_hard "$(head -1 "$work/pids")"
sed -i "s|^AuthType=.*|AuthType=auth/none|" "$CAIRN_CONF"
restart_controller
squeue -h -j "$held" -o %i | finds -x "$held" || fail "squeue over TCP with auth/none"
sinfo >/dev/null || fail "sinfo over TCP with auth/none"
expect_error_containing "sbatch: error: Batch job submission failed: Access/permission denied: unauthenticated connection" \
  sbatch --wrap true
expect_error_containing "Access/permission denied: unauthenticated connection" scancel "$held"
expect_error_containing "this controller does not accept MUNGE credentials (AuthType=auth/none)" \
  env CAIRN_CONF="$work/munge-client.conf" squeue
[ "$(count_jobs)" = "$jobs_before" ] || fail "auth/none over TCP changed the job list"
# The Unix socket still knows its callers.
CAIRN_CONTROLLER=unix:$work/cairnctld.sock scancel "$held"
wait_state "$held" CANCELLED

stop_munged "$munged_pid"
pass "PASS: munge_auth"
