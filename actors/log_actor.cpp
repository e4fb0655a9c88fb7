// The single writer of a shard: stamps each event (time, shard, epoch, job id),
// appends it (the file log group-commits), and only once it is durable acks the
// requester and hands it to the dispatcher, in offset order.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

#include "actors/controller_actors.hpp"

namespace cairn {
namespace {

struct LogActorState {
  EventLog* log = nullptr;
  std::shared_ptr<const ControllerContext> context;
  uint64_t next_job_id = 0;
  uint64_t next_token = 0;
  std::map<uint64_t, caf::response_promise> waiting;
  static inline const char* name = "log_actor";
};

int64_t wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

caf::behavior log_actor(caf::stateful_actor<LogActorState>* self, EventLog* log,
                        std::shared_ptr<const ControllerContext> context, uint64_t next_job_id) {
  self->state.log = log;
  self->state.context = std::move(context);
  self->state.next_job_id = next_job_id;
  return {
      [=](append_atom, EventDraft& draft) -> caf::result<AppendAck> {
        auto& st = self->state;
        EventMeta meta;
        meta.time_us = wall_clock_us();
        meta.shard = st.context->shard;
        meta.epoch = st.context->epoch;
        meta.job_id = draft.new_job_id ? st.next_job_id++ : draft.job_id;
        meta.node_name = draft.node_name;
        meta.actor = draft.actor;
        meta.command_id = draft.command_id;
        auto bytes = std::make_shared<const std::vector<uint8_t>>(draft.build(meta));
        uint64_t token = st.next_token++;
        auto promise = self->make_response_promise();
        st.waiting.emplace(token, promise);
        caf::actor me = caf::actor_cast<caf::actor>(self);
        uint64_t job_id = meta.job_id;
        st.log->append(st.context->shard, *bytes, [me, token, bytes, job_id](const AppendResult& result) {
          // Runs on the log's commit thread: hand the outcome back to the actor.
          caf::anon_send(me, committed_atom::value, token, result, CommittedEvent{result.offset, bytes, job_id}, job_id);
        });
        return caf::delegated<AppendAck>();
      },
      [=](committed_atom, uint64_t token, const AppendResult& result, const CommittedEvent& event, uint64_t job_id) {
        auto& st = self->state;
        auto it = st.waiting.find(token);
        if (result.ok) {
          self->send(st.context->actors.dispatcher, committed_atom::value, event);
        } else {
          spdlog::error("event log append failed: {}", result.error);
        }
        if (it == st.waiting.end()) return;
        it->second.deliver(AppendAck{result.ok, result.offset, job_id, result.error});
        st.waiting.erase(it);
      },
  };
}

}  // namespace

caf::actor spawn_log_actor(caf::actor_system& system, EventLog& log, std::shared_ptr<const ControllerContext> context,
                           uint64_t next_job_id) {
  return system.spawn(log_actor, &log, std::move(context), next_job_id);
}

}  // namespace cairn
