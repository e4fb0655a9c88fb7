#include "cli/sacctmgr_format.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>

#include "cli/print_fields.hpp"
#include "common/option_parser.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

[[noreturn]] void fail(const std::string& message) { throw UsageError("sacctmgr: error: " + message); }

// Slurm compares its keywords with strncasecmp over the word given, with a least length.
bool keyword(std::string_view word, std::string_view name, size_t least) {
  return word.size() >= std::min(least, name.size()) && word.size() <= name.size() && istarts_with(name, word);
}

std::vector<std::string> comma_split(std::string_view text) {
  std::vector<std::string> out;
  for (auto item : split(text, ','))
    if (!trim(item).empty()) out.emplace_back(trim(item));
  return out;
}

void append_all(std::vector<std::string>& to, const std::vector<std::string>& items) {
  to.insert(to.end(), items.begin(), items.end());
}

// ---- one row of a listing, and the columns that show it ----

struct Row {
  std::string cluster, account, user, partition;
  std::string description, organization, parent;  // account rows
  std::string default_account;                     // user rows
  bool association = false;                        // shows limits (Share, QOS)
  std::string qos, default_qos;                    // association rows: the QOS it may use (sorted), its default
};

struct SacctmgrField {
  std::string_view name;   // what format= names (a prefix is enough)
  std::string_view title;
  int width;
  std::function<std::string(const Row&)> value;
};

const std::vector<SacctmgrField>& fields() {
  auto empty = [](const Row&) { return std::string(); };
  auto assoc_value = [](std::string text) {
    return [text](const Row& row) { return row.association ? text : std::string(); };
  };
  static const std::vector<SacctmgrField> kFields = {
      {"Account", "Account", 10, [](const Row& row) { return row.account; }},
      {"Description", "Descr", 20, [](const Row& row) { return row.description; }},
      {"Organization", "Org", 20, [](const Row& row) { return row.organization; }},
      {"User", "User", 10, [](const Row& row) { return row.user; }},
      {"DefaultAccount", "Def Acct", 10, [](const Row& row) { return row.default_account; }},
      {"AdminLevel", "Admin", 9, [](const Row& row) { return row.user.empty() ? std::string() : "None"; }},
      {"Cluster", "Cluster", 10, [](const Row& row) { return row.cluster; }},
      {"ParentName", "Par Name", 10, [](const Row& row) { return row.parent; }},
      {"Partition", "Partition", 10, [](const Row& row) { return row.partition; }},
      {"Share", "Share", 9, assoc_value("1")},
      {"Fairshare", "Share", 9, assoc_value("1")},
      {"Priority", "Priority", 10, empty},
      {"GrpJobs", "GrpJobs", 7, empty},
      {"GrpTRES", "GrpTRES", 13, empty},
      {"GrpSubmitJobs", "GrpSubmit", 9, empty},
      {"GrpWall", "GrpWall", 11, empty},
      {"GrpTRESMins", "GrpTRESMins", 13, empty},
      {"GrpTRESRunMins", "GrpTRESRunMin", 13, empty},
      {"MaxJobs", "MaxJobs", 7, empty},
      {"MaxNodes", "MaxNodes", 8, empty},
      {"MaxCPUs", "MaxCPUs", 8, empty},
      {"MaxTRES", "MaxTRES", 13, empty},
      {"MaxTRESPerNode", "MaxTRESPerNode", 14, empty},
      {"MaxSubmitJobs", "MaxSubmit", 9, empty},
      {"MaxWall", "MaxWall", 11, empty},
      {"MaxCPUMins", "MaxCPUMins", 11, empty},
      {"MaxTRESMins", "MaxTRESMins", 13, empty},
      {"QOS", "QOS", 20, [](const Row& row) { return row.qos; }},
      {"DefaultQOS", "Def QOS", 9, [](const Row& row) { return row.default_qos; }},
  };
  return kFields;
}

// Aliases Slurm accepts in format= besides prefixes of the names above.
std::string_view canonical_field(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kAliases = {{
      {"descr", "Description"}, {"org", "Organization"}, {"defacct", "DefaultAccount"},
      {"admin", "AdminLevel"}, {"parent", "ParentName"}, {"defqos", "DefaultQOS"},
  }};
  for (const auto& [alias, canonical] : kAliases)
    if (iequals(name, alias)) return canonical;
  return name;
}

struct Column {
  const SacctmgrField* field;
  int width;
};

Column resolve_column(std::string_view request) {
  request = trim(request);
  std::string_view name = request.substr(0, request.find('%'));
  int width = 0;
  if (name.size() < request.size()) {
    std::string_view digits = request.substr(name.size() + 1);
    std::from_chars(digits.data(), digits.data() + digits.size(), width);  // atoi: garbage is 0
  }
  name = canonical_field(name);
  for (const auto& field : fields())
    if (!name.empty() && istarts_with(field.name, name)) return {&field, width != 0 ? width : field.width};
  throw UsageError("sacctmgr: error: Unknown field '" + std::string(name) + "'");
}

std::vector<std::string> default_format(SacctmgrEntity entity, bool with_assoc) {
  switch (entity) {
    case SacctmgrEntity::account:
      if (!with_assoc) return {"Account", "Descr", "Org"};
      return {"Account", "Descr", "Org", "Cluster", "ParentName", "User", "Share", "Priority", "GrpJobs",
              "GrpSubmitJobs", "GrpWall", "MaxJobs", "MaxSubmitJobs", "MaxWall", "QOS", "DefaultQOS"};
    case SacctmgrEntity::user:
      if (!with_assoc) return {"User", "DefaultAccount", "Admin"};
      return {"User",    "DefaultAccount", "Admin",   "Cluster",       "Account", "Partition",
              "Share",   "Priority",       "MaxJobs", "MaxNodes",      "MaxCPUs", "MaxSubmitJobs",
              "MaxWall", "MaxCPUMins",     "QOS",     "DefaultQOS"};
    case SacctmgrEntity::association:
      return {"Cluster", "Account", "User",          "Partition", "Share",   "Priority",       "GrpJobs",
              "GrpTRES", "GrpSubmitJobs", "GrpWall", "GrpTRESMins", "MaxJobs", "MaxTRES", "MaxTRESPerNode",
              "MaxSubmitJobs", "MaxWall", "MaxTRESMins", "QOS", "DefaultQOS", "GrpTRESRunMins"};
    case SacctmgrEntity::qos: break;  // render_qos_list
  }
  return {};
}

bool selected(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

std::vector<std::string> lowered(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) out.push_back(to_lower(name));
  return out;
}

// root first, then every account under its parent, children in name order.
void account_tree(const AccountsState& state, const std::string& parent, std::vector<std::string>& out) {
  for (const auto& [name, account] : state.accounts)
    if (account.parent == parent) {
      out.push_back(name);
      account_tree(state, name, out);
    }
}

Row account_row(const AccountsState& state, const std::string& name, const std::string& cluster) {
  Row row;
  row.cluster = cluster;
  row.account = name;
  row.association = true;
  if (name == kRootAccount) {
    row.description = "default root account";
    row.organization = "root";
    return row;
  }
  const auto& account = state.accounts.at(name);
  row.description = account.description;
  row.organization = account.organization;
  row.parent = account.parent;
  return row;
}

// The QOS columns of an association row (Slurm lists the QOS names sorted).
void fill_qos(Row& row, const AccountsState& state) {
  if (!row.association) return;
  QosAccess access = qos_access(state, row.user, row.account);
  std::sort(access.allowed.begin(), access.allowed.end());
  row.qos.clear();
  for (const auto& name : access.allowed) row.qos += (row.qos.empty() ? "" : ",") + name;
  row.default_qos = access.default_qos;
}

std::vector<Row> rows_of_entity(const SacctmgrRequest& request, const AccountsState& state, const std::string& cluster);

std::vector<Row> rows_of(const SacctmgrRequest& request, const AccountsState& state, const std::string& cluster) {
  auto rows = rows_of_entity(request, state, cluster);
  for (auto& row : rows) fill_qos(row, state);
  return rows;
}

std::vector<Row> rows_of_entity(const SacctmgrRequest& request, const AccountsState& state, const std::string& cluster) {
  std::vector<std::string> accounts{std::string(kRootAccount)};
  account_tree(state, std::string(kRootAccount), accounts);
  auto account_names = lowered(request.entity == SacctmgrEntity::account ? request.names : request.accounts);
  std::vector<Row> rows;
  auto user_rows = [&](const std::string& account, const std::vector<std::string>& users) {
    for (const auto& [name, user] : state.users) {
      if (!user.accounts.contains(account) || !selected(users, name)) continue;
      Row row;
      row.cluster = cluster;
      row.account = account;
      row.user = name;
      row.default_account = user.default_account;
      row.association = true;
      rows.push_back(std::move(row));
    }
  };
  switch (request.entity) {
    case SacctmgrEntity::account:
      for (const auto& name : accounts) {
        if (!selected(account_names, name)) continue;
        rows.push_back(account_row(state, name, cluster));
        if (!request.with_assoc) {
          rows.back().association = false;
          rows.back().cluster.clear();
          rows.back().parent.clear();
          continue;
        }
        size_t account_index = rows.size() - 1;
        user_rows(name, {});
        for (size_t i = account_index + 1; i < rows.size(); ++i) {  // Slurm repeats the account's columns
          rows[i].description = rows[account_index].description;
          rows[i].organization = rows[account_index].organization;
          rows[i].parent = rows[account_index].parent;
        }
      }
      break;
    case SacctmgrEntity::user:
      for (const auto& [name, user] : state.users) {
        if (!selected(request.names, name)) continue;
        if (!request.with_assoc) {
          Row row;
          row.user = name;
          row.default_account = user.default_account;
          rows.push_back(std::move(row));
          continue;
        }
        for (const auto& account : accounts) {
          if (!user.accounts.contains(account) || !selected(account_names, account)) continue;
          Row row;
          row.cluster = cluster;
          row.account = account;
          row.user = name;
          row.default_account = user.default_account;
          row.association = true;
          rows.push_back(std::move(row));
        }
      }
      break;
    case SacctmgrEntity::association:
      for (const auto& name : accounts) {
        if (!selected(account_names, name)) continue;
        if (request.names.empty()) {
          Row row = account_row(state, name, cluster);
          row.description.clear();
          row.organization.clear();
          rows.push_back(std::move(row));
        }
        user_rows(name, request.names);
      }
      break;
    case SacctmgrEntity::qos: break;  // render_qos_list
  }
  return rows;
}

std::string render_line(const std::vector<Column>& columns, const SacctmgrRequest& request,
                        const std::function<std::string(const Column&)>& text_of, bool titles) {
  std::string line;
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string text = text_of(columns[i]);
    if (request.parsable || request.parsable2) {
      line += text;
      if (request.parsable || i + 1 < columns.size()) line += '|';
    } else {
      line += fixed_cell(std::move(text), columns[i].width, titles ? Overflow::cut : Overflow::plus);
    }
  }
  return line + "\n";
}

// key=value (also key+=value, key-=value as Slurm's parser splits them: taken as '=').
std::pair<std::string, std::optional<std::string>> key_value(std::string_view word) {
  size_t eq = word.find('=');
  if (eq == std::string_view::npos) return {std::string(word), std::nullopt};
  std::string_view key = word.substr(0, eq);
  if (!key.empty() && (key.back() == '+' || key.back() == '-')) key.remove_suffix(1);
  std::string value(word.substr(eq + 1));
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
    value = value.substr(1, value.size() - 2);
  return {std::string(key), value};
}

SacctmgrEntity parse_entity(std::string_view word, std::string_view action) {
  if (keyword(word, "accounts", 1) || keyword(word, "acct", 4)) return SacctmgrEntity::account;
  if (keyword(word, "users", 1)) return SacctmgrEntity::user;
  if (keyword(word, "associations", 2)) return SacctmgrEntity::association;
  if (keyword(word, "qoss", 1)) return SacctmgrEntity::qos;
  fail("No valid entity in " + std::string(action) + " command\nInput line must include \"Account\", \"User\" or "
       "\"Association\" or \"QOS\"");
}

// ---- sacctmgr show qos (qos_functions.c, common.c's print fields) ----

struct QosField {
  std::vector<std::pair<std::string_view, size_t>> names;  // what format= names, with the least length
  std::string_view title;
  int width;
  Overflow overflow;
  std::function<std::string(const QosRecord&)> value;
};

std::string count_text(const std::optional<uint32_t>& value) { return value ? std::to_string(*value) : std::string(); }

const std::vector<QosField>& qos_fields() {
  auto blank = [](const QosRecord&) { return std::string(); };
  static const std::vector<QosField> kFields = {
      {{{"Description", 3}}, "Descr", 20, Overflow::plus, [](const QosRecord& q) { return q.description; }},
      {{{"Flags", 2}}, "Flags", 20, Overflow::plus,
       [](const QosRecord& q) {
         std::string text;
         for (const auto& flag : q.flags) text += (text.empty() ? "" : ",") + flag;
         return text;
       }},
      {{{"GraceTime", 3}}, "GraceTime", 10, Overflow::keep, [](const QosRecord&) { return format_hms(0); }},
      {{{"GrpJobs", 4}}, "GrpJobs", 7, Overflow::keep, blank},
      {{{"GrpSubmitJobs", 4}}, "GrpSubmit", 9, Overflow::keep, blank},
      {{{"GrpTRES", 7}}, "GrpTRES", 13, Overflow::plus, [](const QosRecord& q) { return tres_limit_text(q.grp_tres); }},
      {{{"GrpTRESMins", 7}}, "GrpTRESMins", 13, Overflow::plus, blank},
      {{{"GrpTRESRunMins", 7}}, "GrpTRESRunMins", 13, Overflow::plus, blank},
      {{{"GrpWall", 4}}, "GrpWall", 11, Overflow::keep, blank},
      {{{"ID", 2}}, "ID", 6, Overflow::keep, [](const QosRecord& q) { return std::to_string(q.id); }},
      {{{"MaxJobsPerAccount", 11}, {"MaxJobsPerAcct", 11}, {"MaxJobsPA", 9}}, "MaxJobsPA", 9, Overflow::keep, blank},
      {{{"MaxJobsPerUser", 11}, {"MaxJobsPU", 9}}, "MaxJobsPU", 9, Overflow::keep,
       [](const QosRecord& q) { return count_text(q.max_jobs_per_user); }},
      {{{"MaxSubmitJobsPerAccount", 17}, {"MaxSubmitJobsPerAcct", 17}, {"MaxSubmitJobsPA", 15}, {"MaxSubmitPA", 11}},
       "MaxSubmitPA", 11, Overflow::keep, blank},
      {{{"MaxSubmitJobsPerUser", 10}, {"MaxSubmitJobsPU", 10}, {"MaxSubmitPU", 6}}, "MaxSubmitPU", 11, Overflow::keep,
       [](const QosRecord& q) { return count_text(q.max_submit_jobs_per_user); }},
      {{{"MaxTRES", 7}, {"MaxTRESPerJob", 11}}, "MaxTRES", 13, Overflow::plus, blank},
      {{{"MaxTRESPerNode", 11}}, "MaxTRESPerNode", 14, Overflow::plus, blank},
      {{{"MaxTRESMinsPerJob", 8}}, "MaxTRESMins", 13, Overflow::plus, blank},
      {{{"MaxTRESPerAccount", 11}, {"MaxTRESPerAcct", 11}, {"MaxTRESPA", 9}}, "MaxTRESPA", 13, Overflow::plus, blank},
      {{{"MaxTRESPerUser", 11}, {"MaxTRESPU", 9}}, "MaxTRESPU", 13, Overflow::plus,
       [](const QosRecord& q) { return tres_limit_text(q.max_tres_per_user); }},
      {{{"MaxWallDurationPerJob", 4}}, "MaxWall", 11, Overflow::keep,
       [](const QosRecord& q) { return q.max_wall_min ? format_hms(uint64_t{*q.max_wall_min} * 60) : std::string(); }},
      {{{"MinTRESPerJob", 7}}, "MinTRES", 13, Overflow::plus, blank},
      {{{"Name", 2}}, "Name", 10, Overflow::plus, [](const QosRecord& q) { return q.name; }},
      {{{"PreemptMode", 8}}, "PreemptMode", 11, Overflow::plus,
       [](const QosRecord& q) { return q.preempt_mode.empty() ? std::string("cluster") : to_lower(q.preempt_mode); }},
      {{{"Preempt", 7}}, "Preempt", 10, Overflow::plus,
       [](const QosRecord& q) {
         auto names = q.preempt;
         std::sort(names.begin(), names.end());
         std::string text;
         for (const auto& name : names) text += (text.empty() ? "" : ",") + name;
         return text;
       }},
      {{{"PreemptExemptTime", 8}}, "PreemptExemptTime", 19, Overflow::keep, blank},
      {{{"Priority", 3}}, "Priority", 10, Overflow::keep, [](const QosRecord& q) { return std::to_string(q.priority); }},
      {{{"UsageFactor", 6}}, "UsageFactor", 11, Overflow::keep, [](const QosRecord&) { return std::string("1.000000"); }},
      {{{"UsageThreshold", 6}}, "UsageThres", 10, Overflow::keep, blank},
  };
  return kFields;
}

std::string render_qos_list(const SacctmgrRequest& request, const QosTable& table) {
  static constexpr std::string_view kDefault =
      "Name,Prio,GraceT,Preempt,PreemptE,PreemptM,Flags%40,UsageThres,UsageFactor,GrpTRES,GrpTRESMins,"
      "GrpTRESRunMins,GrpJ,GrpS,GrpW,MaxTRES,MaxTRESPerN,MaxTRESMins,MaxW,MaxTRESPerUser,MaxJobsPerUser,"
      "MaxSubmitJobsPerUser,MaxTRESPerAcct,MaxJobsPerAcct,MaxSubmitJobsPerAcct,MinTRES";
  std::vector<std::string> format = request.format.empty() ? comma_split(kDefault) : request.format;
  std::vector<std::pair<const QosField*, int>> columns;
  for (const auto& item : format) {
    std::string_view text = trim(item);
    if (text.empty()) continue;
    std::string_view name = text.substr(0, text.find('%'));
    int width = 0;
    if (name.size() < text.size()) {
      std::string_view digits = text.substr(name.size() + 1);
      std::from_chars(digits.data(), digits.data() + digits.size(), width);
    }
    const QosField* found = nullptr;
    for (const auto& field : qos_fields()) {
      for (const auto& [alias, least] : field.names)
        if (keyword(name, alias, least)) found = &field;
      if (found) break;
    }
    if (!found) throw UsageError("sacctmgr: error: Unknown field '" + std::string(name) + "'");
    columns.push_back({found, width != 0 ? width : found->width});
  }
  bool parsable = request.parsable || request.parsable2;
  auto line = [&](const std::function<std::string(const QosField&)>& text_of, bool titles) {
    std::string out;
    for (size_t i = 0; i < columns.size(); ++i) {
      std::string text = text_of(*columns[i].first);
      if (parsable) {
        out += text;
        if (request.parsable || i + 1 < columns.size()) out += '|';
      } else {
        out += fixed_cell(std::move(text), columns[i].second, titles ? Overflow::cut : columns[i].first->overflow);
      }
    }
    return out + "\n";
  };
  std::string out;
  if (!request.no_header) {
    out += line([](const QosField& field) { return std::string(field.title); }, true);
    if (!parsable) {
      for (const auto& column : columns) out += std::string(static_cast<size_t>(std::abs(column.second)), '-') + " ";
      out += "\n";
    }
  }
  auto names = lowered(request.names);
  for (const auto* qos : qos_by_id(table)) {
    if (!selected(names, qos->name)) continue;
    out += line([&](const QosField& field) { return field.value(*qos); }, false);
  }
  return out;
}

}  // namespace

std::string sacctmgr_usage() {
  return "Usage: sacctmgr [-hinpPQsV] [command [entity [specifications]]]\n"
         "\n"
         "View and modify Cairn's accounts, users and their associations (which accounts a\n"
         "user may charge jobs to; AccountingStorageEnforce=associations enforces them).\n"
         "\n"
         "  -h, --help        show this help and exit\n"
         "  -V, --version     print the version and exit\n"
         "  -i, --immediate   commit changes without asking for confirmation\n"
         "  -n, --noheader    no header on listings\n"
         "  -p, --parsable    '|' after every value;  -P, --parsable2: '|' between values\n"
         "  -Q, --quiet       print no messages other than errors\n"
         "  -s, --associations  list users and accounts with their associations\n"
         "  commands: add|create, delete|remove, list|show, modify|update\n"
         "  add account NAME[,NAME] [Description=TEXT] [Organization=ORG] [Parent=ACCOUNT]\n"
         "  add user NAME[,NAME] Account=ACCOUNT[,ACCOUNT] [DefaultAccount=ACCOUNT]\n"
         "  delete account NAME[,NAME]   delete user NAME[,NAME] [Account=ACCOUNT]\n"
         "  modify user NAME set DefaultAccount=ACCOUNT\n"
         "  add user|account NAME ... [QOS=QOS[,QOS]] [DefaultQOS=QOS]\n"
         "  modify user|account NAME set QOS=QOS[,QOS] DefaultQOS=QOS\n"
         "  add qos NAME [Priority=N] [Preempt=QOS,..] [PreemptMode=cancel|requeue|suspend|off] [MaxWall=TIME]\n"
         "      [MaxTRESPerUser=cpu=N,mem=M,node=N] [MaxJobsPerUser=N] [MaxSubmitJobsPerUser=N] [GrpTRES=..]\n"
         "      [Flags=DenyOnLimit] [Description=TEXT]\n"
         "  modify qos [where] [name=]NAME set KEY=VALUE...   delete qos NAME\n"
         "  list account|user|association|qos [NAME] [Account=..] [User=..] [WithAssoc]\n"
         "       [Format=Field%N,...]\n";
}

std::string sacctmgr_nothing_text(AccountVerb verb) {
  switch (verb) {
    case AccountVerb::add_account:
    case AccountVerb::add_user: return " Nothing new added.\n";
    case AccountVerb::delete_account:
    case AccountVerb::delete_user: return " Nothing deleted\n";
    case AccountVerb::add_qos: return " Nothing new added.\n";
    case AccountVerb::delete_qos: return " Nothing deleted\n";
    case AccountVerb::modify_user:
    case AccountVerb::modify_qos:
    case AccountVerb::modify_account: return " Nothing modified\n";
  }
  return "";
}

SacctmgrRequest parse_sacctmgr(const std::vector<std::string>& args) {
  SacctmgrRequest request;
  std::vector<std::string> words;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--conf" && i + 1 < args.size()) {
      request.conf = args[++i];
    } else if (arg.starts_with("--conf=")) {
      request.conf = arg.substr(7);
    } else if (arg.starts_with("--")) {
      std::string name = arg.substr(2);
      if (name == "immediate") request.immediate = true;
      else if (name == "noheader") request.no_header = true;
      else if (name == "parsable") request.parsable = true;
      else if (name == "parsable2") request.parsable2 = true;
      else if (name == "quiet") request.quiet = true;
      else if (name == "associations") request.with_assoc = true;
      else if (name == "help" || name == "usage") request.action = SacctmgrRequest::Action::help;
      else if (name == "version") request.action = SacctmgrRequest::Action::version;
      else if (name == "readonly" || name == "verbose" || name == "oneliner") continue;
      else throw UsageError("sacctmgr: unrecognized option '" + arg + "'\nTry \"sacctmgr --help\" for more information");
    } else if (arg.size() > 1 && arg[0] == '-') {
      for (char flag : std::string_view(arg).substr(1)) {
        switch (flag) {
          case 'i': request.immediate = true; break;
          case 'n': request.no_header = true; break;
          case 'p': request.parsable = true; break;
          case 'P': request.parsable2 = true; break;
          case 'Q': request.quiet = true; break;
          case 's': request.with_assoc = true; break;
          case 'h': request.action = SacctmgrRequest::Action::help; break;
          case 'V': request.action = SacctmgrRequest::Action::version; break;
          case 'r': case 'v': case 'o': break;
          default:
            throw UsageError(std::string("sacctmgr: invalid option -- '") + flag +
                             "'\nTry \"sacctmgr --help\" for more information");
        }
      }
    } else {
      words.push_back(arg);
    }
  }
  if (request.action != SacctmgrRequest::Action::list) return request;
  if (words.empty()) fail("no command given (Cairn's sacctmgr has no interactive mode)\n" + sacctmgr_usage());
  const std::string& verb = words[0];
  if (keyword(verb, "help", 2)) {
    request.action = SacctmgrRequest::Action::help;
    return request;
  }
  if (keyword(verb, "version", 4)) {
    request.action = SacctmgrRequest::Action::version;
    return request;
  }
  bool list = keyword(verb, "list", 3) || keyword(verb, "show", 3);
  bool add = keyword(verb, "add", 3) || keyword(verb, "create", 3);
  bool remove = keyword(verb, "delete", 3) || keyword(verb, "remove", 3);
  bool modify = keyword(verb, "modify", 1) || keyword(verb, "update", 1);
  if (!list && !add && !remove && !modify) fail("invalid keyword: " + verb);
  if (words.size() < 2) fail("No valid entity in " + verb + " command");
  SacctmgrEntity entity = parse_entity(words[1], verb);
  if (entity == SacctmgrEntity::qos) {
    // QOS: bare words and Name= are names (before `set` for modify); other Key=Value are the settings.
    std::vector<std::string> names, settings;
    bool after_set = false;
    for (size_t i = 2; i < words.size(); ++i) {
      const std::string& word = words[i];
      if (iequals(word, "where")) {
        after_set = false;
        continue;
      }
      if (iequals(word, "set")) {
        after_set = true;
        continue;
      }
      auto [key, value] = key_value(word);
      if (!value) {
        if (modify && after_set) fail(" Unknown option: " + word + "\n Use keyword 'where' to modify condition");
        append_all(names, comma_split(word));
      } else if (keyword(key, "format", 1) && list) {
        append_all(request.format, comma_split(*value));
      } else if ((keyword(key, "names", 1) || keyword(key, "qoslevel", 1)) && !(modify && after_set)) {
        append_all(names, comma_split(*value));
      } else if (list || remove || (modify && !after_set)) {
        fail(" Unknown condition: " + word + "\n Use keyword 'set' to modify SLURM_PRINT_VALUE");
      } else {
        settings.push_back(word);
      }
    }
    request.entity = entity;
    if (list) {
      request.action = SacctmgrRequest::Action::list;
      request.names = std::move(names);
      return request;
    }
    request.action = SacctmgrRequest::Action::change;
    request.command.names = std::move(names);
    request.command.settings = std::move(settings);
    request.command.verb = add ? AccountVerb::add_qos : remove ? AccountVerb::delete_qos : AccountVerb::modify_qos;
    return request;
  }

  std::vector<std::string> names, accounts;
  std::string default_account, description, organization, parent;
  for (size_t i = 2; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (iequals(word, "where")) continue;
    if (iequals(word, "set")) continue;  // modify: what follows is what changes
    if (keyword(word, "withassoc", 5) || keyword(word, "withassociations", 5)) {
      request.with_assoc = true;
      continue;
    }
    auto [key, value] = key_value(word);
    if (!value) {
      append_all(names, comma_split(word));
      continue;
    }
    if (keyword(key, "format", 3)) {
      append_all(request.format, comma_split(*value));
    } else if (keyword(key, "names", 1) || keyword(key, "users", 1)) {
      append_all(names, comma_split(*value));
    } else if (keyword(key, "accounts", 3) || keyword(key, "acct", 4)) {
      if (entity == SacctmgrEntity::account) {
        append_all(names, comma_split(*value));
      } else {
        append_all(accounts, comma_split(*value));
      }
    } else if (keyword(key, "defaultqos", 3)) {
      request.command.settings.push_back("DefaultQOS=" + *value);
    } else if (keyword(key, "qoslevel", 1)) {
      request.command.settings.push_back("QOS=" + *value);
    } else if (keyword(key, "defaultaccount", 3)) {
      default_account = *value;
    } else if (keyword(key, "description", 1)) {
      description = *value;
    } else if (keyword(key, "organization", 1)) {
      organization = *value;
    } else if (keyword(key, "parent", 3)) {
      parent = *value;
    } else if (keyword(key, "clusters", 1) || keyword(key, "adminlevel", 2) ||
               keyword(key, "fairshare", 1) || keyword(key, "partitions", 3)) {
      // One cluster, no admin levels or fairshare in Cairn: accepted and ignored.
    } else {
      fail(" Unknown option: " + word + "\n Use keyword 'where' to modify condition");
    }
  }

  if (list) {
    request.action = SacctmgrRequest::Action::list;
    request.entity = entity;
    request.names = std::move(names);
    request.accounts = std::move(accounts);
    return request;
  }
  request.action = SacctmgrRequest::Action::change;
  AccountCommand& command = request.command;
  command.names = std::move(names);
  command.description = description;
  command.organization = organization;
  command.parent = parent;
  command.accounts = std::move(accounts);
  command.default_account = default_account;
  if (entity == SacctmgrEntity::association) fail("Cairn's sacctmgr changes associations through users (add user NAME Account=...)");
  if (add) command.verb = entity == SacctmgrEntity::account ? AccountVerb::add_account : AccountVerb::add_user;
  if (remove) command.verb = entity == SacctmgrEntity::account ? AccountVerb::delete_account : AccountVerb::delete_user;
  if (modify) {
    if (entity != SacctmgrEntity::user && entity != SacctmgrEntity::account)
      fail("Cairn's sacctmgr modifies users and accounts only (modify user NAME set DefaultAccount=... QOS=...)");
    command.verb = entity == SacctmgrEntity::user ? AccountVerb::modify_user : AccountVerb::modify_account;
  }
  if (command.names.empty()) fail("No names given to " + verb);
  return request;
}

std::string render_sacctmgr_list(const SacctmgrRequest& request, const AccountsState& state,
                                 const std::string& cluster) {
  if (request.entity == SacctmgrEntity::qos) return render_qos_list(request, state.qos);
  std::vector<Column> columns;
  for (const auto& name : request.format.empty() ? default_format(request.entity, request.with_assoc) : request.format)
    if (!trim(name).empty()) columns.push_back(resolve_column(name));
  std::string out;
  if (!request.no_header) {
    out += render_line(columns, request, [](const Column& column) { return std::string(column.field->title); }, true);
    if (!request.parsable && !request.parsable2) {
      for (const auto& column : columns) out += std::string(static_cast<size_t>(std::abs(column.width)), '-') + " ";
      out += "\n";
    }
  }
  for (const auto& row : rows_of(request, state, cluster))
    out += render_line(columns, request, [&](const Column& column) { return column.field->value(row); }, false);
  return out;
}

}  // namespace cairn
