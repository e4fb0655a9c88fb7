// sacctmgr: lists and changes accounts and associations (events in the log,
// changed only by root, SlurmUser and Operators=).
//
// Confirmation: Slurm asks "Would you like to commit changes? (You have 30
// seconds to decide)" unless -i. Cairn asks only when stdin is a terminal; a
// command run from a script (no terminal) commits as with -i, as the tools that
// drive sacctmgr expect. A terminal answer other than y/Y, or none within 30
// seconds, discards the change.
#include <poll.h>
#include <unistd.h>

#include <iostream>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_ends.hpp"
#include "cli/sacctmgr_format.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"

namespace cairn {
namespace {

constexpr int kDecideSeconds = 30;

bool confirm(std::ostream& out) {
  out << "Would you like to commit changes? (You have " << kDecideSeconds << " seconds to decide)\n";
  for (;;) {
    out << "(N/y): " << std::flush;
    pollfd in{STDIN_FILENO, POLLIN, 0};
    if (poll(&in, 1, kDecideSeconds * 1000) <= 0) {
      out << "timeout\n";
      return false;
    }
    std::string answer;
    if (!std::getline(std::cin, answer)) return false;
    if (answer == "y" || answer == "Y") return true;
    if (answer.empty() || answer == "n" || answer == "N") return false;
    out << "Y or N please\n";
  }
}

}  // namespace

int run_sacctmgr(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("sacctmgr", err, [&] {
    SacctmgrRequest request = parse_sacctmgr(argv);
    switch (request.action) {
      case SacctmgrRequest::Action::help: out << sacctmgr_usage(); return 0;
      case SacctmgrRequest::Action::version: out << slurm_version_line() << "\n"; return 0;
      default: break;
    }
    auto config = load_cli_config(request.conf);
    ControllerClient client(config);
    AccountsState state = client.accounts();
    if (request.action == SacctmgrRequest::Action::list) {
      out << render_sacctmgr_list(request, state, config.cluster_name);
      return 0;
    }
    // Slurm shows a change only once the database took it: a plain user sees the refusal alone.
    // (The controller checks again when the change comes.)
    if (!client.is_operator()) throw UsageError("sacctmgr: error: Access/permission denied");
    // The summary comes from the same plan the controller makes again when it commits.
    AccountPlan plan = plan_account_command(state, request.command, config.cluster_name);
    // Slurm prints its sacctmgr-side refusals (" Unknown option: ...") as they are.
    if (!plan.error.empty()) throw UsageError(plan.error.starts_with(' ') ? plan.error : "sacctmgr: error: " + plan.error);
    if (plan.changes.empty()) {
      out << sacctmgr_nothing_text(request.command.verb);
      return 1;
    }
    if (!request.quiet) out << plan.summary;
    if (!request.immediate && isatty(STDIN_FILENO) && !confirm(out)) {
      out << " Changes Discarded\n";
      return 0;
    }
    client.account_command(request.command);
    return 0;
  });
}

}  // namespace cairn
