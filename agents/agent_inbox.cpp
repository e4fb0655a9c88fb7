// JobOrders for the kj thread: each order becomes a message to the agent actor.
#include <caf/all.hpp>

#include "agents/agent_actors.hpp"
#include "agents/agent_messages.hpp"

namespace cairn {
namespace {

using namespace agent_msg;

class AgentInbox final : public JobOrders {
 public:
  AgentInbox(caf::actor agent, caf::actor staging) : agent_(std::move(agent)), staging_(std::move(staging)) {}

  void launch(JobLaunch job, LaunchDone done) override {
    caf::anon_send(agent_, launch_atom::value, std::move(job), std::move(done));
  }
  void suspend(uint64_t job_id) override { caf::anon_send(agent_, suspend_atom::value, job_id); }
  void resume(uint64_t job_id) override { caf::anon_send(agent_, resume_atom::value, job_id); }
  void signal(uint64_t job_id, int32_t signal, bool batch_only) override {
    caf::anon_send(agent_, signal_atom::value, job_id, signal, batch_only);
  }
  void terminate(uint64_t job_id, uint32_t kill_wait_sec, StopReason reason) override {
    caf::anon_send(agent_, terminate_atom::value, job_id, kill_wait_sec, static_cast<uint8_t>(reason));
  }
  void children_reaped(std::vector<ReapedChild> children) override {
    caf::anon_send(agent_, reaped_atom::value, std::move(children));
  }
  void end_acknowledged(uint64_t job_id, uint32_t run) override {
    caf::anon_send(agent_, acked_atom::value, job_id, run);
  }
  void memory_event(uint64_t job_id, uint32_t run) override {
    caf::anon_send(agent_, memory_atom::value, job_id, run);
  }
  void stage(StageOrder order, StageDone done) override {
    if (!staging_) return JobOrders::stage(std::move(order), std::move(done));
    caf::anon_send(staging_, bb_stage_atom::value, std::move(order), std::move(done));
  }
  void bb_teardown(uint64_t job_id, std::string directory, StageDone done) override {
    if (!staging_) return JobOrders::bb_teardown(job_id, std::move(directory), std::move(done));
    caf::anon_send(staging_, bb_teardown_atom::value, job_id, std::move(directory), std::move(done));
  }
  void launch_step(StepLaunch launch, StepLaunched launched) override {
    caf::anon_send(agent_, step_launch_atom::value, std::move(launch), std::move(launched));
  }
  void terminate_step(uint64_t job_id, uint32_t step_id, uint32_t kill_wait_sec, StopReason reason) override {
    caf::anon_send(agent_, step_control_atom::value, job_id, step_id, int32_t{0}, kill_wait_sec,
                   static_cast<uint8_t>(reason));
  }
  void signal_step(uint64_t job_id, uint32_t step_id, int32_t signal) override {
    caf::anon_send(agent_, step_control_atom::value, job_id, step_id, signal, uint32_t{0}, uint8_t{0});
  }
  void usage(uint64_t job_id, uint32_t step_id, UsageDone done) override {
    caf::anon_send(agent_, usage_atom::value, job_id, step_id, std::move(done));
  }

 private:
  caf::actor agent_;
  caf::actor staging_;  // may be null: no burst-buffer staging
};

}  // namespace

std::unique_ptr<JobOrders> make_agent_inbox(caf::actor agent) {
  return std::make_unique<AgentInbox>(std::move(agent), caf::actor());
}

std::unique_ptr<JobOrders> make_agent_inbox(caf::actor agent, caf::actor staging) {
  return std::make_unique<AgentInbox>(std::move(agent), std::move(staging));
}

}  // namespace cairn
