// Requests to actors from a thread that is not an actor (as the RPC service's kj thread
// makes them): answers, errors, and answers given later through a response promise.
#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>

#include "actors/outside_requests.hpp"

namespace cairn::test {
namespace {

using namespace std::chrono_literals;

// The answer as text ("error: ..." for an error), or "none" when none came within 5 s.
std::string ask(OutsideRequests& requests, caf::actor_system& system, const caf::actor& target, caf::message content) {
  auto answered = std::make_shared<std::promise<std::string>>();
  auto future = answered->get_future();
  requests.request(caf::actor_cast<caf::strong_actor_ptr>(target), std::move(content),
                   [answered, &system](caf::message& answer) {
                     if (answer.match_elements<int>()) answered->set_value(std::to_string(answer.get_as<int>(0)));
                     else if (answer.match_elements<caf::error>())
                       answered->set_value("error: " + system.render(answer.get_as<caf::error>(0)));
                     else answered->set_value("other: " + caf::to_string(answer));
                   });
  if (future.wait_for(5s) != std::future_status::ready) return "none";
  return future.get();
}

caf::behavior doubler() {
  return {[](int x) { return 2 * x; }};
}

// Answers later, from another actor's turn: through a response promise.
caf::behavior late_doubler(caf::event_based_actor* self, caf::actor helper) {
  return {[=](int x) -> caf::result<int> {
    auto promise = self->make_response_promise<int>();
    self->request(helper, caf::infinite, x).then([promise](int doubled) mutable { promise.deliver(doubled); });
    return promise;
  }};
}

}  // namespace

TEST_CASE("outside requests: answers, later answers, errors, and a target that is gone") {
  caf::actor_system_config config;
  config.set("scheduler.policy", caf::atom("sharing"));
  config.set("scheduler.max-threads", 2);
  caf::actor_system system{config};
  {
    OutsideRequests requests(system);
    auto target = system.spawn(doubler);
    CHECK(ask(requests, system, target, caf::make_message(21)) == "42");
    CHECK(ask(requests, system, target, caf::make_message(-4)) == "-8");

    auto late = system.spawn(late_doubler, target);
    CHECK(ask(requests, system, late, caf::make_message(5)) == "10");

    // A message the target does not handle: CAF's error comes back as the answer.
    CHECK(ask(requests, system, target, caf::make_message(std::string("x"))).starts_with("error: "));

    caf::anon_send_exit(target, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(late, caf::exit_reason::user_shutdown);
    std::this_thread::sleep_for(50ms);
    CHECK(ask(requests, system, target, caf::make_message(1)).starts_with("error: "));
    CHECK(ask(requests, system, caf::actor{}, caf::make_message(1)).starts_with("error: "));

    // Many at once from several threads: each answer reaches its own request.
    auto busy = system.spawn(doubler);
    std::vector<std::future<std::string>> answers;
    for (int i = 0; i < 200; ++i)
      answers.push_back(std::async(std::launch::async, [&, i] { return ask(requests, system, busy, caf::make_message(i)); }));
    for (int i = 0; i < 200; ++i) CHECK(answers[static_cast<size_t>(i)].get() == std::to_string(2 * i));
    caf::anon_send_exit(busy, caf::exit_reason::user_shutdown);
  }
}

}  // namespace cairn::test
