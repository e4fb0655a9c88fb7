// sbatch's request: command line, SBATCH_* environment and #SBATCH lines
// (precedence CLI > environment > script, as Slurm) turned into a JobSpec. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "events/job_model.hpp"

namespace cairn {

struct SbatchInput {
  std::vector<std::string> args;           // argv after "sbatch"
  std::optional<std::string> script_text;  // the script file, or stdin; nullopt with --wrap
  std::string script_path;                 // as given; empty for stdin or --wrap
  std::vector<std::string> environment;    // the caller's environ, "K=V"
  std::string cwd;
  std::string user_name;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string submit_host;
  int64_t now_unix = 0;
};

struct SbatchRequest {
  JobSpec spec;
  bool parsable = false;
  bool quiet = false;
  std::vector<std::string> script_args;
};

// The script path: the first positional argument, skipping option values; nullopt for stdin or --wrap.
std::optional<std::string> sbatch_script_path(const std::vector<std::string>& args);

// Throws UsageError with Slurm's wording on bad input.
SbatchRequest build_sbatch_request(const SbatchInput& input);

}  // namespace cairn
