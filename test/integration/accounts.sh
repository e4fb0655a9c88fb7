#!/usr/bin/env bash
# Accounts and associations through sacctmgr, with AccountingStorageEnforce=associations:
# operators add accounts and users (events in the log), workflow tools' query
# `sacctmgr -n -s list user NAME format=account%20` answers in Slurm's columns, a job
# gets its user's default account, a user without an association to the account is
# refused with Slurm's error, plain users cannot change accounts, and everything
# survives a controller restart (and a snapshot-free replay: cairn log replay --verify).
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster_with 2 2 1000 "AccountingStorageEnforce=associations
SnapshotInterval=5"

refused="sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified"

# 1. Enforced: no association yet, so even root's job is refused, and nothing is submitted.
set +e; out=$(sbatch --wrap true 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = "$refused" ] || fail "a job without association: rc=$rc '$out'"
[ -z "$(sacct -n -X -o JobID)" ] || fail "a refused submission left a job"

# 2. Accounts and a user (the test runs as root: an operator). Names are lower-cased like Slurm's.
sacctmgr -i add account Physics Description="Physics dept" >"$work/add.out"
grep -q "^ Adding Account(s)$" "$work/add.out" && grep -q "^  physics$" "$work/add.out" ||
  fail "add account said: $(cat "$work/add.out")"
# Without -i and without a terminal, sacctmgr commits as with -i (see sacctmgr_command.cpp).
sacctmgr add account chem </dev/null >/dev/null
set +e; out=$(sacctmgr -i add account chem); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = " Nothing new added." ] || fail "adding an existing account: rc=$rc '$out'"
[ "$(sacctmgr -n -P list account)" = "root|default root account|root
chem|chem|chem
physics|Physics dept|physics" ] || fail "list account: $(sacctmgr -n -P list account)"
# On a terminal (script(1) gives one) sacctmgr asks; anything but y discards the change.
if command -v script >/dev/null; then
  echo n | script -qec "sacctmgr add account tty_no" /dev/null >"$work/tty.out"
  grep -q "Would you like to commit changes? (You have 30 seconds to decide)" "$work/tty.out" ||
    fail "no confirmation prompt on a terminal: $(cat "$work/tty.out")"
  grep -q "Changes Discarded" "$work/tty.out" || fail "answer n did not discard: $(cat "$work/tty.out")"
  echo y | script -qec "sacctmgr add account tty_yes" /dev/null >/dev/null
  [ "$(sacctmgr -n -P list account tty_no,tty_yes format=account)" = tty_yes ] ||
    fail "after the terminal answers: $(sacctmgr -n -P list account tty_no,tty_yes format=account)"
  sacctmgr -i delete account tty_yes >/dev/null
else
  skip_part "the confirmation prompt: no script(1) to give sacctmgr a terminal"
fi
sacctmgr -i add user root account=physics,chem DefaultAccount=physics >/dev/null
set +e; out=$(sacctmgr -i add user root account=biology 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && grep -q "This account 'biology' doesn't exist." <<<"$out" || fail "unknown account: rc=$rc '$out'"

# 3. What workflow tools run, to the byte: one right-justified column of 20, one line per association.
[ "$(sacctmgr -n -s list user root format=account%20)" = "$(printf '%20s \n%20s ' chem physics)" ] ||
  fail "sacctmgr -n -s list user root format=account%20: '$(sacctmgr -n -s list user root format=account%20)'"
[ "$(sacctmgr -n -P list user)" = "root|physics|None" ] || fail "list user: $(sacctmgr -n -P list user)"
[ "$(sacctmgr -n -P list assoc format=account,user)" = "root|
chem|
chem|root
physics|
physics|root" ] || fail "list assoc: $(sacctmgr -n -P list assoc format=account,user)"

# 4. The default account, -A, and a refused account.
job=$(sbatch --parsable -o /dev/null --wrap true)
wait_state "$job" COMPLETED
scontrol show job "$job" | finds " Account=physics " || fail "default account: $(scontrol show job "$job" | grep Account)"
[ "$(sacct -n -X -P -j "$job" -o Account)" = physics ] || fail "sacct Account of $job"
chem_job=$(sbatch --parsable -o /dev/null -A Chem --wrap 'sleep 30')
[ "$(squeue -h -j "$chem_job" -o %a)" = chem ] || fail "squeue %a: $(squeue -h -j "$chem_job" -o %a)"
scancel "$chem_job"
set +e; out=$(sbatch -A biology --wrap true 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = "$refused" ] || fail "sbatch -A biology: rc=$rc '$out'"

# 5. A plain user: may list, may not change; submits only with an association.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
  mkdir -m 777 shared
  set +e; out=$(as_nobody "$bin/sacctmgr" -i add account rogue 2>&1); rc=$?; set -e
  [ "$rc" = 1 ] && [ "$out" = "sacctmgr: error: Access/permission denied" ] || fail "plain user added: rc=$rc '$out'"
  as_nobody "$bin/sacctmgr" -n list account | finds rogue && fail "a plain user's account exists"
  set +e; out=$(cd shared && as_nobody "$bin/sbatch" --wrap true 2>&1); rc=$?; set -e
  [ "$rc" = 1 ] && [ "$out" = "$refused" ] || fail "nobody without association: rc=$rc '$out'"
  sacctmgr -i add user nobody account=chem >/dev/null
  set +e; out=$(cd shared && as_nobody "$bin/sbatch" -A physics --wrap true 2>&1); rc=$?; set -e
  [ "$rc" = 1 ] && [ "$out" = "$refused" ] || fail "nobody -A physics: rc=$rc '$out'"
  job=$(cd shared && as_nobody "$bin/sbatch" --parsable -o /dev/null --wrap true)
  [ "$(sacct -n -X -P -j "$job" -o Account,User)" = "chem|nobody" ] || fail "nobody's job: $(sacct -n -X -P -j "$job" -o Account,User)"
else
  skip_part "part 5: needs root and setpriv to run the CLI as another user"
  sacctmgr -i add user nobody account=chem >/dev/null
fi

# 6. Removing an association; the user keeps the others.
sacctmgr -i delete user root account=chem >/dev/null
[ "$(sacctmgr -n -P -s list user root format=account)" = "physics" ] ||
  fail "after delete: $(sacctmgr -n -P -s list user root format=account)"
set +e; out=$(sbatch -A chem --wrap true 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = "$refused" ] || fail "root -A chem after delete: rc=$rc '$out'"

# 7. A restart (from the latest snapshot and the log) keeps accounts and associations.
before=$(sacctmgr -n -P list assoc format=account,user; sacctmgr -n -P list user; sacctmgr -n -P list account)
kill_hard "$(head -1 pids)"
restart_controller
after=$(sacctmgr -n -P list assoc format=account,user; sacctmgr -n -P list user; sacctmgr -n -P list account)
[ "$after" = "$before" ] || fail "accounts after restart differ: $(diff <(echo "$before") <(echo "$after"))"
set +e; out=$(sbatch -A chem --wrap true 2>&1); rc=$?; set -e
[ "$out" = "$refused" ] || fail "association check after restart: '$out'"
verify=$(cairn log replay --verify) || fail "replay --verify: $verify"
grep -q "^identical" <<<"$verify" || fail "replay --verify: $verify"
cairn log dump | finds "UserAssociated" || fail "the log has no UserAssociated event"
pass PASS
