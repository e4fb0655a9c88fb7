// cairnd's CAF scheduler (agents/agent_scheduler.hpp): every message arrives, those actors
// hand each other and those sent from threads outside the scheduler alike, with workers
// going to sleep and being woken all along (a lost wake-up would leave one queued).
#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "agents/agent_scheduler.hpp"

namespace {

using hop_atom = caf::atom_constant<caf::atom("hop")>;

constexpr int kSenders = 4;
constexpr int kMessagesPerSender = 3000;
constexpr int kHops = 3;  // each message goes from actor to actor this many times

}  // namespace

TEST_CASE("agent scheduler: every message arrives, between actors and from outside threads") {
  caf::actor_system_config config;
  config.set("scheduler.max-threads", 2);
  config.load<cairn::AgentScheduler>();
  caf::actor_system system{config};
  CHECK(dynamic_cast<cairn::AgentScheduler*>(&system.scheduler()) != nullptr);

  auto arrived = std::make_shared<std::atomic<int>>(0);
  auto all_arrived = std::make_shared<std::promise<void>>();
  auto counter = system.spawn([arrived, all_arrived]() -> caf::behavior {
    return {[arrived, all_arrived](hop_atom, int) {
      if (++*arrived == kSenders * kMessagesPerSender) all_arrived->set_value();
    }};
  });
  // Two relays pass each message back and forth before it reaches the counter.
  std::vector<caf::actor> relays;
  for (int i = 0; i < 2; ++i)
    relays.push_back(system.spawn([counter](caf::event_based_actor* self) -> caf::behavior {
      return {[self, counter](hop_atom, int hops, caf::actor other) {
        if (hops == 0) return self->send(counter, hop_atom::value, 0);
        self->send(other, hop_atom::value, hops - 1, caf::actor_cast<caf::actor>(self));
      }};
    }));
  std::vector<std::thread> senders;
  for (int s = 0; s < kSenders; ++s)
    senders.emplace_back([&, s] {
      for (int m = 0; m < kMessagesPerSender; ++m) {
        caf::anon_send(relays[(s + m) % 2], hop_atom::value, kHops, relays[(s + m + 1) % 2]);
        if (m % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // let the workers sleep
      }
    });
  for (auto& sender : senders) sender.join();
  auto future = all_arrived->get_future();
  CHECK(future.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  CHECK(arrived->load() == kSenders * kMessagesPerSender);
  for (auto& relay : relays) caf::anon_send_exit(relay, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(counter, caf::exit_reason::user_shutdown);
}
