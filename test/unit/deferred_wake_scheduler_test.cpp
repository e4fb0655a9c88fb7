// The controller's scheduler (actors/deferred_wake_scheduler.hpp): messages are delivered,
// from actors and from other threads, and jobs queued by one handler for two actors run on
// both workers at once.
#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>

#include "actors/deferred_wake_scheduler.hpp"

namespace cairn::test {
namespace {

using namespace std::chrono_literals;

// Counts down to zero; wait() says whether it got there within 5 s.
struct Latch {
  std::mutex mutex;
  std::condition_variable zero;
  int left;
  explicit Latch(int count) : left(count) {}
  bool arrive_and_wait() {
    std::unique_lock lock(mutex);
    if (--left == 0) zero.notify_all();
    return zero.wait_for(lock, 5s, [&] { return left <= 0; });
  }
};

}  // namespace

TEST_CASE("deferred wake scheduler: a chain of messages between actors, started from outside, runs to its end") {
  caf::actor_system_config config;
  use_deferred_wake_scheduler(config, 2);
  caf::actor_system system{config};
  auto done = std::make_shared<std::promise<int>>();
  auto future = done->get_future();
  // Each hop goes to the other actor until the count reaches zero.
  auto pinger = [done](caf::event_based_actor* self) -> caf::behavior {
    return {[=](int left, caf::actor other) {
      if (left == 0) return done->set_value(0);
      self->send(other, left - 1, caf::actor_cast<caf::actor>(self));
    }};
  };
  auto a = system.spawn(pinger);
  auto b = system.spawn(pinger);
  caf::anon_send(a, 10000, b);
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
}

TEST_CASE("deferred wake scheduler: two actors a handler sent work to run on both workers at once") {
  caf::actor_system_config config;
  use_deferred_wake_scheduler(config, 2);
  caf::actor_system system{config};
  auto latch = std::make_shared<Latch>(2);
  auto results = std::make_shared<std::promise<int>>();
  auto future = results->get_future();
  auto met = std::make_shared<std::atomic<int>>(0);
  auto finished = std::make_shared<std::atomic<int>>(0);
  // Each blocks its worker until the other arrives: they meet only if both run at once.
  auto waiter = [=](caf::event_based_actor*) -> caf::behavior {
    return {[=](int) {
      if (latch->arrive_and_wait()) ++*met;
      if (++*finished == 2) results->set_value(met->load());
    }};
  };
  auto first = system.spawn(waiter);
  auto second = system.spawn(waiter);
  auto sender = system.spawn([=](caf::event_based_actor* self) -> caf::behavior {
    return {[=](int x) {
      self->send(first, x);
      self->send(second, x);
    }};
  });
  caf::anon_send(sender, 1);
  REQUIRE(future.wait_for(15s) == std::future_status::ready);
  CHECK(future.get() == 2);
  for (auto& actor : {first, second, sender}) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}

}  // namespace cairn::test
