// Pending jobs' reasons by job id, as a scheduling pass leaves them: one vector sorted by id.
// A pass at a large site writes one per pending job (100,000): a tree node each was a malloc
// and a free per job and pass, the largest single cost of a pass (docs/decisions.md, sched-incr2).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <utility>
#include <vector>

#include "events/job_state.hpp"

namespace cairn {

class ReasonMap {
 public:
  using value_type = std::pair<uint64_t, Reason>;
  using const_iterator = std::vector<value_type>::const_iterator;
  using iterator = std::vector<value_type>::iterator;

  ReasonMap() = default;
  ReasonMap(std::initializer_list<value_type> items) {
    for (const auto& [id, reason] : items) (*this)[id] = reason;
  }
  // From entries already sorted by id, each id once (what a pass builds in id order).
  static ReasonMap from_sorted(std::vector<value_type> items) {
    ReasonMap map;
    map.items_ = std::move(items);
    return map;
  }

  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() { items_.clear(); }
  void reserve(size_t count) { items_.reserve(count); }

  const_iterator find(uint64_t id) const {
    auto it = lower(id);
    return it != items_.end() && it->first == id ? it : items_.end();
  }
  bool contains(uint64_t id) const { return find(id) != end(); }
  Reason at(uint64_t id) const {
    auto it = find(id);
    if (it == end()) throw std::out_of_range("no pending reason for this job");
    return it->second;
  }
  Reason& operator[](uint64_t id) {
    auto it = lower(id);
    if (it == items_.end() || it->first != id) it = items_.insert(it, {id, Reason::none});
    return it->second;
  }
  size_t erase(uint64_t id) {
    auto it = lower(id);
    if (it == items_.end() || it->first != id) return 0;
    items_.erase(it);
    return 1;
  }
  // Removes every entry `drop` says to, in one sweep.
  template <typename Predicate>
  void erase_if(Predicate drop) {
    std::erase_if(items_, [&](const value_type& item) { return drop(item.first); });
  }
  bool operator==(const ReasonMap&) const = default;

 private:
  std::vector<value_type>::iterator lower(uint64_t id) {
    return std::lower_bound(items_.begin(), items_.end(), id, [](const value_type& item, uint64_t key) { return item.first < key; });
  }
  const_iterator lower(uint64_t id) const {
    return std::lower_bound(items_.begin(), items_.end(), id, [](const value_type& item, uint64_t key) { return item.first < key; });
  }
  std::vector<value_type> items_;
};

}  // namespace cairn
