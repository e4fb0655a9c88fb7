// Traffic between actors for the scheduler tests: two relays pass each message back and forth
// until its hops run out, then a counter counts it.
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace cairn::test {

using hop_atom = caf::atom_constant<caf::atom("hop")>;

class RelayTraffic {
 public:
  RelayTraffic(caf::actor_system& system, int expected) {
    counter_ = system.spawn([arrived = arrived_, all = all_arrived_, expected]() -> caf::behavior {
      return {[arrived, all, expected](hop_atom, int) {
        if (++*arrived == expected) all->set_value();
      }};
    });
    for (int i = 0; i < 2; ++i)
      relays_.push_back(system.spawn([counter = counter_](caf::event_based_actor* self) -> caf::behavior {
        return {[self, counter](hop_atom, int hops, caf::actor other) {
          if (hops == 0) return self->send(counter, hop_atom::value, 0);
          self->send(other, hop_atom::value, hops - 1, caf::actor_cast<caf::actor>(self));
        }};
      }));
  }
  ~RelayTraffic() {
    for (auto& relay : relays_) caf::anon_send_exit(relay, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(counter_, caf::exit_reason::user_shutdown);
  }

  // Message `m` of `hops` hops, from the calling thread (any).
  void send(int m, int hops) const { caf::anon_send(relays_[m % 2], hop_atom::value, hops, relays_[(m + 1) % 2]); }

  // `per_sender` messages from each of `senders` threads, pausing every 500 so that the
  // scheduler's threads go to sleep and must be woken.
  void send_from_threads(int senders, int per_sender, int hops) const {
    std::vector<std::thread> threads;
    for (int s = 0; s < senders; ++s)
      threads.emplace_back([this, s, per_sender, hops] {
        for (int m = 0; m < per_sender; ++m) {
          send(s + m, hops);
          if (m % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      });
    for (auto& thread : threads) thread.join();
  }

  bool all_arrived_within(std::chrono::seconds limit) const {
    return all_arrived_->get_future().wait_for(limit) == std::future_status::ready;
  }
  int arrived() const { return arrived_->load(); }

 private:
  std::shared_ptr<std::atomic<int>> arrived_ = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::promise<void>> all_arrived_ = std::make_shared<std::promise<void>>();
  caf::actor counter_;
  std::vector<caf::actor> relays_;
};

}  // namespace cairn::test
