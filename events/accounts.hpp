// Accounts and associations (Slurm's sacctmgr): the model folded from the
// AccountAdded / AccountRemoved / UserAssociated / UserRemoved events, the pure
// rules that plan a sacctmgr change against it, and the account a job is
// charged to at submission. No I/O, no clock.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "events/qos.hpp"

namespace cairn {

// Slurm's top of the account tree: it always exists and is never stored.
inline constexpr std::string_view kRootAccount = "root";

struct AccountRecord {
  std::string name;
  std::string description;
  std::string organization;
  std::string parent = std::string(kRootAccount);
  std::vector<std::string> qos;  // QOS=; empty: the parent's
  std::string default_qos;       // DefaultQOS=; empty: the parent's
  bool operator==(const AccountRecord&) const = default;
};

struct UserRecord {
  std::string name;
  std::string default_account;
  std::set<std::string> accounts;  // the user's associations
  std::vector<std::string> qos;    // QOS= of all the user's associations; empty: the account's
  std::string default_qos;         // DefaultQOS=; empty: the account's
  bool operator==(const UserRecord&) const = default;
};

struct AccountsState {
  std::map<std::string, AccountRecord> accounts;  // without root
  std::map<std::string, UserRecord> users;
  QosTable qos = initial_qos_table();  // sacctmgr's QOS; normal always
  bool operator==(const AccountsState&) const = default;
};

bool account_exists(const AccountsState& state, std::string_view name);

// What `user`, not an operator, may see under PrivateData=users (their own user record
// only) and PrivateData=accounts (no account: Slurm shows them to coordinators only).
AccountsState visible_accounts(const AccountsState& state, const std::string& user, bool private_users,
                               bool private_accounts);

// ---- the reducer's steps: each returns why the event cannot apply (nothing changed then) ----

std::optional<std::string> add_account(AccountsState& state, AccountRecord account);
std::optional<std::string> remove_account(AccountsState& state, const std::string& name);
std::optional<std::string> associate_user(AccountsState& state, const std::string& user,
                                          const std::vector<std::string>& accounts, const std::string& default_account);
std::optional<std::string> remove_user(AccountsState& state, const std::string& user,
                                       const std::vector<std::string>& accounts);

// ---- sacctmgr changes ----

enum class AccountVerb : uint8_t {
  add_account, add_user, delete_account, delete_user, modify_user,
  add_qos, modify_qos, delete_qos, modify_account
};

struct AccountCommand {
  AccountVerb verb = AccountVerb::add_account;
  std::vector<std::string> names;  // accounts or users
  std::string description;         // add account; empty: the account's name
  std::string organization;        // add account; empty: the parent's name, or the account's under root
  std::string parent;              // add account; empty: root
  std::vector<std::string> accounts;  // add user (required); delete user (empty: every association)
  std::string default_account;        // add user / modify user
  // QOS verbs: "Key=Value" settings of the QOS (after `set`); add/modify user or account:
  // QOS=a,b and DefaultQOS=a.
  std::vector<std::string> settings;
  bool operator==(const AccountCommand&) const = default;
};

// One event to append.
struct AccountChange {
  enum class Kind : uint8_t { add_account, remove_account, associate_user, remove_user, set_qos, remove_qos, association_qos };
  Kind kind = Kind::add_account;
  AccountRecord account;              // add_account
  std::string name;                   // remove_account: the account; user changes: the user
  std::vector<std::string> accounts;  // user changes
  std::string default_account;        // associate_user
  QosRecord qos;                      // set_qos (remove_qos: name)
  // association_qos: of the user `name`, or with an empty name of account `qos_account`
  std::string qos_account;
  std::optional<std::vector<std::string>> qos_list;  // unset: unchanged
  std::optional<std::string> default_qos;            // unset: unchanged
  bool operator==(const AccountChange&) const = default;
};

struct AccountPlan {
  std::string error;                   // non-empty: refused (sacctmgr prints it, exit 1)
  std::string summary;                 // what sacctmgr prints before committing (" Adding Account(s)\n ...")
  std::vector<AccountChange> changes;  // empty with no error: nothing to do (" Nothing new added.")
};

// Names are lower-cased (Slurm stores accounts and users in lower case... users as given).
// `cluster` names the cluster in the association lines of the summary.
AccountPlan plan_account_command(const AccountsState& state, const AccountCommand& command, const std::string& cluster);

// Applies a plan's changes in order (what the events will do once durable).
void apply_changes(AccountsState& state, const std::vector<AccountChange>& changes);

// ---- QOS steps of the reducer ----

std::optional<std::string> set_qos(AccountsState& state, QosRecord qos);
std::optional<std::string> remove_qos(AccountsState& state, const std::string& name);
// account non-empty with user empty: the account's; else the user's.
std::optional<std::string> set_association_qos(AccountsState& state, const std::string& user,
                                               const std::string& account,
                                               const std::optional<std::vector<std::string>>& qos,
                                               const std::optional<std::string>& default_qos);

// ---- submission ----

inline constexpr std::string_view kInvalidAccount = "Invalid account or account/partition combination specified";

struct AccountChoice {
  bool ok = true;
  std::string account;  // what the job records
  std::string error;    // kInvalidAccount
};

// -A (empty: none) for `user`: without one, the user's default account. With
// `enforce` (AccountingStorageEnforce=associations) the user must have an
// association to it; without, any account is taken as given.
AccountChoice choose_job_account(const AccountsState& state, const std::string& user, const std::string& requested,
                                 bool enforce);

}  // namespace cairn
