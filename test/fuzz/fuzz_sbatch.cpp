// sbatch's command line, #SBATCH directives and SBATCH_* variables.
// Input: NUL-separated fields; the first is the script (and the --bbf file), a field
// "SBATCH_X=..." is an environment variable, every other field a command-line argument.
#include "cli/sbatch_request.hpp"
#include "events/submission_limits.hpp"
#include "test/fuzz/fuzz_support.hpp"

using namespace cairn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto fields = fuzz::nul_fields(data, size);
  SbatchInput input;
  input.script_text = fields.front();
  input.cwd = "/home/user";
  input.now_unix = 1'790'000'000;
  input.environment = {"PATH=/usr/bin:/bin", "HOME=/home/user", "SLURM_CONF=/etc/slurm.conf", "EMPTY="};
  for (size_t i = 1; i < fields.size(); ++i) {
    if (fields[i].starts_with("SBATCH_") && fields[i].find('=') != std::string::npos)
      input.environment.push_back(fields[i]);
    else
      input.args.push_back(fields[i]);
  }
  try {
    auto first = sbatch_first_pass(input.args);
    if (first.wrap) input.script_text.reset();
    if (first.script_path) input.script_path = *first.script_path;
    if (sbatch_bbf_path(input)) input.bbf_text = fields.front();
    auto request = build_sbatch_request(input);
    // What sbatch checks before it submits (and the controller again).
    (void)submission_limit_error(request.spec, 4 * 1024 * 1024, false);
  } catch (const UsageError&) {
  }
  try {
    std::optional<std::string> export_option;
    if (fields.size() > 1) export_option = fields[1];
    (void)export_environment(export_option, input.environment);
  } catch (const UsageError&) {
  }
  return 0;
}
