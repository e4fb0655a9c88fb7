// Requests to actors from a thread that is not an actor (the kj loop thread of the RPC
// service), answered without an actor per request: the answer is handed to a callback on
// the answering actor's thread. A one-shot actor per request cost a spawn, two more
// schedulings on the CAF workers and, at its end, a wake of CAF's clock thread.
#pragma once

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace cairn {

class OutsideRequests {
 public:
  // The answer's message (an error's too); called once, on the thread of the actor that answers.
  using OnAnswer = std::function<void(caf::message&)>;

  explicit OutsideRequests(caf::actor_system& system);
  ~OutsideRequests();  // before the actor system: unanswered requests are dropped
  OutsideRequests(const OutsideRequests&) = delete;
  OutsideRequests& operator=(const OutsideRequests&) = delete;

  // Sends `content` to `target` as a request; its answer goes to `on_answer`. A target that is
  // gone answers with an error, as it would to an actor.
  void request(const caf::strong_actor_ptr& target, caf::message content, OnAnswer on_answer);

 private:
  void answered(uint64_t request_id, caf::message& content);

  struct Sink;  // the actor the answers are addressed to
  std::unique_ptr<Sink> sink_;
  std::mutex mutex_;
  uint64_t last_id_ = 0;
  std::unordered_map<uint64_t, OnAnswer> waiting_;
};

}  // namespace cairn
