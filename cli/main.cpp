// The `cairn` multi-call binary: argv[0] picks the Slurm front-end.
#include <iostream>
#include <string>
#include <vector>

#include "cli/log_command.hpp"

namespace {

constexpr const char* kUsage =
    "usage: cairn <command> [args]\n"
    "  log dump|audit|stats|verify   read the event log\n";

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
    if (args.empty()) {
      std::cerr << kUsage;
      return 2;
    }
    program = args.front();
    args.erase(args.begin());
  }
  if (program == "log") return cairn::run_log_command(args, std::cout, std::cerr);
  std::cerr << "cairn: unknown command '" << program << "'\n" << kUsage;
  return 2;
}
