// `cairn-slurm`: the Slurm front-ends alone (the sbatch, squeue, ... symlinks point
// here), without the Kafka client that the full `cairn` links (cli/kafka_handoff.hpp).
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/front_ends.hpp"
#include "cli/kafka_handoff.hpp"

int main(int argc, char** argv) {
  cairn::remember_command_line(argc, argv);
  std::string program = argv[0];
  auto slash = program.rfind('/');
  if (slash != std::string::npos) program.erase(0, slash + 1);
  cairn::FrontEndMain command = cairn::find_front_end(program);
  if (command == nullptr) {
    std::cerr << program << ": not a Slurm front-end: call cairn-slurm through a symlink named sbatch, squeue, ...\n";
    return 2;
  }
  int status = command(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  // A short-lived command: its output is all that is left to keep; static destructors
  // (the logging registry, the schema tables) only cost time.
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(status);
}
