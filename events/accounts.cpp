#include "events/accounts.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/slurm_time.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> lower_all(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) {
    std::string low = lower(name);
    if (!low.empty() && std::find(out.begin(), out.end(), low) == out.end()) out.push_back(low);
  }
  return out;
}

std::vector<std::string> unique_nonempty(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names)
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

std::string association_line(const std::string& user, const std::string& account, const std::string& cluster) {
  return fmt::format("  U = {:<9.9} A = {:<10.10} C = {:<10.10}\n", user, account, cluster);
}

AccountChange make_change(AccountChange::Kind kind, AccountRecord account, std::string name,
                          std::vector<std::string> accounts, std::string default_account) {
  AccountChange change;
  change.kind = kind;
  change.account = std::move(account);
  change.name = std::move(name);
  change.accounts = std::move(accounts);
  change.default_account = std::move(default_account);
  return change;
}

bool has_children(const AccountsState& state, const std::string& name) {
  for (const auto& [child, record] : state.accounts)
    if (record.parent == name) return true;
  return false;
}

}  // namespace

bool account_exists(const AccountsState& state, std::string_view name) {
  return name == kRootAccount || state.accounts.contains(std::string(name));
}

AccountsState visible_accounts(const AccountsState& state, const std::string& user, bool private_users,
                               bool private_accounts) {
  AccountsState visible;
  visible.qos = state.qos;  // QOS are no private data in Slurm
  if (!private_accounts) visible.accounts = state.accounts;
  if (!private_users) {
    visible.users = state.users;
  } else if (auto own = state.users.find(user); own != state.users.end()) {
    visible.users.insert(*own);
  }
  return visible;
}

std::optional<std::string> add_account(AccountsState& state, AccountRecord account) {
  if (account.name.empty()) return "an account needs a name";
  if (account_exists(state, account.name)) return "account " + account.name + " already exists";
  if (account.parent.empty()) account.parent = std::string(kRootAccount);
  if (!account_exists(state, account.parent)) return "parent account " + account.parent + " does not exist";
  std::string name = account.name;
  state.accounts.emplace(std::move(name), std::move(account));
  return std::nullopt;
}

std::optional<std::string> remove_account(AccountsState& state, const std::string& name) {
  auto it = state.accounts.find(name);
  if (it == state.accounts.end()) return "account " + name + " does not exist";
  if (has_children(state, name)) return "account " + name + " has sub-accounts";
  state.accounts.erase(it);
  for (auto user = state.users.begin(); user != state.users.end();) {
    auto& record = user->second;
    record.accounts.erase(name);
    if (record.accounts.empty()) {
      user = state.users.erase(user);
      continue;
    }
    if (record.default_account == name) record.default_account = *record.accounts.begin();
    ++user;
  }
  return std::nullopt;
}

std::optional<std::string> associate_user(AccountsState& state, const std::string& user,
                                          const std::vector<std::string>& accounts, const std::string& default_account) {
  if (user.empty()) return "a user needs a name";
  for (const auto& account : accounts)
    if (!account_exists(state, account)) return "account " + account + " does not exist";
  auto found = state.users.find(user);
  std::set<std::string> after = found == state.users.end() ? std::set<std::string>{} : found->second.accounts;
  after.insert(accounts.begin(), accounts.end());
  if (after.empty()) return "user " + user + " has no association";
  if (!default_account.empty() && !after.contains(default_account))
    return "default account " + default_account + " is not an association of user " + user;
  UserRecord& record = state.users[user];
  record.name = user;
  record.accounts = std::move(after);
  if (!default_account.empty()) {
    record.default_account = default_account;
  } else if (record.default_account.empty()) {
    record.default_account = accounts.empty() ? *record.accounts.begin() : accounts.front();
  }
  return std::nullopt;
}

std::optional<std::string> remove_user(AccountsState& state, const std::string& user,
                                       const std::vector<std::string>& accounts) {
  auto it = state.users.find(user);
  if (it == state.users.end()) return "user " + user + " does not exist";
  auto& record = it->second;
  if (accounts.empty()) {
    state.users.erase(it);
    return std::nullopt;
  }
  for (const auto& account : accounts)
    if (!record.accounts.contains(account)) return "user " + user + " has no association to account " + account;
  for (const auto& account : accounts) record.accounts.erase(account);
  if (record.accounts.empty()) {
    state.users.erase(it);
  } else if (!record.accounts.contains(record.default_account)) {
    record.default_account = *record.accounts.begin();
  }
  return std::nullopt;
}

namespace {

AccountPlan plan_accounts_and_users(const AccountsState& state, const AccountCommand& command,
                                    const std::string& cluster) {
  AccountPlan plan;
  switch (command.verb) {
    case AccountVerb::add_account: {
      auto names = lower_all(command.names);
      if (names.empty()) {
        plan.error = "No account name given";
        return plan;
      }
      std::string parent = command.parent.empty() ? std::string(kRootAccount) : lower(command.parent);
      if (!account_exists(state, parent)) {
        plan.error = "Parent account '" + parent + "' doesn't exist.";
        return plan;
      }
      std::vector<std::string> added;
      for (const auto& name : names) {
        if (account_exists(state, name)) continue;
        AccountRecord record;
        record.name = name;
        record.description = command.description.empty() ? name : command.description;
        record.organization = !command.organization.empty() ? lower(command.organization)
                              : parent == kRootAccount     ? name
                                                           : parent;
        record.parent = parent;
        plan.changes.push_back(make_change(AccountChange::Kind::add_account, record, {}, {}, {}));
        added.push_back(name);
      }
      if (added.empty()) return plan;
      plan.summary = " Adding Account(s)\n";
      for (const auto& name : added) plan.summary += "  " + name + "\n";
      plan.summary += " Settings\n";
      plan.summary += "  Description     = " + (command.description.empty() ? std::string("Account Name") : command.description) + "\n";
      plan.summary += "  Organization    = " +
                      (command.organization.empty() ? std::string("Parent/Account Name") : lower(command.organization)) + "\n";
      plan.summary += " Associations\n";
      for (const auto& name : added) plan.summary += fmt::format("  A = {:<10.10} C = {:<10.10}\n", name, cluster);
      return plan;
    }
    case AccountVerb::add_user: {
      auto users = unique_nonempty(command.names);
      auto accounts = lower_all(command.accounts);
      std::string default_account = lower(command.default_account);
      if (users.empty()) {
        plan.error = "No user name given";
        return plan;
      }
      if (accounts.empty() && !default_account.empty()) accounts.push_back(default_account);
      if (accounts.empty()) {
        plan.error = "Need name of account to add user to (Account=NAME).";
        return plan;
      }
      for (const auto& account : accounts)
        if (!account_exists(state, account)) {
          plan.error = "This account '" + account + "' doesn't exist.\n        Contact your admin to add this account.";
          return plan;
        }
      if (!default_account.empty() && std::find(accounts.begin(), accounts.end(), default_account) == accounts.end()) {
        plan.error = "Default account '" + default_account + "' is not one of the accounts given (Account=).";
        return plan;
      }
      std::vector<std::string> new_users;
      std::string associations;
      for (const auto& user : users) {
        auto found = state.users.find(user);
        std::vector<std::string> fresh;
        for (const auto& account : accounts)
          if (found == state.users.end() || !found->second.accounts.contains(account)) fresh.push_back(account);
        bool changes_default = !default_account.empty() &&
                               (found == state.users.end() || found->second.default_account != default_account);
        if (fresh.empty() && !changes_default) continue;
        if (found == state.users.end()) new_users.push_back(user);
        for (const auto& account : fresh) associations += association_line(user, account, cluster);
        std::string user_default = default_account;
        if (found == state.users.end() && user_default.empty()) user_default = accounts.front();
        plan.changes.push_back(make_change(AccountChange::Kind::associate_user, {}, user, fresh, user_default));
      }
      if (plan.changes.empty()) return plan;
      if (!new_users.empty()) {
        plan.summary += " Adding User(s)\n";
        for (const auto& user : new_users) plan.summary += "  " + user + "\n";
        plan.summary += " Settings\n";
        plan.summary += "  Default Account = " + (default_account.empty() ? accounts.front() : default_account) + "\n";
      }
      if (!associations.empty()) plan.summary += " Associations =\n" + associations;
      if (!new_users.empty()) plan.summary += " Non Default Settings\n";
      if (plan.summary.empty()) {  // only a new default account for existing users
        plan.summary = " Modified users...\n";
        for (const auto& change : plan.changes) plan.summary += "  " + change.name + "\n";
      }
      return plan;
    }
    case AccountVerb::modify_user: {
      auto users = unique_nonempty(command.names);
      std::string default_account = lower(command.default_account);
      if (users.empty() || default_account.empty()) {
        plan.error = "Modify user needs a user name and DefaultAccount=.";
        return plan;
      }
      for (const auto& user : users) {
        auto found = state.users.find(user);
        if (found == state.users.end()) continue;
        if (!found->second.accounts.contains(default_account)) {
          plan.error = "User '" + user + "' has no association to account '" + default_account + "'.";
          plan.changes.clear();
          return plan;
        }
        if (found->second.default_account == default_account) continue;
        plan.changes.push_back(make_change(AccountChange::Kind::associate_user, {}, user, {}, default_account));
      }
      if (plan.changes.empty()) return plan;
      plan.summary = " Modified users...\n";
      for (const auto& change : plan.changes) plan.summary += "  " + change.name + "\n";
      return plan;
    }
    case AccountVerb::delete_account: {
      auto names = lower_all(command.names);
      std::vector<std::string> removed;
      for (const auto& name : names) {
        if (name == kRootAccount) {
          plan.error = "The root account cannot be removed.";
          return plan;
        }
        if (!state.accounts.contains(name)) continue;
        if (has_children(state, name)) {
          plan.error = "Account '" + name + "' has sub-accounts; remove them first.";
          return plan;
        }
        plan.changes.push_back(make_change(AccountChange::Kind::remove_account, {}, name, {}, {}));
        removed.push_back(name);
      }
      if (removed.empty()) return plan;
      plan.summary = " Deleting accounts...\n";
      for (const auto& name : removed) plan.summary += "  " + name + "\n";
      return plan;
    }
    case AccountVerb::delete_user: {
      auto users = unique_nonempty(command.names);
      auto accounts = lower_all(command.accounts);
      std::string lines;
      bool whole_users = accounts.empty();
      for (const auto& user : users) {
        auto found = state.users.find(user);
        if (found == state.users.end()) continue;
        std::vector<std::string> gone;
        for (const auto& account : accounts)
          if (found->second.accounts.contains(account)) gone.push_back(account);
        if (!whole_users && gone.empty()) continue;
        plan.changes.push_back(make_change(AccountChange::Kind::remove_user, {}, user, gone, {}));
        if (whole_users) {
          lines += "  " + user + "\n";
        } else {
          for (const auto& account : gone)
            lines += fmt::format("  C = {:<10.10} A = {:<10.10} U = {:<9.9}\n", cluster, account, user);
        }
      }
      if (plan.changes.empty()) return plan;
      plan.summary = (whole_users ? " Deleting users...\n" : " Deleting user associations...\n") + lines;
      return plan;
    }
    default: break;
  }
  return plan;
}

// ---- QOS ----

// QOS= and DefaultQOS= of an association (add/modify user or account).
struct AssociationQos {
  std::optional<std::vector<std::string>> list;
  std::optional<std::string> default_qos;
  std::string error;
  bool given() const { return list || default_qos; }
};

AssociationQos association_qos_settings(const AccountsState& state, const std::vector<std::string>& settings) {
  AssociationQos out;
  for (const auto& setting : settings) {
    size_t eq = setting.find('=');
    std::string key = lower(setting.substr(0, eq));
    std::string value = eq == std::string::npos ? std::string() : setting.substr(eq + 1);
    if (key == "defaultqos" || key == "defqos") {
      std::string name = lower(value);
      if (!name.empty() && name != "-1" && !state.qos.contains(name)) {
        out.error = "You gave a bad qos '" + value + "'.  Use 'list qos' to get complete list.";
        return out;
      }
      out.default_qos = name == "-1" ? std::string() : name;
    } else {
      std::vector<std::string> list;
      for (const auto& item : split(value, ',')) {
        std::string name = lower(std::string(item));
        if (name.empty() || std::find(list.begin(), list.end(), name) != list.end()) continue;
        if (!state.qos.contains(name)) {
          out.error = "You gave a bad qos '" + std::string(item) + "'.  Use 'list qos' to get complete list.";
          return out;
        }
        list.push_back(name);
      }
      out.list = std::move(list);
    }
  }
  return out;
}

AccountChange association_qos_change(const std::string& user, const std::string& account, const AssociationQos& qos) {
  AccountChange change;
  change.kind = AccountChange::Kind::association_qos;
  change.name = user;
  change.qos_account = account;
  change.qos_list = qos.list;
  change.default_qos = qos.default_qos;
  return change;
}

std::string qos_limit_lines(const QosRecord& qos) {
  std::string out;
  if (!qos.flags.empty()) {
    std::string flags;
    for (const auto& flag : qos.flags) flags += (flags.empty() ? "" : ",") + flag;
    out += "  Flags                    = " + flags + "\n";
  }
  if (!qos.grp_tres.empty()) out += "  GrpTRES                  = " + tres_limit_text(qos.grp_tres) + "\n";
  if (qos.max_jobs_per_user) out += fmt::format("  MaxJobsPerUser = {}\n", *qos.max_jobs_per_user);
  if (qos.max_submit_jobs_per_user)
    out += fmt::format("  MaxSubmitJobsPerUser     = {}\n", *qos.max_submit_jobs_per_user);
  if (!qos.max_tres_per_user.empty())
    out += "  MaxTRESPerUser           = " + tres_limit_text(qos.max_tres_per_user) + "\n";
  if (qos.max_wall_min) out += "  MaxWall                  = " + format_hms(uint64_t{*qos.max_wall_min} * 60) + "\n";
  if (!qos.preempt.empty()) {
    std::string list;
    for (const auto& name : qos.preempt) list += (list.empty() ? "" : ",") + name;
    out += "  Preempt                  = " + list + "\n";
  }
  if (!qos.preempt_mode.empty()) out += "  PreemptMode              = " + qos.preempt_mode + "\n";
  if (qos.priority != 0) out += fmt::format("  Priority                 = {}\n", qos.priority);
  return out;
}

std::string loop_error(const QosTable& table) {
  std::string loop = preemption_loop(table);
  return loop.empty() ? std::string() : "QOS Preemption loop detected (" + loop + "); nothing changed";
}

AccountPlan plan_qos_command(const AccountsState& state, const AccountCommand& command) {
  AccountPlan plan;
  auto names = lower_all(command.names);
  switch (command.verb) {
    case AccountVerb::add_qos: {
      if (names.empty()) {
        plan.error = " Need name of qos to add.";
        return plan;
      }
      QosRecord start;
      if (auto error = apply_qos_settings(start, command.settings, state.qos); !error.empty()) {
        plan.error = error;
        return plan;
      }
      QosTable after = state.qos;
      uint32_t next_id = 1;
      for (const auto& [name, qos] : state.qos) next_id = std::max(next_id, qos.id + 1);
      std::string added, description;
      for (const auto& name : names) {
        if (after.contains(name)) continue;
        QosRecord qos = start;
        qos.name = name;
        qos.id = next_id++;
        if (qos.description.empty()) qos.description = name;
        description = qos.description;
        after[name] = qos;
        AccountChange change;
        change.kind = AccountChange::Kind::set_qos;
        change.qos = qos;
        plan.changes.push_back(std::move(change));
        added += "  " + name + "\n";
      }
      if (plan.changes.empty()) return plan;
      if (auto error = loop_error(after); !error.empty()) {
        plan.changes.clear();
        plan.error = error;
        return plan;
      }
      plan.summary = " Adding QOS(s)\n" + added + " Settings\n  Description    = " + description + "\n" + qos_limit_lines(start);
      return plan;
    }
    case AccountVerb::modify_qos: {
      if (command.settings.empty()) {
        plan.error = " You didn't give me anything to set";
        return plan;
      }
      QosTable after = state.qos;
      std::string modified;
      for (const auto& name : names) {
        auto it = after.find(name);
        if (it == after.end()) continue;
        QosRecord qos = it->second;
        if (auto error = apply_qos_settings(qos, command.settings, state.qos); !error.empty()) {
          plan.error = error;
          plan.changes.clear();
          return plan;
        }
        if (qos == it->second) continue;
        it->second = qos;
        AccountChange change;
        change.kind = AccountChange::Kind::set_qos;
        change.qos = qos;
        plan.changes.push_back(std::move(change));
        modified += "  " + name + "\n";
      }
      if (plan.changes.empty()) return plan;
      if (auto error = loop_error(after); !error.empty()) {
        plan.changes.clear();
        plan.error = error;
        return plan;
      }
      plan.summary = " Modified qos...\n" + modified;
      return plan;
    }
    case AccountVerb::delete_qos: {
      if (names.empty()) {
        plan.error = " No conditions given to remove, not executing.";
        return plan;
      }
      std::string deleted, defaults;
      for (const auto& name : names) {
        if (!state.qos.contains(name)) continue;
        if (name == kNormalQos) {
          plan.error = "The normal QOS cannot be removed.";
          plan.changes.clear();
          return plan;
        }
        for (const auto& [account, record] : state.accounts)
          if (record.default_qos == name) defaults += fmt::format("  DefQOS = {:<10} A = {:<20}\n", name, account);
        for (const auto& [user, record] : state.users)
          if (record.default_qos == name) defaults += fmt::format("  DefQOS = {:<10} U = {:<9}\n", name, user);
        AccountChange change;
        change.kind = AccountChange::Kind::remove_qos;
        change.name = name;
        plan.changes.push_back(std::move(change));
        deleted += "  " + name + "\n";
      }
      if (!defaults.empty()) {
        plan.changes.clear();
        plan.error = " Associations listed below have these as their Default QOS.\n" + defaults +
                     " Please either remove the qos' listed above from list and resubmit,\n"
                     " or change the default qos to remove the qos.\n Changes Discarded";
        return plan;
      }
      if (!plan.changes.empty()) plan.summary = " Deleting QOS(s)...\n" + deleted;
      return plan;
    }
    default: return plan;
  }
}

// QOS= / DefaultQOS= of users (add/modify user) or accounts (add/modify account).
std::string plan_association_qos(const AccountsState& state, const AccountCommand& command, AccountPlan& plan,
                                 std::vector<std::string>& modified) {
  AssociationQos qos = association_qos_settings(state, command.settings);
  if (!qos.error.empty()) return qos.error;
  if (!qos.given()) return {};
  bool users = command.verb == AccountVerb::add_user || command.verb == AccountVerb::modify_user;
  std::vector<std::string> names = users ? unique_nonempty(command.names) : lower_all(command.names);
  for (const auto& name : names) {
    // After the plan's own changes (a user or account it adds now).
    bool exists = users ? state.users.contains(name) : state.accounts.contains(name);
    bool added = std::any_of(plan.changes.begin(), plan.changes.end(), [&](const AccountChange& change) {
      return (users && change.kind == AccountChange::Kind::associate_user && change.name == name) ||
             (!users && change.kind == AccountChange::Kind::add_account && change.account.name == name);
    });
    if (!exists && !added) continue;
    std::vector<std::string> list = qos.list.value_or(std::vector<std::string>{});
    if (!qos.list && exists) list = users ? state.users.at(name).qos : state.accounts.at(name).qos;
    if (qos.default_qos && !qos.default_qos->empty() && !list.empty() &&
        std::find(list.begin(), list.end(), *qos.default_qos) == list.end())
      return "Default QOS '" + *qos.default_qos + "' is not one of the QOS given (QOS=).";
    plan.changes.push_back(association_qos_change(users ? name : std::string(), users ? std::string() : name, qos));
    if (!added) modified.push_back(name);
  }
  return {};
}

}  // namespace

AccountPlan plan_account_command(const AccountsState& state, const AccountCommand& command, const std::string& cluster) {
  switch (command.verb) {
    case AccountVerb::add_qos:
    case AccountVerb::modify_qos:
    case AccountVerb::delete_qos: return plan_qos_command(state, command);
    default: break;
  }
  bool qos_only = (command.verb == AccountVerb::modify_user && command.default_account.empty()) ||
                  command.verb == AccountVerb::modify_account;
  AccountPlan plan = qos_only ? AccountPlan{} : plan_accounts_and_users(state, command, cluster);
  if (!plan.error.empty()) return plan;
  if (command.verb == AccountVerb::add_user || command.verb == AccountVerb::modify_user ||
      command.verb == AccountVerb::add_account || command.verb == AccountVerb::modify_account) {
    std::vector<std::string> modified;
    if (qos_only && command.settings.empty()) {
      plan.error = command.verb == AccountVerb::modify_user ? "Modify user needs a user name and DefaultAccount= or QOS=."
                                                            : "Modify account needs QOS= or DefaultQOS=.";
      return plan;
    }
    if (auto error = plan_association_qos(state, command, plan, modified); !error.empty()) {
      plan.changes.clear();
      plan.error = error;
      return plan;
    }
    if (!modified.empty() && plan.summary.empty()) {
      bool users = command.verb == AccountVerb::add_user || command.verb == AccountVerb::modify_user;
      plan.summary = users ? " Modified user associations...\n" : " Modified account associations...\n";
      for (const auto& name : modified) plan.summary += "  " + name + "\n";
    }
  }
  return plan;
}

std::optional<std::string> set_qos(AccountsState& state, QosRecord qos) {
  if (qos.name.empty()) return "a QOS needs a name";
  for (const auto& name : qos.preempt) {
    if (name == qos.name) return "QOS " + name + " cannot preempt itself";
    if (!state.qos.contains(name)) return "QOS " + name + " does not exist";
  }
  QosTable after = state.qos;
  std::string name = qos.name;
  after[name] = std::move(qos);
  if (auto error = loop_error(after); !error.empty()) return error;
  state.qos = std::move(after);
  return std::nullopt;
}

std::optional<std::string> remove_qos(AccountsState& state, const std::string& name) {
  if (name == kNormalQos) return "the normal QOS cannot be removed";
  if (!state.qos.erase(name)) return "QOS " + name + " does not exist";
  auto drop = [&](std::vector<std::string>& list) { list.erase(std::remove(list.begin(), list.end(), name), list.end()); };
  for (auto& [other, qos] : state.qos) drop(qos.preempt);
  for (auto& [account, record] : state.accounts) {
    drop(record.qos);
    if (record.default_qos == name) record.default_qos.clear();
  }
  for (auto& [user, record] : state.users) {
    drop(record.qos);
    if (record.default_qos == name) record.default_qos.clear();
  }
  return std::nullopt;
}

std::optional<std::string> set_association_qos(AccountsState& state, const std::string& user,
                                               const std::string& account,
                                               const std::optional<std::vector<std::string>>& qos,
                                               const std::optional<std::string>& default_qos) {
  std::vector<std::string>* list = nullptr;
  std::string* def = nullptr;
  if (!user.empty()) {
    auto it = state.users.find(user);
    if (it == state.users.end()) return "user " + user + " does not exist";
    list = &it->second.qos;
    def = &it->second.default_qos;
  } else {
    auto it = state.accounts.find(account);
    if (it == state.accounts.end()) return "account " + account + " does not exist";
    list = &it->second.qos;
    def = &it->second.default_qos;
  }
  if (qos)
    for (const auto& name : *qos)
      if (!state.qos.contains(name)) return "QOS " + name + " does not exist";
  if (default_qos && !default_qos->empty() && !state.qos.contains(*default_qos))
    return "QOS " + *default_qos + " does not exist";
  if (qos) *list = *qos;
  if (default_qos) *def = *default_qos;
  return std::nullopt;
}

void apply_changes(AccountsState& state, const std::vector<AccountChange>& changes) {
  for (const auto& change : changes) {
    switch (change.kind) {
      case AccountChange::Kind::add_account: add_account(state, change.account); break;
      case AccountChange::Kind::remove_account: remove_account(state, change.name); break;
      case AccountChange::Kind::associate_user:
        associate_user(state, change.name, change.accounts, change.default_account);
        break;
      case AccountChange::Kind::remove_user: remove_user(state, change.name, change.accounts); break;
      case AccountChange::Kind::set_qos: set_qos(state, change.qos); break;
      case AccountChange::Kind::remove_qos: remove_qos(state, change.name); break;
      case AccountChange::Kind::association_qos:
        set_association_qos(state, change.name, change.qos_account, change.qos_list, change.default_qos);
        break;
    }
  }
}

AccountChoice choose_job_account(const AccountsState& state, const std::string& user, const std::string& requested,
                                 bool enforce) {
  AccountChoice choice;
  auto found = state.users.find(user);
  const UserRecord* record = found == state.users.end() ? nullptr : &found->second;
  std::string account = lower(requested);
  if (account.empty() && record) account = record->default_account;
  choice.account = account;
  if (!enforce) return choice;
  if (account.empty() || !record || !record->accounts.contains(account)) {
    choice.ok = false;
    choice.error = std::string(kInvalidAccount);
  }
  return choice;
}

}  // namespace cairn
