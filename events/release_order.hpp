// The positions of a growing list of expected ends (a pass's running allocations, then its
// placements) in the order they end, ties in the order they were added, worked out only as far
// as readers go. A pass's shadow times read the earliest ends until a blocked job would fit;
// sorting all of a full site's 56,167 ends at every pass was 6 % of it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace cairn {

class ReleaseOrder {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);

  void reserve(size_t count) { unordered_.reserve(count); }
  size_t size() const { return count_; }

  // Adds the next position (size() before the call), which ends at end_us.
  void add(int64_t end_us) {
    Key key{end_us, count_++};
    if (!heaped_) {
      unordered_.push_back(key);
    } else if (!ordered_.empty() && key < ordered_.back()) {
      // Before an end already read out: into its place among them (after equal ends: it came last).
      ordered_.insert(std::upper_bound(ordered_.begin(), ordered_.end(), key), key);
    } else {
      unordered_.push_back(key);
      std::push_heap(unordered_.begin(), unordered_.end(), std::greater<>());
    }
  }

  // The position that ends k-th (from 0); npos past the last.
  size_t at(size_t k) {
    if (!heaped_) {
      std::make_heap(unordered_.begin(), unordered_.end(), std::greater<>());
      heaped_ = true;
    }
    while (ordered_.size() <= k && !unordered_.empty()) {
      std::pop_heap(unordered_.begin(), unordered_.end(), std::greater<>());
      ordered_.push_back(unordered_.back());
      unordered_.pop_back();
    }
    return k < ordered_.size() ? ordered_[k].second : npos;
  }

 private:
  using Key = std::pair<int64_t, size_t>;  // (end, position)
  std::vector<Key> unordered_;  // not read out yet: a min-heap once a reader came
  std::vector<Key> ordered_;    // read out, in order
  bool heaped_ = false;
  size_t count_ = 0;
};

}  // namespace cairn
