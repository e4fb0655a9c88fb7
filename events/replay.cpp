#include "events/replay.hpp"

#include <kj/exception.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "events/event_codec.hpp"

namespace cairn {

namespace {

using Observer = std::function<void(const DecodedEvent&, ApplyResult)>;

// Applies a decoded event (with its JobSubmitted spec already checked and copied, when
// `checked_spec` is given) and reports it.
void apply_decoded(ClusterState& state, const DecodedEvent& decoded, RecordedSpec* checked_spec,
                   const Observer& observe) {
  auto result = checked_spec ? apply(state, decoded, std::move(*checked_spec)) : apply(state, decoded);
  if (result == ApplyResult::ignored_unknown_kind)
    spdlog::warn("event at offset {} is of a kind this build does not know ({}); skipped", decoded.offset(),
                 kind_name(decoded.event().getBody().which()));
  if (observe) observe(decoded, result);
}

// Runs `apply_it`; a record that does not decode becomes an anomaly at `offset` (false).
template <typename Apply>
bool guarded(ClusterState& state, uint64_t offset, Apply&& apply_it) {
  try {
    apply_it();
    return true;
  } catch (const kj::Exception& e) {
    ++state.anomaly_count;
    if (state.anomalies.size() < kMaxAnomalies)
      state.anomalies.push_back({offset, "undecodable record: " + std::string(e.getDescription().cStr())});
  } catch (const LogError& e) {
    ++state.anomaly_count;
    if (state.anomalies.size() < kMaxAnomalies) state.anomalies.push_back({offset, e.what()});
  }
  return false;
}

}  // namespace

bool apply_record(ClusterState& state, uint64_t offset, std::span<const uint8_t> payload, const Observer& observe) {
  return apply_record(state, offset, payload, {}, observe);
}

bool apply_record(ClusterState& state, uint64_t offset, std::span<const uint8_t> payload,
                  const std::function<void(const DecodedEvent&)>& before, const Observer& observe) {
  return guarded(state, offset, [&] {
    DecodedEvent decoded(offset, payload);
    if (before) before(decoded);
    apply_decoded(state, decoded, nullptr, observe);
  });
}

namespace {

// A record that does not decode is left for apply_record to report.
bool written_after(uint64_t offset, std::span<const uint8_t> payload, int64_t time_us) {
  try {
    return DecodedEvent(offset, payload).event().getHeader().getTimeUs() > time_us;
  } catch (const kj::Exception&) {
    return false;
  } catch (const LogError&) {
    return false;
  }
}

// Applies the partition's records from `from` while `keep` says so.
ReplayStats replay_while(const EventLog& log, uint32_t partition, uint64_t from, ClusterState& state,
                         const std::function<bool(uint64_t, std::span<const uint8_t>)>& keep,
                         const std::function<void(const DecodedEvent&, ApplyResult)>& observe = {}) {
  ReplayStats stats;
  stats.next_offset = from;
  auto reader = log.read(partition, from);
  uint64_t offset = 0;
  std::span<const uint8_t> payload;
  while (reader->next_view(offset, payload)) {
    if (!keep(offset, payload)) break;
    ++stats.events;
    if (!apply_record(state, offset, payload, observe)) ++stats.undecodable;
    stats.next_offset = position_after(offset, reader->record_ended());
  }
  return stats;
}

}  // namespace

namespace {

// ---- a whole partition: reading and decoding on a thread of their own ----
//
// The reading thread copies records into batches, decodes them and, for a JobSubmitted,
// checks and copies its spec (what the reducer would do first), unless this thread has time
// for that (see fill); this thread folds the batches into the state in log order. A record
// that could not be decoded or checked is decoded again here, by apply_record, so it is
// reported exactly as before; an error of the reader is raised here after the records read
// before it were applied.

constexpr size_t kBatchRecords = 256;
constexpr size_t kBatchesInFlight = 8;

struct PreparedRecord {
  uint64_t offset = 0;
  bool ends_record = true;  // the last event of its log record
  size_t first_word = 0;  // of its payload in RecordBatch::words
  size_t bytes = 0;
  std::optional<DecodedEvent> decoded;  // empty: it did not decode
  std::optional<RecordedSpec> spec;     // a JobSubmitted's, checked and copied
  bool spec_left = false;               // ... by the folding thread instead (see fill)
};

bool is_submission(const PreparedRecord& record) {
  return record.decoded && record.decoded->event().getBody().which() == schema::Event::Body::JOB_SUBMITTED;
}

// A decoded JobSubmitted's spec checked and copied, as the reducer would first; one that does
// not pass is left for the reducer to check again and report.
void prepare_spec(PreparedRecord& record) {
  if (!is_submission(record)) return;
  try {
    check_spec(record.decoded->event().getBody().getJobSubmitted().getSpec());
    record.spec = RecordedSpec::restore(record.decoded->payload(), false, nullptr);
  } catch (...) {
  }
}

struct RecordBatch {
  std::vector<uint64_t> words;  // the payloads, each from a word boundary
  std::unique_ptr<PreparedRecord[]> records = std::make_unique<PreparedRecord[]>(kBatchRecords);
  size_t count = 0;
  bool end = false;          // the reader has nothing more after these
  std::exception_ptr error;  // ... because it threw this

  std::span<const uint8_t> payload(const PreparedRecord& record) const {
    return {reinterpret_cast<const uint8_t*>(words.data() + record.first_word), record.bytes};
  }
  void clear() {
    for (size_t i = 0; i < count; ++i) {
      records[i].decoded.reset();
      records[i].spec.reset();
      records[i].spec_left = false;
    }
    words.clear();
    count = 0;
  }
};

// Time spent waiting, and how often.
struct Waits {
  uint64_t count = 0;
  double seconds = 0;
};

class ReplayPipeline {
 public:
  explicit ReplayPipeline(std::unique_ptr<LogReader> reader) : reader_(std::move(reader)) {
    for (size_t i = 0; i < kBatchesInFlight; ++i) free_.push_back(std::make_unique<RecordBatch>());
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "cairn-replay-rd");  // for profiles and per-thread CPU figures
      read_loop();
    });
  }
  ~ReplayPipeline() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    freed_.notify_all();
    thread_.join();
  }

  // The next batch in log order (the last one has end set); give it back when done.
  std::unique_ptr<RecordBatch> take() {
    std::unique_lock lock(mutex_);
    if (full_.empty()) {
      folder_waiting_ = true;
      wait(lock, filled_, fold_waits_, [this] { return !full_.empty(); });
      folder_waiting_ = false;
    }
    auto batch = std::move(full_.front());
    full_.pop_front();
    queued_.store(full_.size(), std::memory_order_relaxed);
    return batch;
  }
  void give_back(std::unique_ptr<RecordBatch> batch) {
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      free_.push_back(std::move(batch));
      wake = reader_waiting_;
    }
    if (wake) freed_.notify_one();
  }
  // Once the last batch was taken: how the two threads waited for each other.
  void add_waits(ReplayStats& stats) {
    std::lock_guard lock(mutex_);
    stats.fold_waits += fold_waits_.count, stats.fold_wait_s += fold_waits_.seconds;
    stats.read_waits += read_waits_.count, stats.read_wait_s += read_waits_.seconds;
  }

 private:
  template <typename Ready>
  static void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Waits& waits, Ready ready) {
    auto start = std::chrono::steady_clock::now();
    cv.wait(lock, ready);
    ++waits.count;
    waits.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void read_loop() {
    while (true) {
      std::unique_ptr<RecordBatch> batch;
      {
        std::unique_lock lock(mutex_);
        if (free_.empty() && !stopping_) {
          reader_waiting_ = true;
          wait(lock, freed_, read_waits_, [this] { return stopping_ || !free_.empty(); });
          reader_waiting_ = false;
        }
        if (stopping_) return;
        batch = std::move(free_.front());
        free_.pop_front();
      }
      batch->clear();  // here rather than in the folding thread, which has more to do
      fill(*batch);
      bool end = batch->end;
      bool wake = false;
      {
        std::lock_guard lock(mutex_);
        full_.push_back(std::move(batch));
        queued_.store(full_.size(), std::memory_order_relaxed);
        wake = folder_waiting_;
      }
      if (wake) filled_.notify_one();
      if (end) return;
    }
  }

  void fill(RecordBatch& batch) {
    try {
      uint64_t offset = 0;
      std::span<const uint8_t> payload;
      while (batch.count < kBatchRecords) {
        if (!reader_->next_view(offset, payload)) {
          batch.end = true;
          break;
        }
        auto& record = batch.records[batch.count++];
        record.offset = offset;
        record.ends_record = reader_->record_ended();
        record.first_word = batch.words.size();
        record.bytes = payload.size();
        batch.words.resize(batch.words.size() + (payload.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
        if (!payload.empty()) std::memcpy(batch.words.data() + record.first_word, payload.data(), payload.size());
      }
    } catch (...) {
      batch.end = true;
      batch.error = std::current_exception();
    }
    // Checking and copying the specs is the larger part of this thread's work. When no batch
    // is waiting for the folding thread, it is the one with time to spare: this batch's specs
    // are left to it. The queue's length then balances the two threads' shares.
    bool specs_here = queued_.load(std::memory_order_relaxed) > 0;
    for (size_t i = 0; i < batch.count; ++i) prepare(batch, batch.records[i], specs_here);  // words no longer move
  }

  // What the reducer would do first; anything that throws is left for it to do and report.
  static void prepare(const RecordBatch& batch, PreparedRecord& record, bool with_spec) {
    try {
      record.decoded.emplace(record.offset, batch.payload(record));
    } catch (...) {
      return;  // the folding thread decodes it again and reports why not
    }
    if (with_spec)
      prepare_spec(record);
    else
      record.spec_left = is_submission(record);
  }

  std::unique_ptr<LogReader> reader_;
  std::mutex mutex_;
  std::condition_variable filled_, freed_;  // the folding thread's and the reading thread's
  std::deque<std::unique_ptr<RecordBatch>> free_, full_;
  bool stopping_ = false;
  // Each thread wakes the other only when it sleeps (no futex call per batch otherwise).
  bool folder_waiting_ = false, reader_waiting_ = false;
  std::atomic<size_t> queued_ = 0;  // full_.size(), read by the reading thread without the lock
  Waits fold_waits_, read_waits_;
  std::thread thread_;
};

}  // namespace

ReplayStats replay_partition(const EventLog& log, uint32_t partition, uint64_t from, ClusterState& state,
                             const std::function<void(const DecodedEvent&, ApplyResult)>& observe) {
  ReplayStats stats;
  stats.next_offset = from;
  ReplayPipeline pipeline(log.read(partition, from));
  while (true) {
    auto batch = pipeline.take();
    for (size_t i = 0; i < batch->count; ++i) {
      auto& record = batch->records[i];
      ++stats.events;
      if (record.spec_left) {
        ++stats.specs_left_to_fold;
        prepare_spec(record);
      }
      bool ok = record.decoded ? guarded(state, record.offset,
                                         [&] {
                                           apply_decoded(state, *record.decoded, record.spec ? &*record.spec : nullptr,
                                                         observe);
                                         })
                               : apply_record(state, record.offset, batch->payload(record), observe);
      if (!ok) ++stats.undecodable;
      stats.next_offset = position_after(record.offset, record.ends_record);
    }
    bool end = batch->end;
    auto error = batch->error;
    pipeline.give_back(std::move(batch));
    if (end) pipeline.add_waits(stats);
    if (error) std::rethrow_exception(error);
    if (end) return stats;
  }
}

ReplayStats replay_all(const EventLog& log, ClusterState& state) {
  ReplayStats total;
  for (uint32_t p = 0; p < log.partitions(); ++p) {
    auto stats = replay_partition(log, p, 0, state);
    total.events += stats.events;
    total.undecodable += stats.undecodable;
    total.next_offset = stats.next_offset;
    total.fold_waits += stats.fold_waits, total.fold_wait_s += stats.fold_wait_s;
    total.read_waits += stats.read_waits, total.read_wait_s += stats.read_wait_s;
    total.specs_left_to_fold += stats.specs_left_to_fold;
  }
  return total;
}

ReplayStats replay_until_time(const EventLog& log, uint32_t partition, uint64_t from, int64_t time_us,
                              ClusterState& state) {
  return replay_while(log, partition, from, state,
                      [time_us](uint64_t offset, std::span<const uint8_t> payload) { return !written_after(offset, payload, time_us); });
}

ReplayStats replay_range(const EventLog& log, uint32_t partition, uint64_t from, uint64_t until, ClusterState& state) {
  return replay_while(log, partition, from, state, [until](uint64_t offset, std::span<const uint8_t>) { return offset < until; });
}

}  // namespace cairn
