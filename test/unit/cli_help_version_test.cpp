// Every Slurm front-end answers --help with a manual-style text (usage, description,
// options) and -V/--version with Slurm's release first, then Cairn's; the installed
// manual pages are made from these texts (deploy/CMakeLists.txt).
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/front_ends.hpp"
#include "common/version.hpp"

using namespace cairn;

namespace {

const std::vector<std::string> kFrontEnds = {"sbatch", "srun",     "squeue",  "scontrol",      "scancel",
                                             "sacct",  "sinfo",    "sacctmgr", "sbatch_longrun", "sdiag"};

struct Run {
  int status;
  std::string out, err;
};

Run run(const std::string& program, const Args& args) {
  std::ostringstream out, err;
  int status = find_front_end(program)(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace

TEST_CASE("version: the project's release, in Cairn's and in Slurm's form") {
  std::string version(cairn_version());
  CHECK(version.find('.') != std::string::npos);
  CHECK(cairn_version_line() == "cairn " + version);
  // Tools that parse `sbatch --version` take the second word for Slurm's release.
  CHECK(slurm_version_line() == "slurm 22.05.8 (cairn " + version + ")");
}

TEST_CASE("front-ends: --version and -V print the version line and exit 0") {
  for (const auto& program : kFrontEnds) {
    CAPTURE(program);
    // sbatch_longrun is Cairn's own command: Cairn's line.
    std::string expected = (program == "sbatch_longrun" ? cairn_version_line() : slurm_version_line()) + "\n";
    for (const char* option : {"--version", "-V"}) {
      CAPTURE(option);
      auto result = run(program, {option});
      CHECK(result.status == 0);
      CHECK(result.out == expected);
      CHECK(result.err.empty());
    }
  }
  // scontrol also takes it as a command, as Slurm's does.
  CHECK(run("scontrol", {"version"}).out == slurm_version_line() + "\n");
}

TEST_CASE("front-ends: --help is a manual's first screen: usage, description, options") {
  for (const auto& program : kFrontEnds) {
    CAPTURE(program);
    auto result = run(program, {"--help"});
    CHECK(result.status == 0);
    CHECK(result.err.empty());
    const std::string& text = result.out;
    CHECK(text.starts_with("Usage: " + program));
    CHECK(text.find("\n\n") != std::string::npos);  // a description or options after the usage
    CHECK(text.find("--help") != std::string::npos);
    CHECK(text.find("-V, --version") != std::string::npos);
    // Sized for a terminal and a manual page.
    std::istringstream lines(text);
    size_t longest = 0;
    for (std::string line; std::getline(lines, line);) longest = std::max(longest, line.size());
    CHECK(longest <= 100);
  }
}
