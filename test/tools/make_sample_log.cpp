// Writes a fixed history into a file log, so integration tests can drive the
// real binaries on it:
//   make_sample_log DIR                 the sample history of test/unit/event_fixtures.hpp
//   make_sample_log --interrupted DIR WORKDIR   a job (working in WORKDIR) whose run ended
//       TIMEOUT under a resubmission policy, as if the controller died before resubmitting
#include <unistd.h>

#include <iostream>
#include <string>

#include "events/log/event_log.hpp"
#include "test/unit/event_fixtures.hpp"

namespace {

using namespace cairn;
using namespace cairn::test;

Timeline interrupted_resubmission(const std::string& work_dir) {
  Timeline t;
  t.feed(make::epoch_claimed(by_system(-20), 0, 1, "cairnctld@head"));
  t.feed(make::node_registered(by_agent(-10), {"n1", 2, 1000, {"debug"}, false, "none", {}}));
  auto spec = simple_spec("interrupted", 60);
  spec.user_name = "root";
  spec.uid = spec.gid = static_cast<uint32_t>(getuid());
  spec.script = "#!/bin/sh\necho \"run ${SLURM_RESTART_COUNT:-0}\"\n";
  spec.work_dir = work_dir;
  spec.resubmit.max_restarts = 2;
  spec.resubmit.on_states = {JobState::TIMEOUT};
  t.feed(make::job_submitted(at(0), 1, spec));
  t.feed(make::job_allocated(by_system(0.5), 1, {{"n1", 1, 0}}, 60));
  t.feed(make::job_time_limit_reached(by_system(60.5), 1));
  t.feed(make::job_ended(by_agent(61), 1, schema::EndCause::KILLED, 0, 15, "n1"));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  bool interrupted = argc == 4 && std::string(argv[1]) == "--interrupted";
  if (argc != 2 && !interrupted) {
    std::cerr << "usage: make_sample_log DIR | make_sample_log --interrupted DIR WORKDIR\n";
    return 2;
  }
  auto history = interrupted ? interrupted_resubmission(argv[3]) : sample_history();
  auto log = open_file_log(interrupted ? argv[2] : argv[1]);
  for (auto& record : history.records) log->append_sync(0, record);
  std::cout << history.records.size() << " events written\n";
  return 0;
}
