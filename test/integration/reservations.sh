#!/usr/bin/env bash
# Reservations with real daemons: Slurm's refusals of bad input (nothing created), a plain
# user refused, a reservation on n2 (sinfo resv, scontrol show reservation, sinfo -T) whose
# --reservation job runs on n2, an overlapping one refused, unknown and forbidden
# --reservation refused; a MAINT reservation starting soon holds back a job whose time limit
# would overlap it (ReqNodeNotAvail, Reserved for maintenance), shows maint while active, and
# the job runs once the window has passed; update, a controller restart (replay) keeps them,
# delete, and every change an event in the log.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

node_state_of() { sinfo -h -N -o '%N %t' | awk -v n="$1" '$1 == n {print $2}' | head -1; }
nodes_of() { sacct -j "$1" -X -n -P -o NodeList 2>/dev/null | head -1; }
can_switch_user() { [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

# 1. Bad input: Slurm's texts, exit 1, nothing created.
expect_error "scontrol: error: Error parsing flags BOGUS.  No reservation created." \
  scontrol create reservation StartTime=now Duration=10 Nodes=n1 Users=root Flags=BOGUS
expect_error "scontrol: error: Start time cannot be after end time.  No reservation created." \
  scontrol create reservation StartTime=now+1hour EndTime=now Nodes=n1 Users=root
expect_error "Error creating the reservation: Invalid node name specified" \
  scontrol create reservation StartTime=now Duration=10 Nodes=n9 Users=root
expect_error "scontrol: error: Either Users/Groups and/or Accounts must be specified.  No reservation created." \
  scontrol create reservation StartTime=now Duration=10 Nodes=n1
[ "$(scontrol show reservation)" = "No reservations in the system" ] || fail "bad input created: $(scontrol show res)"
[ "$(sinfo -T)" = "No reservations in the system" ] || fail "sinfo -T: $(sinfo -T)"

# 2. Only operators create one.
if can_switch_user; then
  expect_error "Error creating the reservation: Access/permission denied" \
    as_nobody "$bin/scontrol" create reservation StartTime=now Duration=10 Nodes=n1 Users=nobody
  [ "$(scontrol show reservation)" = "No reservations in the system" ] || fail "a plain user created one"
else
  skip_part "part 2: needs root and setpriv to run scontrol as another user"
fi

# 3. A reservation on n2, active now: resv in sinfo; its job runs on n2.
out=$(scontrol create reservation ReservationName=team StartTime=now Duration=10:00 Nodes=n2 Users=root)
[ "$out" = "Reservation created: team" ] || fail "create team: $out"
poll_until 20 resv node_state_of n2 || fail "n2 is '$(node_state_of n2)', expected resv"
[ "$(node_state_of n1)" = idle ] || fail "n1 is '$(node_state_of n1)'"
shown=$(scontrol show reservation team)
grep -q "^ReservationName=team StartTime=.* Duration=00:10:00$" <<<"$shown" || fail "show: $shown"
grep -q "^   Nodes=n2 NodeCnt=1 CoreCnt=2 Features=(null) PartitionName=(null) Flags=SPEC_NODES$" <<<"$shown" ||
  fail "show nodes line: $shown"
grep -q "^   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE BurstBuffer=(null) Watts=n/a$" <<<"$shown" ||
  fail "show users line: $shown"
sinfo -T | grep -Eq "^team         ACTIVE  [0-9T:-]{19}  [0-9T:-]{19}     00:10:00  n2$" || fail "sinfo -T: $(sinfo -T)"
expect_error "Error creating the reservation: Requested reservation overlaps with another reservation" \
  scontrol create reservation ReservationName=clash StartTime=now Duration=5 Nodes=n[1-2] Users=root
[ "$(sinfo -h -T | wc -l)" = 1 ] || fail "the overlapping reservation exists: $(sinfo -T)"
inside=$(sbatch --parsable --reservation=team -t 1 -o /dev/null --wrap true)
wait_state "$inside" COMPLETED
[ "$(nodes_of "$inside")" = n2 ] || fail "the reservation's job ran on '$(nodes_of "$inside")'"
[ "$(srun --reservation=team -t 1 printenv SLURM_JOB_NODELIST)" = n2 ] || fail "srun --reservation=team did not run on n2"
expect_error "sbatch: error: Batch job submission failed: Requested reservation is invalid" \
  sbatch --reservation=nope --wrap true
# A node running a job that would still run at the start: busy, unless IGNORE_JOBS.
busy=$(sbatch --parsable -w n1 -t 5 -o /dev/null --wrap 'sleep 300')
wait_state "$busy" RUNNING
expect_error $'Error creating the reservation: Requested nodes are busy\nNote, unless nodes are directly requested a reservation must exist in a single partition.\nIf no partition is requested the default partition is assumed.' \
  scontrol create reservation ReservationName=busy StartTime=now+60 Duration=10 Nodes=n1 Users=root
out=$(scontrol create reservation ReservationName=busy StartTime=now+60 Duration=10 Nodes=n1 Users=root Flags=IGNORE_JOBS)
[ "$out" = "Reservation created: busy" ] || fail "create with IGNORE_JOBS: $out"
scontrol delete ReservationName=busy
scancel "$busy"
wait_state "$busy" CANCELLED
if can_switch_user; then
  mkdir -m 777 shared
  expect_error "sbatch: error: Batch job submission failed: Access denied to requested reservation" \
    bash -c "cd shared && exec setpriv --reuid=65534 --regid=65534 --clear-groups -- '$bin/sbatch' --reservation=team --wrap true"
fi

# 4. A maintenance reservation starting soon on every node holds back a job that would still
# run when it starts; the job runs once the window has passed.
out=$(scontrol create reservation ReservationName=maint StartTime=now+6 Duration=0:10 Nodes=n[1-2] Users=root Flags=MAINT)
[ "$out" = "Reservation created: maint" ] || fail "create maint: $out"
scontrol show reservation maint | finds " Flags=MAINT,SPEC_NODES$" || fail "maint flags: $(scontrol show res maint)"
held=$(sbatch --parsable -t 1 -o /dev/null --wrap true)
wait_reason "$held" "ReqNodeNotAvail, Reserved for maintenance"
[ "$(state_of "$held")" = PENDING ] || fail "the held job is $(state_of "$held")"
poll_until 60 maint node_state_of n1 || fail "n1 is '$(node_state_of n1)' during maintenance, expected maint"
scontrol show reservation maint | finds " State=ACTIVE " || fail "maint not ACTIVE: $(scontrol show res maint)"
wait_state "$held" COMPLETED 120
maint_end=$(date -d "$(scontrol show reservation maint | sed -n 's/.* EndTime=\([^ ]*\) .*/\1/p')" +%s)
started=$(date -d "$(sacct -j "$held" -X -n -P -o Start)" +%s)
[ "$started" -ge "$maint_end" ] || fail "the held job started at $started, before maintenance ended at $maint_end"

# 5. Update; a restart of the controller (replay) keeps the reservations; delete.
[ "$(scontrol update ReservationName=team Duration=20:00)" = "Reservation updated." ] || fail "update"
scontrol show reservation team | finds " Duration=00:20:00$" || fail "updated: $(scontrol show res team)"
expect_error $'Error updating the reservation: Requested reservation is invalid\nslurm_update error: Requested reservation is invalid' \
  scontrol update ReservationName=nope Duration=5
before=$(scontrol show reservation)
kill_hard "$(head -1 pids)"
restart_controller
[ "$(scontrol show reservation)" = "$before" ] || fail "after restart: $(diff <(echo "$before") <(scontrol show res))"
if can_switch_user; then
  expect_error "delete_reservation ReservationName=team: Access/permission denied" \
    as_nobody "$bin/scontrol" delete ReservationName=team
fi
existed_at=$(( $(date +%s) + 1 ))
while [ "$(date +%s)" -le "$existed_at" ]; do sleep 0.1; done  # the clock passes the instant --at will ask
out=$(scontrol delete ReservationName=team) || fail "delete: $out"
[ -z "$out" ] || fail "delete printed '$out'"
expect_error "delete_reservation reservation: Requested reservation is invalid" scontrol delete reservation team
[ "$(scontrol show reservation team)" = "Reservation team not found" ] || fail "team after delete"
# --at: the log replayed to before the delete still has it.
then=$(date -d "@$existed_at" +%Y-%m-%dT%H:%M:%S)
scontrol --at "$then" show reservation team | finds "^ReservationName=team " ||
  fail "show reservation --at $then: $(scontrol --at "$then" show reservation team)"
sinfo --at "$then" -h -T | finds "^team " || fail "sinfo -T --at $then: $(sinfo --at "$then" -T)"
dump=$(cairn log dump)
grep "ReservationCreated" <<<"$dump" | finds "root" || fail "ReservationCreated without its actor"
for kind in ReservationCreated ReservationUpdated ReservationDeleted; do
  grep -q "$kind" <<<"$dump" || fail "the log has no $kind event"
done
verify=$(cairn log replay --verify) || fail "replay --verify: $verify"
grep -q "^identical" <<<"$verify" || fail "replay --verify: $verify"
pass PASS
