// Chunks of the items [0, count) handed out from both ends to two threads that read a list
// in order, one from the front and one from the back, until they meet: each thread's items
// stay contiguous (its own end's) and the faster thread takes more of them, where a fixed
// half would leave the faster one waiting (a snapshot's jobs: a new thread's heap grows page
// by page, so that thread reads ~30% slower). Thread-safe.
#pragma once

#include <algorithm>
#include <mutex>
#include <optional>

namespace cairn {

class TwoEndedClaims {
 public:
  struct Range {
    unsigned begin = 0;
    unsigned end = 0;  // past the last
  };
  TwoEndedClaims(unsigned count, unsigned chunk) : back_(count), chunk_(std::max(chunk, 1u)) {}
  // The next chunk from the front (ascending), or nullopt when the ends met or after stop().
  std::optional<Range> front() {
    std::lock_guard lock(mutex_);
    if (front_ == back_) return std::nullopt;
    Range range{front_, front_ + std::min(chunk_, back_ - front_)};
    front_ = range.end;
    return range;
  }
  // The next chunk from the back (the items just before those taken from the back so far).
  std::optional<Range> back() {
    std::lock_guard lock(mutex_);
    if (front_ == back_) return std::nullopt;
    Range range{back_ - std::min(chunk_, back_ - front_), back_};
    back_ = range.begin;
    return range;
  }
  // No more chunks for either end (a reader failed: the other need not go on).
  void stop() {
    std::lock_guard lock(mutex_);
    back_ = front_;
  }

 private:
  std::mutex mutex_;
  unsigned front_ = 0;
  unsigned back_;
  unsigned chunk_;
};

}  // namespace cairn
