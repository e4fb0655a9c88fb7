// The single writer of a controller's shards: routes each event to its shard (a
// submission's partition, else its job's or node's shard), stamps it (time, shard,
// epoch, job id), appends it (group commit), and only once it is durable — and the
// fence watch has read past it without meeting a newer writer's claim — acks the
// requester and hands it to the dispatcher, in the order the log made them durable.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <tuple>

#include "actors/actors.hpp"
#include "events/job_id.hpp"

namespace cairn {
namespace {

struct LogActorState {
  EventLog* log = nullptr;
  std::shared_ptr<const ControllerContext> context;
  std::vector<uint64_t> next_job_ids;  // by shard
  // With several shards the controller numbers durable events itself (CommittedEvent::offset).
  bool counts_positions = false;
  uint64_t next_position = 0;
  uint64_t next_token = 0;
  std::map<uint64_t, caf::typed_response_promise<AppendAck>> waiting;
  std::string fenced;  // why appends are refused, once a newer writer claimed the shard
  // Durable events held until their shard's fence watch has read past them without
  // meeting a newer claim (only then do readers count them), by shard, offset in it and
  // token (the events of one Kafka record share its offset).
  struct Unverified {
    uint64_t token;
    CommittedEvent event;
  };
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, Unverified> unverified;
  std::vector<uint64_t> verified_end;  // by shard: every offset below it was checked
  uint64_t failed_in_a_row = 0;  // appends failed since the last that succeeded: logged once
  // Barriers waiting for the appends taken before them, by the first token after those.
  std::multimap<uint64_t, caf::typed_response_promise<uint64_t>> barriers;
  static inline const char* name = "log_actor";
};

using LogSelf = LogActor::stateful_pointer<LogActorState>;

// Answers the barriers whose earlier appends are all answered.
void settle_barriers(LogSelf self) {
  auto& st = self->state;
  uint64_t oldest_waiting = st.waiting.empty() ? st.next_token : st.waiting.begin()->first;
  while (!st.barriers.empty() && st.barriers.begin()->first <= oldest_waiting) {
    st.barriers.begin()->second.deliver(st.context->acked_end->load(std::memory_order_acquire));
    st.barriers.erase(st.barriers.begin());
  }
}

void answer(LogSelf self, uint64_t token, const AppendAck& ack) {
  auto it = self->state.waiting.find(token);
  if (it == self->state.waiting.end()) return;
  // Before the requester hears of it: a command that follows this acknowledgement sees it.
  auto& acked_end = *self->state.context->acked_end;
  if (ack.ok && ack.offset + 1 > acked_end.load(std::memory_order_relaxed))
    acked_end.store(ack.offset + 1, std::memory_order_release);
  it->second.deliver(ack);
  self->state.waiting.erase(it);
  if (!self->state.barriers.empty()) settle_barriers(self);
}

// A durable, checked event of this controller: numbered (with several shards, in the order
// events are released, so that the dispatcher gets them in the controller's order), handed
// to the dispatcher, and its requester answered.
void release(LogSelf self, uint64_t token, CommittedEvent event) {
  auto& st = self->state;
  if (st.counts_positions) event.offset = st.next_position++;
  self->send(st.context->actors.dispatcher, committed_atom::value, event);
  answer(self, token, AppendAck{true, event.offset, event.job_id, {}});
}

// The shard an event goes to: see EventDraft::shard.
uint32_t shard_of_draft(const ControllerContext& context, const EventDraft& draft) {
  if (context.shard_epochs.size() <= 1) return context.shard;
  uint32_t shard = 0;
  if (draft.shard)
    shard = *draft.shard;
  else if (draft.job_id != 0)
    shard = shard_of_job(draft.job_id);
  else if (!draft.node_name.empty())
    shard = context.config().shard_of_node(draft.node_name);
  if (shard < context.shard_epochs.size()) return shard;
  spdlog::warn("an event of shard {} (job {}) for a controller of {} shards: written to shard 0", shard, draft.job_id,
               context.shard_epochs.size());
  return 0;
}

LogActor::behavior_type log_actor(LogSelf self, EventLog* log, std::shared_ptr<const ControllerContext> context,
                                  std::vector<uint64_t> next_job_ids) {
  self->state.log = log;
  self->state.context = std::move(context);
  self->state.next_job_ids = std::move(next_job_ids);
  self->state.counts_positions = self->state.context->shard_epochs.size() > 1;
  self->state.next_position = self->state.context->acked_end->load();
  self->state.verified_end.assign(std::max<size_t>(1, self->state.context->shard_epochs.size()), 0);
  log_failed_requests(self, "log_actor");
  return {
      [=](append_atom, EventDraft& draft) -> caf::result<AppendAck> {
        auto& st = self->state;
        if (!st.fenced.empty()) return AppendAck{false, 0, 0, st.fenced};
        EventMeta meta;
        meta.time_us = st.context->now_us();
        uint32_t shard = shard_of_draft(*st.context, draft);
        if (!st.context->owns(shard))
          return AppendAck{false, 0, 0,
                           fmt::format("shard {} is written by another controller (this one writes shards {})", shard,
                                       st.context->ownership.text())};
        meta.shard = shard;
        meta.epoch = st.counts_positions ? st.context->shard_epochs[shard] : st.context->epoch;
        meta.job_id = draft.new_job_id ? st.next_job_ids.at(st.counts_positions ? shard : 0)++ : draft.job_id;
        if (draft.new_job_id) st.log->note_job_id(shard, meta.job_id);
        meta.node_name = draft.node_name;
        meta.actor = draft.actor;
        meta.command_id = draft.command_id;
        auto bytes = std::make_shared<const std::vector<uint8_t>>(draft.build(meta));
        uint64_t token = st.next_token++;
        auto promise = self->make_response_promise<AppendAck>();
        st.waiting.emplace(token, promise);
        LogActor me = caf::actor_cast<LogActor>(self);
        uint64_t job_id = meta.job_id;
        auto appended = std::chrono::steady_clock::now();
        auto metrics = st.context->metrics;
        auto durable = [me, token, bytes, job_id, shard, appended, metrics](const AppendResult& result) {
          if (result.ok)
            metrics->append_durable(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                              std::chrono::steady_clock::now() - appended)
                                                              .count()));
          // Runs on the log's commit thread: hand the outcome back to the actor.
          caf::anon_send(me, durable_atom_v, token, result,
                         CommittedEvent{result.offset, bytes, job_id, result.offset, shard, result.ends_record});
        };
        if (draft.unhurried)
          st.log->append_unhurried(shard, *bytes, std::move(durable));
        else
          st.log->append(shard, *bytes, std::move(durable));
        return promise;
      },
      [=](barrier_atom) -> caf::result<uint64_t> {
        auto& st = self->state;
        auto promise = self->make_response_promise<uint64_t>();
        st.barriers.emplace(st.next_token, promise);
        settle_barriers(self);
        return promise;
      },
      // Read from a shard another controller writes: it takes its place in this controller's order.
      [=](foreign_atom, CommittedEvent& event) {
        auto& st = self->state;
        event.offset = st.next_position++;
        self->send(st.context->actors.dispatcher, committed_atom::value, event);
      },
      // The fence watch of `shard` read it up to `end` and found no newer claim.
      [=](checked_atom, uint32_t shard, uint64_t end) {
        auto& st = self->state;
        if (shard >= st.verified_end.size()) return;
        st.verified_end[shard] = std::max(st.verified_end[shard], end);
        auto it = st.unverified.lower_bound({shard, 0, 0});
        while (it != st.unverified.end() && std::get<0>(it->first) == shard &&
               std::get<1>(it->first) < st.verified_end[shard]) {
          auto item = std::move(it->second);
          it = st.unverified.erase(it);
          release(self, item.token, std::move(item.event));
        }
      },
      // A newer writer claimed a shard: what it did not see first is ignored by readers.
      [=](fenced_atom, uint64_t epoch, const std::string& controller) {
        auto& st = self->state;
        st.fenced = fmt::format("this controller was fenced: {} took the shard with writer epoch {}", controller, epoch);
        for (auto& [where, item] : st.unverified)
          answer(self, item.token, AppendAck{false, std::get<1>(where), item.event.job_id, st.fenced});
        st.unverified.clear();
      },
      [=](durable_atom, uint64_t token, AppendResult result, CommittedEvent event) {
        auto& st = self->state;
        uint64_t job_id = event.job_id;
        if (!result.ok) {
          // A log that cannot write refuses every append until it can: one line, not one per append.
          if (st.failed_in_a_row++ == 0)
            spdlog::error("event log append failed: {} (further failures are not logged until an append succeeds)",
                          result.error);
          answer(self, token, AppendAck{false, result.offset, job_id, result.error});
          return;
        }
        if (st.failed_in_a_row > 0) {
          spdlog::info("event log appends succeed again; {} failed", st.failed_in_a_row);
          st.failed_in_a_row = 0;
        }
        uint32_t shard = event.shard < st.verified_end.size() ? event.shard : 0;
        if (!st.fenced.empty()) {
          answer(self, token, AppendAck{false, result.offset, job_id, st.fenced});
        } else if (event.log_offset < st.verified_end[shard]) {
          release(self, token, std::move(event));
        } else {
          st.unverified.emplace(std::make_tuple(shard, event.log_offset, token),
                                LogActorState::Unverified{token, std::move(event)});
        }
      },
  };
}

}  // namespace

LogActor spawn_log_actor(caf::actor_system& system, EventLog& log, std::shared_ptr<const ControllerContext> context,
                         std::vector<uint64_t> next_job_ids) {
  return system.spawn(log_actor, &log, std::move(context), std::move(next_job_ids));
}

}  // namespace cairn
