// The `cairn` multi-call binary: argv[0] picks the Slurm front-end.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/front_ends.hpp"
#include "cli/local_cluster.hpp"
#include "cli/log_command.hpp"

namespace {

using Command = int (*)(const std::vector<std::string>&, std::ostream&, std::ostream&);

const std::map<std::string, Command> kCommands = {
    {"sbatch", cairn::run_sbatch}, {"sbatch_longrun", cairn::run_sbatch_longrun}, {"squeue", cairn::run_squeue}, {"scontrol", cairn::run_scontrol},
    {"scancel", cairn::run_scancel}, {"sacct", cairn::run_sacct}, {"sinfo", cairn::run_sinfo}, {"sacctmgr", cairn::run_sacctmgr},
    {"log", cairn::run_log_command}, {"local", cairn::run_local_command}, {"bb", cairn::run_bb_command},
};

constexpr const char* kUsage =
    "usage: cairn <command> [args]\n"
    "  sbatch|squeue|scontrol|scancel|sacct|sinfo|sacctmgr|sbatch_longrun   the Slurm front-ends (also as symlinks)\n"
    "  log dump|audit|stats|verify                  read the event log\n"
    "  local up|down|status                         a whole cluster on this machine\n"
    "  bb status                                    burst-buffer pools (scontrol show burstbuffer)\n";

std::string basename_of(const char* path) {
  std::string name(path);
  auto slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string program = basename_of(argv[0]);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (program == "cairn") {
    if (args.empty() || args[0] == "-h" || args[0] == "--help") {
      (args.empty() ? std::cerr : std::cout) << kUsage;
      return args.empty() ? 2 : 0;
    }
    program = args.front();
    args.erase(args.begin());
  }
  auto command = kCommands.find(program);
  if (command == kCommands.end()) {
    std::cerr << "cairn: unknown command '" << program << "'\n" << kUsage;
    return 2;
  }
  return command->second(args, std::cout, std::cerr);
}
