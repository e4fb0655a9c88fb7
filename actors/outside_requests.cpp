#include "actors/outside_requests.hpp"

#include <caf/actor_companion.hpp>
#include <caf/all.hpp>
#include <caf/scoped_execution_unit.hpp>

namespace cairn {

// An actor companion: never scheduled, it takes each message on the sender's thread.
struct OutsideRequests::Sink {
  caf::actor_system& system;
  caf::strong_actor_ptr address;
  caf::actor_companion* companion() const { return caf::actor_cast<caf::actor_companion*>(address); }
};

OutsideRequests::OutsideRequests(caf::actor_system& system)
    : sink_(std::make_unique<Sink>(Sink{system, caf::actor_cast<caf::strong_actor_ptr>(system.spawn<caf::actor_companion>())})) {
  sink_->companion()->on_enqueue([this](caf::mailbox_element_ptr answer) {
    auto content = answer->move_content_to_message();
    answered(answer->mid.request_id().integer_value(), content);
  });
}

OutsideRequests::~OutsideRequests() {
  auto* companion = sink_->companion();
  companion->on_enqueue([](caf::mailbox_element_ptr) {});  // late answers go nowhere
  caf::scoped_execution_unit host{&sink_->system};
  companion->cleanup(caf::error{}, &host);
}

void OutsideRequests::request(const caf::strong_actor_ptr& target, caf::message content, OnAnswer on_answer) {
  uint64_t id;
  {
    std::lock_guard lock(mutex_);
    id = ++last_id_;
    waiting_.emplace(id, std::move(on_answer));
  }
  auto request_id = caf::make_message_id(id);
  if (!target) {
    auto error = caf::make_message(caf::make_error(caf::sec::invalid_argument));
    answered(id, error);
    return;
  }
  target->enqueue(caf::make_mailbox_element(sink_->address, request_id, {}, std::move(content)), nullptr);
}

void OutsideRequests::answered(uint64_t request_id, caf::message& content) {
  OnAnswer on_answer;
  {
    std::lock_guard lock(mutex_);
    auto it = waiting_.find(request_id);
    if (it == waiting_.end()) return;
    on_answer = std::move(it->second);
    waiting_.erase(it);
  }
  on_answer(content);
}

}  // namespace cairn
