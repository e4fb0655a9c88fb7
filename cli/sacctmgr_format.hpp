// sacctmgr(1) without I/O: its command line (Slurm 22.05's words and options)
// becomes a request, and its listings of accounts, users and associations are
// rendered in Slurm's columns (print_fields: width N of "Field%N", values cut
// with '+', -n, -p, -P).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "events/accounts.hpp"

namespace cairn {

enum class SacctmgrEntity : uint8_t { account, user, association, qos };

struct SacctmgrRequest {
  enum class Action : uint8_t { list, change, help, version };
  Action action = Action::list;
  SacctmgrEntity entity = SacctmgrEntity::account;  // list
  AccountCommand command;                            // change
  std::vector<std::string> names;     // list: the accounts (list account) or users (list user, list assoc user=)
  std::vector<std::string> accounts;  // list assoc/user: account= filter
  std::vector<std::string> format;    // "Account%20"; empty: the entity's default columns
  bool with_assoc = false;            // -s, withassoc
  bool immediate = false;             // -i: commit without asking
  bool no_header = false;             // -n
  bool parsable = false;              // -p: '|' after every value
  bool parsable2 = false;             // -P: '|' between values
  bool quiet = false;                 // -Q
  std::optional<std::string> conf;    // --conf (Cairn's)
};

// Throws UsageError with what sacctmgr prints (without "sacctmgr: error: " where Slurm has none).
SacctmgrRequest parse_sacctmgr(const std::vector<std::string>& args);

// The listing of `list account|user|assoc`. Throws UsageError for an unknown format field.
std::string render_sacctmgr_list(const SacctmgrRequest& request, const AccountsState& state,
                                 const std::string& cluster);

// What sacctmgr says when a change has nothing to do (" Nothing new added.").
std::string sacctmgr_nothing_text(AccountVerb verb);

std::string sacctmgr_usage();

}  // namespace cairn
