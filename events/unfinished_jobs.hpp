// The ids of a state's jobs not in a final state, in id order, each with the address of its
// record in the state's job map. A scheduling pass reads them as arrays: walking a std::set of
// ids and the job map beside it (two trees, one dependent load after another) was a third of a
// full pass at 143,719 unfinished jobs.
// One array per shard: a shard's ids only grow, so a submission appends. An id that leaves
// leaves a hole, taken again if the id comes back (a requeue); a shard's holes are squeezed out
// once they outnumber its ids. A copy forgets the addresses (they are the other state's map):
// readers then find those records by id, until the reducer touches them again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <set>
#include <vector>

namespace cairn {

struct JobRecord;

class UnfinishedJobs {
  struct Segment;  // one shard's ids

 public:
  struct Entry {
    uint64_t id = 0;
    const JobRecord* record = nullptr;  // in the state's job map; null: not known (find it by id)
  };

  UnfinishedJobs() = default;
  UnfinishedJobs(const UnfinishedJobs& other);
  UnfinishedJobs& operator=(const UnfinishedJobs& other);
  // A move keeps the addresses (the map's nodes move with their map) and leaves nothing behind.
  UnfinishedJobs(UnfinishedJobs&& other) noexcept : segments_(std::move(other.segments_)), live_(other.live_) {
    other.segments_.clear();
    other.live_ = 0;
  }
  UnfinishedJobs& operator=(UnfinishedJobs&& other) noexcept {
    if (this == &other) return *this;
    segments_ = std::move(other.segments_);
    live_ = other.live_;
    other.segments_.clear();
    other.live_ = 0;
    return *this;
  }

  // `record`: the job's record in the state's map, whose address is kept (null: none known).
  // An id already here takes the new address.
  void insert(uint64_t id, const JobRecord* record = nullptr);
  void erase(uint64_t id);
  bool contains(uint64_t id) const;
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }

  // Each id's entry, in id order.
  template <class Visit>
  void for_each_entry(Visit&& visit) const {
    for (const auto& segment : segments_)
      for (const auto& entry : segment.entries)
        if (entry.record != hole()) visit(entry);
  }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = uint64_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const uint64_t*;
    using reference = const uint64_t&;
    const_iterator() = default;
    reference operator*() const { return (*segments_)[segment_].entries[entry_].id; }
    const_iterator& operator++() {
      ++entry_;
      settle();
      return *this;
    }
    const_iterator operator++(int) {
      auto before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& other) const { return segment_ == other.segment_ && entry_ == other.entry_; }

   private:
    friend class UnfinishedJobs;
    const_iterator(const std::vector<Segment>* segments, size_t segment);
    void settle();  // onto the next live entry, or the end
    const std::vector<Segment>* segments_ = nullptr;
    size_t segment_ = 0;
    size_t entry_ = 0;
  };
  const_iterator begin() const;
  const_iterator end() const;

  bool operator==(const UnfinishedJobs& other) const;  // the same ids
  bool operator==(const std::set<uint64_t>& ids) const;

 private:
  // The record of an entry an id left: a hole, 16 bytes an entry rather than 24 with a flag.
  static const JobRecord* hole() {
    static const char marker = 0;
    return reinterpret_cast<const JobRecord*>(&marker);
  }
  struct Segment {
    uint32_t shard = 0;
    std::vector<Entry> entries;  // by id, holes among them
    size_t holes = 0;
  };
  Segment* segment_of(uint64_t id, bool create);
  const Segment* segment_of(uint64_t id) const;
  static void squeeze(Segment& segment);

  std::vector<Segment> segments_;  // by shard
  size_t live_ = 0;
};

}  // namespace cairn
