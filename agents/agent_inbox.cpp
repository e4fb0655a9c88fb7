// JobOrders for the kj thread: each order becomes a message to the agent actor.
#include <caf/all.hpp>

#include "agents/agent_actors.hpp"
#include "agents/agent_messages.hpp"

namespace cairn {
namespace {

using namespace agent_msg;

class AgentInbox final : public JobOrders {
 public:
  explicit AgentInbox(caf::actor agent) : agent_(std::move(agent)) {}

  void launch(JobLaunch job, LaunchDone done) override {
    caf::anon_send(agent_, launch_atom::value, std::move(job), std::move(done));
  }
  void suspend(uint64_t job_id) override { caf::anon_send(agent_, suspend_atom::value, job_id); }
  void resume(uint64_t job_id) override { caf::anon_send(agent_, resume_atom::value, job_id); }
  void signal(uint64_t job_id, int32_t signal, bool batch_only) override {
    caf::anon_send(agent_, signal_atom::value, job_id, signal, batch_only);
  }
  void terminate(uint64_t job_id, uint32_t kill_wait_sec) override {
    caf::anon_send(agent_, terminate_atom::value, job_id, kill_wait_sec);
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

 private:
  caf::actor agent_;
};

}  // namespace

std::unique_ptr<JobOrders> make_agent_inbox(caf::actor agent) { return std::make_unique<AgentInbox>(std::move(agent)); }

}  // namespace cairn
