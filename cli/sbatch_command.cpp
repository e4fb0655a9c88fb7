// sbatch: reads the script, builds the request (cli/sbatch_request), submits it.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/controller_client.hpp"
#include "cli/front_ends.hpp"
#include "cli/sbatch_request.hpp"
#include "common/option_parser.hpp"
#include "events/submission_limits.hpp"

extern char** environ;

namespace cairn {
namespace {

std::string read_text(std::istream& in) {
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> current_environment() {
  std::vector<std::string> out;
  for (char** entry = environ; entry && *entry; ++entry) out.emplace_back(*entry);
  return out;
}

std::string current_directory() {
  std::vector<char> buffer(4096);
  return getcwd(buffer.data(), buffer.size()) ? std::string(buffer.data()) : std::string(".");
}

}  // namespace

SbatchInput submission_from_caller(const Args& args) {
  SbatchInput input;
  input.args = args;
  input.environment = current_environment();
  mode_t mask = ::umask(0);
  ::umask(mask);
  errno = 0;
  int nice_value = ::getpriority(PRIO_PROCESS, 0);
  if (nice_value == -1 && errno != 0) nice_value = 0;
  add_submitter_variables(input.environment, mask, nice_value);
  input.cwd = current_directory();
  input.uid = getuid();
  input.gid = getgid();
  // No user name: the controller records the caller it verified (a passwd lookup, NSS
  // and all, would be most of what sbatch does besides the submission).
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  input.submit_host = host;
  input.now_unix =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return input;
}

int run_sbatch(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("sbatch", err, [&] {
    auto first = sbatch_first_pass(argv);
    if (first.early_output) {
      out << *first.early_output << (first.early_output->ends_with("\n") ? "" : "\n");
      return 0;
    }
    SbatchInput input = submission_from_caller(argv);
    if (first.script_path) {
      std::ifstream file(*first.script_path);
      if (!file) throw UsageError("sbatch: error: Unable to open file " + *first.script_path);
      input.script_text = read_text(file);
      input.script_path = *first.script_path;
    } else if (!first.wrap) {
      input.script_text = read_text(std::cin);
    }
    if (auto bbf = sbatch_bbf_path(input)) {
      std::ifstream file(*bbf);
      if (!file) throw UsageError("sbatch: error: Unable to open file " + *bbf);
      input.bbf_text = read_text(file);
    }
    auto request = build_sbatch_request(input);
    for (const auto& warning : request.warnings) err << warning << "\n";
    auto config = load_cli_config(std::nullopt);
    // The controller's own checks, before a large script travels (the nice rule needs the caller: it stays there).
    if (auto error = submission_limit_error(request.spec, config.max_script_size, true); !error.empty()) {
      err << "sbatch: error: Batch job submission failed: " << error << "\n";
      return 1;
    }
    uint64_t job_id = 0;
    try {
      ControllerClient client(config);
      job_id = client.submit(request.spec);
    } catch (const std::exception& e) {
      // Slurm prints the QOS limit a refusal names on a line of its own (job_mgr.c's err_msg).
      std::string message = remote_message(e);
      if (auto newline = message.find('\n'); newline != std::string::npos) {
        err << "sbatch: error: " << message.substr(0, newline) << "\n";
        message = message.substr(newline + 1);
      }
      err << "sbatch: error: Batch job submission failed: " << message << "\n";
      return 1;
    }
    if (request.parsable) {
      out << job_id << "\n";
    } else if (!request.quiet) {
      out << "Submitted batch job " << job_id << "\n";
    }
    return 0;
  });
}

}  // namespace cairn
