// The full `cairn` binary: the Slurm front-ends (`cairn sbatch ...`) plus the
// operator commands. The front-end symlinks point at the lean `cairn-slurm`.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/front_ends.hpp"
#include "cli/kafka_command.hpp"
#include "cli/local_cluster.hpp"
#include "cli/log_command.hpp"
#include "cli/sim_command.hpp"
#include "cli/shards_command.hpp"
#include "common/version.hpp"

namespace {

const std::map<std::string, cairn::FrontEndMain> kOperatorCommands = {
    {"log", cairn::run_log_command}, {"local", cairn::run_local_command}, {"bb", cairn::run_bb_command},
    {"kafka", cairn::run_kafka_command}, {"sim", cairn::run_sim_command}, {"shards", cairn::run_shards_command},
};

constexpr const char* kUsage =
    "Usage: cairn <command> [args]\n"
    "\n"
    "The Cairn command line: the Slurm front-ends (installed as their own commands too)\n"
    "and the operator's commands. `cairn <command> --help` describes each.\n"
    "\n"
    "Commands:\n"
    "  sbatch|srun|squeue|scontrol|scancel|sacct|sinfo|sacctmgr|sdiag|sbatch_longrun   the Slurm front-ends\n"
    "  log dump|audit|stats|verify|replay            read the event log\n"
    "  log audit-schedule                            check a schedule from the event log\n"
    "  local up|down|status                          a whole cluster on this machine\n"
    "  shards                                        the event log's shards: writer, epoch, last offset\n"
    "  bb status                                     burst-buffer pools (scontrol show burstbuffer)\n"
    "  kafka create-topic|probe                      set up a Kafka cluster for the event log\n"
    "  sim generate|replay                           synthetic and archived workloads (SWF)\n"
    "\n"
    "Options:\n"
    "  -h, --help                                    show this help and exit\n"
    "  -V, --version                                 print the version (cairn X.Y.Z) and exit\n";

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
    if (args[0] == "-V" || args[0] == "--version") {
      std::cout << cairn::cairn_version_line() << "\n";
      return 0;
    }
    program = args.front();
    args.erase(args.begin());
  }
  cairn::FrontEndMain command = cairn::find_front_end(program);
  if (command == nullptr) {
    auto found = kOperatorCommands.find(program);
    if (found != kOperatorCommands.end()) command = found->second;
  }
  if (command == nullptr) {
    std::cerr << "cairn: unknown command '" << program << "'\n" << kUsage;
    return 2;
  }
  return command(args, std::cout, std::cerr);
}
