#include "events/unfinished_jobs.hpp"

#include <algorithm>

#include "events/job_id.hpp"

namespace cairn {
namespace {

bool id_below(const UnfinishedJobs::Entry& entry, uint64_t id) { return entry.id < id; }

}  // namespace

UnfinishedJobs::UnfinishedJobs(const UnfinishedJobs& other) : segments_(other.segments_), live_(other.live_) {
  for (auto& segment : segments_)
    for (auto& entry : segment.entries)
      if (entry.record != hole()) entry.record = nullptr;  // the other map's
}

UnfinishedJobs& UnfinishedJobs::operator=(const UnfinishedJobs& other) {
  if (this != &other) *this = UnfinishedJobs(other);
  return *this;
}

UnfinishedJobs::Segment* UnfinishedJobs::segment_of(uint64_t id, bool create) {
  uint32_t shard = shard_of_job(id);
  auto it = std::lower_bound(segments_.begin(), segments_.end(), shard,
                             [](const Segment& segment, uint32_t value) { return segment.shard < value; });
  if (it != segments_.end() && it->shard == shard) return &*it;
  if (!create) return nullptr;
  return &*segments_.insert(it, Segment{shard, {}, 0});
}

const UnfinishedJobs::Segment* UnfinishedJobs::segment_of(uint64_t id) const {
  return const_cast<UnfinishedJobs*>(this)->segment_of(id, false);
}

void UnfinishedJobs::insert(uint64_t id, const JobRecord* record) {
  auto& entries = segment_of(id, true)->entries;
  if (entries.empty() || entries.back().id < id) {  // a new id of the shard: the usual case
    entries.push_back({id, record});
    ++live_;
    return;
  }
  auto it = std::lower_bound(entries.begin(), entries.end(), id, id_below);
  if (it != entries.end() && it->id == id) {
    if (it->record == hole()) {
      --segment_of(id, false)->holes;
      ++live_;
    }
    it->record = record;
    return;
  }
  entries.insert(it, Entry{id, record});
  ++live_;
}

void UnfinishedJobs::erase(uint64_t id) {
  Segment* segment = segment_of(id, false);
  if (!segment) return;
  auto it = std::lower_bound(segment->entries.begin(), segment->entries.end(), id, id_below);
  if (it == segment->entries.end() || it->id != id || it->record == hole()) return;
  it->record = hole();
  ++segment->holes;
  --live_;
  if (segment->holes > segment->entries.size() / 2) squeeze(*segment);
}

void UnfinishedJobs::squeeze(Segment& segment) {
  std::erase_if(segment.entries, [](const Entry& entry) { return entry.record == hole(); });
  segment.holes = 0;
}

bool UnfinishedJobs::contains(uint64_t id) const {
  const Segment* segment = segment_of(id);
  if (!segment) return false;
  auto it = std::lower_bound(segment->entries.begin(), segment->entries.end(), id, id_below);
  return it != segment->entries.end() && it->id == id && it->record != hole();
}

UnfinishedJobs::const_iterator::const_iterator(const std::vector<Segment>* segments, size_t segment)
    : segments_(segments), segment_(segment) {
  settle();
}

void UnfinishedJobs::const_iterator::settle() {
  while (segment_ < segments_->size()) {
    const auto& entries = (*segments_)[segment_].entries;
    while (entry_ < entries.size() && entries[entry_].record == hole()) ++entry_;
    if (entry_ < entries.size()) return;
    ++segment_;
    entry_ = 0;
  }
}

UnfinishedJobs::const_iterator UnfinishedJobs::begin() const { return const_iterator(&segments_, 0); }
UnfinishedJobs::const_iterator UnfinishedJobs::end() const { return const_iterator(&segments_, segments_.size()); }

bool UnfinishedJobs::operator==(const UnfinishedJobs& other) const {
  return live_ == other.live_ && std::equal(begin(), end(), other.begin());
}

bool UnfinishedJobs::operator==(const std::set<uint64_t>& ids) const {
  return live_ == ids.size() && std::equal(begin(), end(), ids.begin());
}

}  // namespace cairn
