// sbatch(1) as Slurm 22.05 has it, without I/O: the command line, the script's
// #SBATCH/#BB/#DW lines and the SBATCH_* environment become a JobSpec.
//
// Reading the script needs its path first, so the caller works in two steps:
//   1. sbatch_first_pass(args): Slurm's first pass over the command line alone
//      (option errors, -h/--help, --usage, -V/--version, the script path).
//   2. read the script (or stdin unless --wrap), and the --bbf file if
//      sbatch_bbf_path() names one, then build_sbatch_request(input).
// Every bad input throws UsageError whose what() is the text to print on stderr
// (one or more lines, each as Slurm prints it, without a final newline).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/option_parser.hpp"
#include "events/job_model.hpp"

namespace cairn {

struct SbatchInput {
  std::vector<std::string> args;           // argv after "sbatch"
  std::optional<std::string> script_text;  // the script file, or stdin when no file was given; nullopt with --wrap
  std::string script_path;                 // as given on the command line; empty for stdin and --wrap
  std::optional<std::string> bbf_text;     // contents of the --bbf file, when one is requested
  std::vector<std::string> environment;    // the caller's environ, "K=V"
  std::string cwd;                         // the caller's working directory
  std::string user_name;                   // may stay empty: the controller records the caller it verified
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string submit_host;
  int64_t now_unix = 0;  // for --begin
};

struct SbatchRequest {
  JobSpec spec;
  bool parsable = false;                    // --parsable
  bool quiet = false;                       // -Q/--quiet
  bool wait = false;                        // -W/--wait
  std::vector<std::string> script_args;     // arguments after the script path
  std::vector<std::string> warnings;        // lines Slurm prints on stderr without failing
  std::optional<std::string> early_output;  // help, usage or version text: print it on stdout, exit 0, submit nothing
};

struct SbatchCommandLine {
  std::optional<std::string> script_path;   // the first positional; nullopt: stdin, unless wrap
  bool wrap = false;                        // --wrap: there is no script to read
  std::optional<std::string> early_output;  // -h/--help, --usage, -V/--version: print on stdout, exit 0
};

// Slurm's first pass: the command line alone, options checked in order.
SbatchCommandLine sbatch_first_pass(const std::vector<std::string>& args);

// The script path of sbatch_first_pass (option values are never taken for it).
std::optional<std::string> sbatch_script_path(const std::vector<std::string>& args);

// The --bbf file that build_sbatch_request needs as input.bbf_text, as given
// (command line over SBATCH_* over #SBATCH); needs input.script_text like the build.
std::optional<std::string> sbatch_bbf_path(const SbatchInput& input);

SbatchRequest build_sbatch_request(const SbatchInput& input);

// --export as sbatch and srun take it: ALL (nullopt too), NONE, or [ALL,]NAME[=VALUE],...;
// except with ALL the caller's SLURM_* variables come along.
std::vector<std::string> export_environment(const std::optional<std::string>& export_option,
                                            const std::vector<std::string>& environment);

// What sbatch and srun add to their own environment before exporting it (Slurm 22.05's
// _set_umask_env, _set_prio_process_env): SLURM_UMASK ("0022"; one already set is kept) and
// SLURM_PRIO_PROCESS (the nice value). slurmstepd applies the umask to the job.
void add_submitter_variables(std::vector<std::string>& environment, unsigned umask_bits, int nice_value);

}  // namespace cairn
