// One actor per configured node: the agent's session (registration and its
// reconciliation with the log, heartbeats, node-loss detection) and the channel
// that carries the job actors' orders to the agent.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <set>
#include <utility>

#include "actors/actors.hpp"
#include "common/wall_clock.hpp"

namespace cairn {
namespace {

struct NodeActorState {
  std::shared_ptr<const ControllerContext> context;
  std::string node;
  std::shared_ptr<AgentChannel> channel;
  int64_t last_seen_us = 0;
  int64_t silence_allowed_us = 0;  // NodeTimeout, or ReconcileTimeout right after a restart
  bool lost = false;
  // Orders given while no agent is connected (e.g. just after a controller
  // restart), delivered in order once it registers; dropped if the node is lost.
  std::vector<std::function<void(AgentChannel&)>> held_orders;
  std::set<uint64_t> held_launches;  // jobs among held_orders: the agent cannot know them yet
  // Launched over the current session and not ended: a registration's list, made
  // before their launch, says nothing about them.
  std::set<uint64_t> launched_in_session;
  uint64_t session = 0;  // registrations so far: verdicts of an older one are dropped
  // The spool instance of the last registration this actor is appending or appended (the
  // query view may not have applied it yet); unset until the first: the log says.
  std::optional<std::string> last_instance;
  // Burst-buffer orders held the same way; they answer even when dropped (nullptr: the node is lost).
  std::vector<std::function<void(AgentChannel*)>> held_bb_orders;
  // Burst-buffer orders given to the agent, by token, until its answer comes back (bb_answer_atom).
  std::map<uint64_t, caf::typed_response_promise<StageOutcome>> bb_waiting;
  uint64_t next_bb_token = 0;
  static inline const char* name = "node_actor";
};

using NodeSelf = NodeActor::stateful_pointer<NodeActorState>;

void append(NodeSelf self, EventDraft draft, std::function<void(const AppendAck&)> then = {}) {
  self->request(self->state.context->actors.log, caf::infinite, append_atom::value, std::move(draft))
      .then([then = std::move(then)](const AppendAck& ack) {
        if (then) then(ack);
      });
}

EventDraft node_draft(const std::string& node, std::function<make::Bytes(const EventMeta&)> build) {
  EventDraft draft;
  draft.actor = {0, "cairnctld", schema::ActorKind::SYSTEM};
  draft.node_name = node;
  draft.build = std::move(build);
  return draft;
}

// The node is lost: every job holding resources on it ends NODE_FAIL, through its job
// actor (which ignores jobs already ended, and requeues the job when it may be).
void fail_jobs(NodeSelf self, const std::string& why) {
  auto& st = self->state;
  std::string node = st.node;
  self->request(st.context->actors.query_view, caf::infinite, query_nodes_atom::value, node, false)
      .then([=](const std::vector<uint64_t>& jobs) {
        for (auto id : jobs) {
          JobEnd lost{.job_id = id, .message = why, .lost = true};
          self->request(self->state.context->actors.dispatcher, caf::infinite, job_exit_atom_v, node, lost)
              .then([](const Recorded&) {});
        }
      });
}

// An operator set the node DOWN (NodeUpdated is durable): as slurmctld's
// kill_running_job_by_node_name, its jobs end NODE_FAIL (requeued when they may be). The
// kill on the agent is the job actor's order as that end is durable (one order per job).
void down_by_operator(NodeSelf self, const std::string& why) {
  auto& st = self->state;
  std::string node = st.node;
  self->request(st.context->actors.query_view, caf::infinite, query_nodes_atom::value, node, false)
      .then([=](const std::vector<uint64_t>& jobs) {
        for (auto id : jobs) {
          JobEnd lost{.job_id = id, .message = why, .lost = true};
          self->request(self->state.context->actors.dispatcher, caf::infinite, job_exit_atom_v, node, lost)
              .then([](const Recorded&) {});
        }
      });
}

std::string_view verdict_name(RunVerdict verdict) {
  switch (verdict) {
    case RunVerdict::relaunch: return "never delivered: launching it again";
    case RunVerdict::lost: return "lost with the node's spool";
    case RunVerdict::end_unlaunched: return "never delivered and being killed: ended";
    case RunVerdict::resend: return "repeating the order its state implies";
  }
  return "?";
}

// After a registration is durable: what the log says of the node against the agent's report.
// Jobs the agent has that do not run there any more are terminated at once; the verdicts
// on the others go to their job actors, which check them against their record (a lost or
// unlaunched run comes back here to be confirmed: see on_confirm).
void reconcile(NodeSelf self, const NodeLogView& log, const AgentRunReport& report, uint64_t session) {
  auto& st = self->state;
  if (session != st.session || !st.channel) return;  // a newer registration reconciles for itself
  Reconciliation plan = reconcile_registration(log, report, st.launched_in_session);
  uint32_t kill_wait = st.context->config().kill_wait_sec;
  for (uint64_t job_id : plan.stale) {
    spdlog::info("node {}: JobId={} does not run there any more: terminating it", st.node, job_id);
    st.channel->terminate(job_id, kill_wait, StopReason::none);
  }
  for (const JudgedRun& judged : plan.judged) {
    if (judged.verdict != RunVerdict::resend)
      spdlog::warn("node {}: JobId={} (run {}) {}", st.node, judged.run.job_id, judged.run.run,
                   verdict_name(judged.verdict));
    self->send(st.context->actors.dispatcher, reconcile_atom::value, st.node, judged.run.job_id, judged.run.run,
               static_cast<uint8_t>(judged.verdict), session);
  }
}

// A job actor confirms a verdict that ends a run: unless the run was launched over this
// session meanwhile (its launch was on its way), its end is recorded.
void on_confirm(NodeSelf self, uint64_t job_id, uint32_t run, RunVerdict verdict, uint64_t session) {
  auto& st = self->state;
  if (session != st.session || st.launched_in_session.contains(job_id)) return;
  bool lost = verdict == RunVerdict::lost;
  std::string why = lost ? "the node no longer knows the job: its agent's spool is not the one the job was given to"
                         : "the job was never launched on " + st.node + " before it was ended";
  JobEnd report{.job_id = job_id, .run = run, .message = why, .lost = lost};
  self->request(st.context->actors.dispatcher, caf::infinite, job_exit_atom_v, st.node, report)
      .then([](const Recorded&) {});
}

void deliver(NodeSelf self, std::function<void(AgentChannel&)> order) {
  auto& st = self->state;
  if (st.channel) {
    order(*st.channel);
  } else if (!st.lost) {
    st.held_orders.push_back(std::move(order));
  }
}

// A burst-buffer order answers in every case: the job actor waits for it.
void deliver_bb(NodeSelf self, std::function<void(AgentChannel*)> order) {
  auto& st = self->state;
  if (st.channel) {
    order(st.channel.get());
  } else if (st.lost) {
    order(nullptr);
  } else {
    st.held_bb_orders.push_back(std::move(order));
  }
}

StageOutcome node_lost_outcome(const std::string& node) {
  StageOutcome outcome;
  outcome.delivered = false;
  outcome.node_lost = true;
  outcome.message = "node " + node + " is lost";
  return outcome;
}

// The node is gone: DOWN, and every job holding resources on it ends NODE_FAIL.
void declare_lost(NodeSelf self, const std::string& why) {
  auto& st = self->state;
  st.lost = true;
  st.channel.reset();
  st.held_orders.clear();
  st.held_launches.clear();
  st.launched_in_session.clear();
  for (auto& order : std::exchange(st.held_bb_orders, {})) order(nullptr);
  std::string node = st.node;
  spdlog::warn("node {} lost: {}", node, why);
  append(self, node_draft(node, [=](const EventMeta& meta) { return make::node_down(meta, node, why); }),
         [=](const AppendAck&) { fail_jobs(self, why); });
}

// A burst-buffer order: answered when the agent answers (on the RPC thread, handed back here),
// or at once when the node is lost.
caf::typed_response_promise<StageOutcome> order_bb(NodeSelf self,
                                                   std::function<void(AgentChannel&, StageAnswer)> order) {
  auto promise = self->make_response_promise<StageOutcome>();
  std::string node = self->state.node;
  deliver_bb(self, [self, promise, order, node](AgentChannel* agent) mutable {
    if (!agent) {
      promise.deliver(node_lost_outcome(node));
      return;
    }
    uint64_t token = self->state.next_bb_token++;
    self->state.bb_waiting.emplace(token, promise);
    NodeActor me = caf::actor_cast<NodeActor>(self);
    order(*agent, [me, token](const StageOutcome& outcome) { caf::anon_send(me, bb_answer_atom_v, token, outcome); });
  });
  return promise;
}

NodeActor::behavior_type node_actor(NodeSelf self, std::shared_ptr<const ControllerContext> context, std::string node) {
  auto& st = self->state;
  st.context = std::move(context);
  st.node = std::move(node);
  log_failed_requests(self, "node_actor");
  st.last_seen_us = self->state.context->now_us();
  const auto& config = st.context->config();
  st.silence_allowed_us =
      static_cast<int64_t>(std::max(config.node_timeout_sec, config.reconcile_timeout_sec)) * 1'000'000;
  self->send(self, tick_atom::value);
  return {
      [=](register_atom, const AgentRegistration& registration) -> caf::result<Recorded> {
        auto reply = self->make_response_promise<Recorded>();
        auto& st = self->state;
        uint64_t session = ++st.session;
        st.channel = registration.channel;
        st.last_seen_us = self->state.context->now_us();
        st.silence_allowed_us = static_cast<int64_t>(st.context->config().node_timeout_sec) * 1'000'000;
        st.lost = false;
        for (auto& order : st.held_orders) order(*st.channel);
        st.held_orders.clear();
        for (auto& order : std::exchange(st.held_bb_orders, {})) order(st.channel.get());
        // Held launches have just been delivered over this session.
        st.launched_in_session = std::exchange(st.held_launches, {});
        const auto& info = registration.node;
        const std::string& instance = registration.instance;
        AgentRunReport report{instance, info.running_jobs, registration.runs};
        // What the log says is taken before this registration is appended: its instance is the previous one.
        self->request(st.context->actors.query_view, caf::infinite, node_log_atom::value, st.node)
            .then([=](NodeLogView log) {
              // A registration appended just before may not be applied yet: its instance is the one.
              auto before = std::exchange(self->state.last_instance, instance);
              if (before) log.instance = *before;
              append(self,
                     node_draft(info.node,
                                [=](const EventMeta& meta) { return make::node_registered(meta, info, instance); }),
                     [=](const AppendAck& ack) mutable {
                       reply.deliver(Recorded{ack.ok, ack.error});
                       if (ack.ok) return reconcile(self, log, report, session);
                       if (session == self->state.session) self->state.last_instance = before;  // not in the log
                     });
            });
        return reply;
      },
      [=](reconcile_atom, uint64_t job_id, uint32_t run, uint8_t verdict, uint64_t session) {
        on_confirm(self, job_id, run, static_cast<RunVerdict>(verdict), session);
      },
      [=](heartbeat_atom) { self->state.last_seen_us = self->state.context->now_us(); },
      [=](node_down_atom, const std::string& why) { down_by_operator(self, why); },
      // An operator returned the node to service: one lost with its agent is given NodeTimeout
      // to register again before it is declared lost anew.
      [=](node_back_atom) {
        auto& st = self->state;
        if (!st.lost) return;
        st.lost = false;
        st.last_seen_us = self->state.context->now_us();
      },
      [=](tick_atom) {
        auto& st = self->state;
        // A node of a shard another controller writes is that controller's to watch.
        bool watched = st.context->owns(st.context->config().shard_of_node(st.node));
        if (watched && !st.lost && self->state.context->now_us() - st.last_seen_us > st.silence_allowed_us)
          declare_lost(self, st.channel ? "Not responding" : "Agent did not register");
        self->delayed_send(self, std::chrono::seconds(1), tick_atom::value);
      },
      [=](launch_atom, JobLaunch& order) {
        if (!self->state.channel)
          self->state.held_launches.insert(order.job_id);
        else
          self->state.launched_in_session.insert(order.job_id);
        uint64_t job_id = order.job_id;
        uint32_t run = order.restart_count;
        LaunchAnswer answer = [me = caf::actor_cast<NodeActor>(self), job_id, run](const std::string& cpu_ids) {
          caf::anon_send(me, cpus_bound_atom_v, job_id, run, cpu_ids);
        };
        deliver(self, [shared = std::make_shared<const JobLaunch>(std::move(order)), answer](AgentChannel& agent) {
          agent.launch(shared, answer);
        });
      },
      [=](terminate_atom, uint64_t job_id, uint32_t kill_wait_sec, StopReason reason) {
        deliver(self, [=](AgentChannel& agent) { agent.terminate(job_id, kill_wait_sec, reason); });
      },
      [=](suspend_atom, uint64_t job_id) { deliver(self, [=](AgentChannel& agent) { agent.suspend(job_id); }); },
      [=](resume_atom, uint64_t job_id) { deliver(self, [=](AgentChannel& agent) { agent.resume(job_id); }); },
      [=](signal_atom, uint64_t job_id, int32_t signal, bool batch_only) {
        deliver(self, [=](AgentChannel& agent) { agent.signal(job_id, signal, batch_only); });
      },
      [=](step_launch_atom, const StepLaunch& launch, uint64_t io_token) {
        uint64_t job_id = launch.job_id;
        uint32_t run = launch.restart_count;
        LaunchAnswer answer = [me = caf::actor_cast<NodeActor>(self), job_id, run](const std::string& cpu_ids) {
          caf::anon_send(me, cpus_bound_atom_v, job_id, run, cpu_ids);
        };
        deliver(self, [=](AgentChannel& agent) { agent.launch_step(launch, io_token, answer); });
      },
      // A signal to a step's tasks here; 0: terminate them (SIGTERM, then SIGKILL after KillWait).
      [=](step_control_atom, uint64_t job_id, uint32_t step_id, int32_t signal, uint32_t kill_wait_sec,
          StopReason reason) {
        deliver(self, [=](AgentChannel& agent) {
          if (signal == 0) agent.terminate_step(job_id, step_id, kill_wait_sec, reason);
          else agent.signal_step(job_id, step_id, signal);
        });
      },
      [=](step_end_atom, const StepEnd& report) -> caf::result<Recorded> {
        self->state.last_seen_us = self->state.context->now_us();
        return self->delegate(self->state.context->actors.dispatcher, step_end_atom_v, self->state.node, report);
      },
      [=](bb_stage_atom, const StageOrder& order) -> caf::result<StageOutcome> {
        return order_bb(self, [order](AgentChannel& agent, StageAnswer answer) { agent.stage(order, answer); });
      },
      [=](bb_teardown_atom, uint64_t job_id, const std::string& directory) -> caf::result<StageOutcome> {
        return order_bb(self, [job_id, directory](AgentChannel& agent, StageAnswer answer) {
          agent.bb_teardown(job_id, directory, answer);
        });
      },
      [=](bb_answer_atom, uint64_t token, const StageOutcome& outcome) {
        auto waiting = self->state.bb_waiting.extract(token);
        if (!waiting.empty()) waiting.mapped().deliver(outcome);
      },
      [=](job_exit_atom, const JobEnd& report) -> caf::result<Recorded> {
        self->state.last_seen_us = self->state.context->now_us();
        self->state.launched_in_session.erase(report.job_id);
        return self->delegate(self->state.context->actors.dispatcher, job_exit_atom_v, self->state.node, report);
      },
      [=](cpus_bound_atom, uint64_t job_id, uint32_t run, const std::string& cpu_ids) {
        self->send(self->state.context->actors.dispatcher, cpus_bound_atom_v, self->state.node, job_id, run, cpu_ids);
      },
      [=](oom_atom, const JobOom& report) {
        self->send(self->state.context->actors.dispatcher, oom_atom_v, self->state.node, report);
      },
  };
}

}  // namespace

NodeActor spawn_node_actor(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                            const std::string& node) {
  return system.spawn(node_actor, std::move(context), node);
}

}  // namespace cairn
