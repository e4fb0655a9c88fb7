#include "events/accounts.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

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

AccountPlan plan_account_command(const AccountsState& state, const AccountCommand& command, const std::string& cluster) {
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
        plan.changes.push_back({AccountChange::Kind::add_account, record, {}, {}, {}});
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
        plan.changes.push_back({AccountChange::Kind::associate_user, {}, user, fresh, user_default});
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
        plan.changes.push_back({AccountChange::Kind::associate_user, {}, user, {}, default_account});
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
        plan.changes.push_back({AccountChange::Kind::remove_account, {}, name, {}, {}});
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
        plan.changes.push_back({AccountChange::Kind::remove_user, {}, user, gone, {}});
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
  }
  return plan;
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
