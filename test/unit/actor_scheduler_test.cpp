// The daemons' CAF scheduler (common/actor_scheduler.hpp), in both of its modes: every
// message arrives, between actors and from threads outside the scheduler, with workers going
// to sleep and being woken all along (a lost wake-up would leave one queued); a long chain
// runs to its end; and jobs one handler queued for two actors run on both workers at once.
#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "common/actor_scheduler.hpp"
#include "test/unit/relay_actors.hpp"

namespace cairn::test {
namespace {

using namespace std::chrono_literals;

constexpr WorkerWakes kModes[] = {WorkerWakes::each_job, WorkerWakes::backlog_only};

// Counts down to zero; arrive_and_wait() says whether it got there within 5 s.
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

// Runs `test` on an actor system of two workers, in each of the scheduler's modes.
template <class Test>
void in_each_mode(Test test) {
  for (WorkerWakes wakes : kModes) {
    CAPTURE(static_cast<int>(wakes));
    caf::actor_system_config config;
    use_actor_scheduler(config, 2, wakes);
    caf::actor_system system{config};
    test(system);
  }
}

}  // namespace

TEST_CASE("actor scheduler: every message arrives, between actors and from outside threads") {
  constexpr int kSenders = 4, kMessagesPerSender = 3000, kHops = 3;
  in_each_mode([&](caf::actor_system& system) {
    RelayTraffic traffic(system, kSenders * kMessagesPerSender);
    traffic.send_from_threads(kSenders, kMessagesPerSender, kHops);
    CHECK(traffic.all_arrived_within(30s));
    CHECK(traffic.arrived() == kSenders * kMessagesPerSender);
  });
}

TEST_CASE("actor scheduler: a chain of messages between actors, started from outside, runs to its end") {
  in_each_mode([&](caf::actor_system& system) {
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
  });
}

TEST_CASE("actor scheduler: two actors a handler sent work to run on both workers at once") {
  in_each_mode([&](caf::actor_system& system) {
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
  });
}

}  // namespace cairn::test
