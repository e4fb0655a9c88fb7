// The scheduler that runs every actor on a kj loop thread (common/loop_scheduler.hpp), as
// cairnd uses it: handlers run on that thread; every message arrives, between actors, from
// other threads and from the loop's own code; timers fire; a long chain of messages lets the
// loop's other work in; actors queued before the loop is attached run once it is.
#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <dirent.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "common/loop_scheduler.hpp"
#include "protocol/actors_on_loop.hpp"
#include "protocol/kj_loop_thread.hpp"
#include "test/unit/relay_actors.hpp"

namespace cairn::test {
namespace {

using namespace std::chrono_literals;

// An actor system whose actors run on `loop`'s thread, wired as cairnd wires its own
// (protocol/actors_on_loop.hpp); the loop is stopped before the system goes.
struct LoopActors {
  caf::actor_system_config config;
  std::unique_ptr<caf::actor_system> system;
  std::unique_ptr<KjLoopThread> loop;
  std::optional<ActorsOnLoop> on_loop;

  explicit LoopActors(bool attach_now = true) {
    use_loop_scheduler(config);
    system = std::make_unique<caf::actor_system>(config);
    system->await_actors_before_shutdown(false);
    loop = std::make_unique<KjLoopThread>();
    if (attach_now) attach();
  }
  void attach() { on_loop.emplace(*loop, *system); }
  ~LoopActors() {
    loop->stop();
    on_loop.reset();
  }
};

// The ids of this process's threads named `name`.
std::set<std::string> threads_named(const std::string& name) {
  std::set<std::string> found;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return found;
  while (dirent* entry = ::readdir(tasks)) {
    std::string tid = entry->d_name;
    if (tid == "." || tid == "..") continue;
    std::ifstream comm("/proc/self/task/" + tid + "/comm");
    std::string thread_name;
    if (std::getline(comm, thread_name) && thread_name == name) found.insert(tid);
  }
  ::closedir(tasks);
  return found;
}

// How many times thread `tid` of this process went to sleep and was woken.
long voluntary_switches(const std::string& tid) {
  std::ifstream status("/proc/self/task/" + tid + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  return -1;
}

}  // namespace

TEST_CASE("loop scheduler: handlers run on the loop thread") {
  LoopActors fixture;
  auto ran_on_loop = std::make_shared<std::promise<bool>>();
  KjLoopThread* loop = fixture.loop.get();
  auto actor = fixture.system->spawn([ran_on_loop, loop]() -> caf::behavior {
    return {[ran_on_loop, loop](int) { ran_on_loop->set_value(loop->is_loop_thread()); }};
  });
  caf::anon_send(actor, 1);
  auto answer = ran_on_loop->get_future();
  REQUIRE(answer.wait_for(10s) == std::future_status::ready);
  CHECK(answer.get());
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("loop scheduler: every message arrives, between actors, from other threads and from the loop's code") {
  constexpr int kSenders = 4, kMessagesPerSender = 3000, kHops = 3, kFromLoop = 2000;
  LoopActors fixture;
  RelayTraffic traffic(*fixture.system, kSenders * kMessagesPerSender + kFromLoop);
  // The loop's own code sends too (as cairnd's controller connection does), between runs.
  for (int m = 0; m < kFromLoop; ++m) fixture.loop->post([&traffic, m] { traffic.send(m, kHops); });
  traffic.send_from_threads(kSenders, kMessagesPerSender, kHops);
  CHECK(traffic.all_arrived_within(30s));
  CHECK(traffic.arrived() == kSenders * kMessagesPerSender + kFromLoop);
}

TEST_CASE("loop scheduler: requests between actors are answered, and delayed messages arrive") {
  LoopActors fixture;
  auto& system = *fixture.system;
  auto doubler = system.spawn([]() -> caf::behavior { return {[](int x) { return 2 * x; }}; });
  auto result = std::make_shared<std::promise<int>>();
  auto asker = system.spawn([doubler, result](caf::event_based_actor* self) -> caf::behavior {
    return {[=](hop_atom, int x) {
      self->request(doubler, caf::infinite, x).then([=](int doubled) {
        // Again 30 ms later, through CAF's clock thread.
        self->delayed_send(self, 30ms, doubled);
      });
    }, [=](int doubled) { result->set_value(doubled); }};
  });
  auto start = std::chrono::steady_clock::now();
  caf::anon_send(asker, hop_atom::value, 21);
  auto future = result->get_future();
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  CHECK(future.get() == 42);
  CHECK(std::chrono::steady_clock::now() - start >= 30ms);
  caf::anon_send_exit(asker, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(doubler, caf::exit_reason::user_shutdown);
}

TEST_CASE("loop scheduler: a long chain of messages lets the loop's other work in") {
  constexpr int kHops = 20000;
  LoopActors fixture;
  auto& system = *fixture.system;
  KjLoopThread* loop = fixture.loop.get();
  auto done = std::make_shared<std::promise<void>>();
  auto hops_left = std::make_shared<std::atomic<int>>(kHops);
  auto hops_left_when_task_ran = std::make_shared<std::promise<int>>();
  // At its first hop the chain posts a task to the loop, which notes how far the chain got.
  auto pinger = [=](caf::event_based_actor* self) -> caf::behavior {
    return {[=](int left, caf::actor other) {
      hops_left->store(left);
      if (left == kHops) loop->post([=] { hops_left_when_task_ran->set_value(hops_left->load()); });
      if (left == 0) return done->set_value();
      self->send(other, left - 1, caf::actor_cast<caf::actor>(self));
    }};
  };
  auto a = system.spawn(pinger);
  auto b = system.spawn(pinger);
  caf::anon_send(a, kHops, b);
  REQUIRE(done->get_future().wait_for(20s) == std::future_status::ready);
  auto ran_at = hops_left_when_task_ran->get_future();
  REQUIRE(ran_at.wait_for(10s) == std::future_status::ready);
  // A run takes 64 turns (one hop each here) before it lets the loop's queued work in.
  CHECK(ran_at.get() >= kHops - 200);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
}

TEST_CASE("loop scheduler: actors queued before the loop is attached run once it is") {
  LoopActors fixture(false);
  auto answered = std::make_shared<std::promise<int>>();
  auto actor = fixture.system->spawn([answered]() -> caf::behavior { return {[answered](int x) { answered->set_value(x); }}; });
  caf::anon_send(actor, 7);
  auto future = answered->get_future();
  CHECK(future.wait_for(200ms) == std::future_status::timeout);
  fixture.attach();
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  CHECK(future.get() == 7);
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("loop scheduler: an ending actor that set no timeout does not wake CAF's clock; timeouts still work") {
  auto clocks_before = threads_named("caf.clock");
  LoopActors fixture;
  auto& system = *fixture.system;
  std::string clock_thread;
  for (const auto& tid : threads_named("caf.clock"))
    if (!clocks_before.contains(tid)) clock_thread = tid;
  REQUIRE_FALSE(clock_thread.empty());
  // 200 actors, each ending on its first message, one at a time: CAF cancels an ending actor's
  // timeouts, and before this clock each cancel woke the clock's thread.
  long before = voluntary_switches(clock_thread);
  for (int i = 0; i < 200; ++i) {
    auto ended = std::make_shared<std::promise<void>>();
    auto actor = system.spawn([ended](caf::event_based_actor* self) -> caf::behavior {
      self->attach_functor([ended] { ended->set_value(); });
      return {[self](int) { self->quit(); }};
    });
    caf::anon_send(actor, 1);
    REQUIRE(ended->get_future().wait_for(10s) == std::future_status::ready);
    std::this_thread::sleep_for(1ms);  // the clock's thread would go back to sleep meanwhile
  }
  long wakes = voluntary_switches(clock_thread) - before;
  CHECK(wakes < 20);
  // A request's timeout still fires, and one answered in time is cancelled (it ends first).
  auto silent = system.spawn([]() -> caf::behavior { return {[](int) -> caf::result<int> { return caf::delegated<int>(); }}; });
  auto echo = system.spawn([]() -> caf::behavior { return {[](int x) { return x; }}; });
  auto outcome = std::make_shared<std::promise<std::string>>();
  auto asker = system.spawn([=](caf::event_based_actor* self) -> caf::behavior {
    return {[=](hop_atom) {
      self->request(echo, 5s, 1).then([=](int) {
        self->request(silent, 50ms, 2).then([=](int) { outcome->set_value("answered"); },
                                             [=](caf::error& error) {
                                               outcome->set_value(error == caf::sec::request_timeout ? "timed out" : "failed");
                                             });
      });
    }};
  });
  caf::anon_send(asker, hop_atom::value);
  auto answer = outcome->get_future();
  REQUIRE(answer.wait_for(10s) == std::future_status::ready);
  CHECK(answer.get() == "timed out");
  for (auto& actor : {silent, echo, asker}) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("loop scheduler: an actor system made without it has no actor loop") {
  caf::actor_system_config config;
  caf::actor_system system{config};
  CHECK_THROWS_AS(ActorLoop{system}, std::logic_error);
}

TEST_CASE("loop scheduler: CAIRN_CAF_SCHEDULER chooses it with =loop, workers with any other value") {
  const char* saved = std::getenv("CAIRN_CAF_SCHEDULER");
  std::optional<std::string> before = saved ? std::optional<std::string>(saved) : std::nullopt;
  ::unsetenv("CAIRN_CAF_SCHEDULER");
  CHECK(loop_scheduler_chosen(true));
  CHECK_FALSE(loop_scheduler_chosen(false));
  ::setenv("CAIRN_CAF_SCHEDULER", "", 1);
  CHECK(loop_scheduler_chosen(true));
  CHECK_FALSE(loop_scheduler_chosen(false));
  ::setenv("CAIRN_CAF_SCHEDULER", "loop", 1);
  CHECK(loop_scheduler_chosen(true));
  CHECK(loop_scheduler_chosen(false));
  for (const char* workers : {"workers", "sharing", "Loop"}) {
    ::setenv("CAIRN_CAF_SCHEDULER", workers, 1);
    CHECK_FALSE(loop_scheduler_chosen(true));
    CHECK_FALSE(loop_scheduler_chosen(false));
  }
  if (before) ::setenv("CAIRN_CAF_SCHEDULER", before->c_str(), 1);
  else ::unsetenv("CAIRN_CAF_SCHEDULER");
}

}  // namespace cairn::test
