// The event-log contract shared by the file and Kafka backends.
// A log has a fixed number of log partitions (one per shard); each is a sequence
// of opaque records addressed by increasing offsets: dense from 0 in the file log,
// with gaps in Kafka (transaction markers take offsets), so nothing may assume density.
// A Kafka record may hold several events of one group commit (events/log/event_frame.hpp):
// they share its offset and are read in order, one by one; a position after an event is
// its offset + 1 only once its record ended (LogReader::record_ended), so positions kept
// (snapshots, claims, acknowledgements) always fall between records.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace cairn {

// Raised when a log cannot be opened or used; the message names file and offset.
class LogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A log that may work again later (Kafka brokers unreachable): callers may retry.
class LogUnavailable : public LogError {
 public:
  using LogError::LogError;
};

// The process may not read the log: the file log is private to its writer (0700/0600),
// since it holds users' scripts and environments.
class LogAccessDenied : public LogError {
 public:
  using LogError::LogError;
};

// The log holds less than it says it held (records, segments or its description are
// gone): a writer refuses to start on it unless told to accept the loss.
class LogLoss : public LogError {
 public:
  using LogError::LogError;
};

struct LogRecord {
  uint64_t offset = 0;
  std::vector<uint8_t> payload;
};

// Outcome of one append, delivered once the record is durable (or failed).
struct AppendResult {
  bool ok = false;
  uint64_t offset = 0;  // its record's: appends written in one Kafka record share it
  std::string error;
  bool ends_record = true;  // the last append of its record
};

using AppendCallback = std::function<void(const AppendResult&)>;

// What a log holds against what it says it held (`cairn log verify`).
struct LogIntegrity {
  std::vector<std::string> facts;     // what was found, one line each
  std::vector<std::string> problems;  // damage, missing records or files; empty when sound
};

// Counters for tests and benchmarks (group commit: syncs < appends).
struct LogStats {
  uint64_t appends = 0;
  uint64_t syncs = 0;
  uint64_t bytes = 0;
  uint64_t commit_us = 0;  // time spent committing batches: write and fdatasync (file), produce to acks=all and transaction commit (Kafka)
};

// Sequential reader of one partition. next() returns records in offset order.
// Offsets increase; they are dense in the file log, while Kafka may leave gaps
// (transaction markers take offsets).
class LogReader {
 public:
  virtual ~LogReader() = default;
  // The next record, or nullopt at the current end of the log. With
  // wait_ms > 0 it waits up to that long for a new record (tailing).
  virtual std::optional<LogRecord> next(int wait_ms = 0) = 0;
  // As next(), without copying the payload (a replay reads millions of records):
  // `payload` stays valid until the reader's next call. False where next() gives nullopt.
  virtual bool next_view(uint64_t& offset, std::span<const uint8_t>& payload, int wait_ms = 0) {
    auto record = next(wait_ms);
    if (!record) return false;
    held_ = std::move(*record);
    offset = held_.offset;
    payload = held_.payload;
    return true;
  }
  // Where the reader last found the partition's end, when the backend says (Kafka: the
  // offset of its end-of-partition event, past transaction markers that next() never
  // returns); nullopt otherwise (the file log: dense, its end is the last record's offset + 1).
  virtual std::optional<uint64_t> end_position() const { return std::nullopt; }
  // Whether the event last returned was the last of its record (Kafka records may hold
  // several, returned one by one with the record's offset): only then is everything up to
  // its offset + 1 read. Always true in the file log.
  virtual bool record_ended() const { return true; }

 private:
  LogRecord held_;  // next_view's record, for readers that only implement next()
};

class EventLog {
 public:
  virtual ~EventLog() = default;

  virtual uint32_t partitions() const = 0;

  // Queues one record. The callback runs once the record is durable, on a
  // thread of the log, with its offset; appends to one partition are
  // ordered and their callbacks run in offset order. Many queued appends
  // share one sync (group commit).
  virtual void append(uint32_t partition, std::vector<uint8_t> payload, AppendCallback done) = 0;

  // An append no one waits on at once (a job's end while no job waits for its resources):
  // the file log holds it up to FileLogOptions::unhurried_wait_us for an append that cannot
  // wait, so that both take one synced write. Other logs append it as any other.
  virtual void append_unhurried(uint32_t partition, std::vector<uint8_t> payload, AppendCallback done) {
    append(partition, std::move(payload), std::move(done));
  }

  // Blocking convenience: append and wait until durable. Throws LogError.
  uint64_t append_sync(uint32_t partition, std::vector<uint8_t> payload);

  // Offset the next appended record of the partition will get: above every
  // record's offset (the file log: the record count; Kafka: the high watermark).
  virtual uint64_t end_offset(uint32_t partition) const = 0;

  // A reader from `from` (inclusive). Records appended later are seen by next().
  virtual std::unique_ptr<LogReader> read(uint32_t partition, uint64_t from) const = 0;

  // Waits for every queued append to be durable.
  virtual void flush() = 0;

  virtual LogStats stats() const = 0;

  // True when no second writer can append while this one is open (the file log's
  // lock): nothing can fence it, so a writer need not wait for its fence watch
  // before acknowledging an append.
  virtual bool exclusive_writer() const { return false; }

  // The writer of `partition` won its claim (epoch `epoch`, at `claim_offset`). A log
  // with a fence of its own that a controller which lost the claim race still trips
  // (Kafka's transactional id) tells that loser from a successor with it.
  virtual void writer_claimed(uint32_t /*partition*/, uint64_t /*epoch*/, uint64_t /*claim_offset*/) {}

  // The writer notes each job id it issues, so that the log's description keeps the
  // highest (the file log: in META, written at the writer's start, a segment roll and a
  // clean close, never per append); noted_job_id() gives it back after a restart, so
  // that ids are not issued twice even after an accepted loss of the records that held
  // them. 0: none noted.
  virtual void note_job_id(uint32_t /*partition*/, uint64_t /*job_id*/) {}
  virtual uint64_t noted_job_id(uint32_t /*partition*/) const { return 0; }

  // Checks the whole log against its own description without changing it.
  virtual LogIntegrity check_integrity() const { return {}; }
};

struct FileLogOptions {
  uint32_t partitions = 1;              // used only when the log is created
  uint64_t segment_bytes = 64ull << 20; // a segment rolls past this size
  bool sync = true;                     // fdatasync on commit (tests may turn it off)
  bool read_only = false;               // readers beside a live writer: no lock, no truncation
  // Start although records, segments or META are missing (cairnctld --accept-log-loss):
  // each loss is logged, what is left is kept and described anew. Corruption before the
  // tail and a missing beginning are refused all the same.
  bool accept_loss = false;
  // How long an unhurried append (EventLog::append_unhurried) may wait for company.
  uint32_t unhurried_wait_us = 2000;
  // Tests: called before each write or sync of the writer; a non-zero errno makes it fail
  // as the disk would (ENOSPC).
  std::function<int()> inject_write_error = {};
};

// Opens (creating if absent) the embedded file log in `dir` (0700, files 0600).
// Recovery on open: a torn record at the tail of a partition's last segment, written
// after META last described the log, is dropped (logged with spdlog); corruption
// before it throws LogError naming the file and byte offset; records META says the log
// held and that are gone throw LogLoss unless options.accept_loss. A write that fails
// for want of space (ENOSPC, EDQUOT) is undone and its appends fail; further appends
// are refused at once while the writer retries with backoff, then accepted again.
std::unique_ptr<EventLog> open_file_log(const std::string& dir, const FileLogOptions& options = {});

struct KafkaLogOptions {
  std::string topic;                     // overrides the spec's topic when set (KafkaTopic=)
  uint32_t partitions = 0;               // the partition count the topic must have; 0: any (KafkaPartitions=)
  std::string transactional_id_prefix = "cairn";  // one transactional.id per shard; empty: none
  std::map<std::string, std::string> properties;  // librdkafka properties (cairn.conf's kafka.* keys)
  int open_timeout_ms = 10000;           // to reach the brokers on open (then LogUnavailable)
  // A group commit's events are written in records of at most this many bytes (a frame
  // each; a lone event as it is): well under the 1 MB that librdkafka (message.max.bytes)
  // and the broker (max.message.bytes) accept by default. 0: one event per record.
  size_t frame_cap_bytes = 256u << 10;
};

// Opens the Kafka log "kafka:BROKERS/TOPIC": appends are produced with acks=all
// by an idempotent (and, where the broker supports it, transactional) producer,
// one per written partition, and resolved once the brokers acknowledged them;
// readers read committed records only. Throws LogUnavailable when no broker answers.
std::unique_ptr<EventLog> open_kafka_log(const std::string& spec, const KafkaLogOptions& options = {});

struct EventLogOptions {
  uint32_t partitions = 1;  // file: used when the log is created; kafka: the minimum the topic must have
  bool read_only = false;   // file: a reader beside a live writer (Kafka readers never write anyway)
  bool accept_loss = false; // file: FileLogOptions::accept_loss
  uint64_t segment_bytes = FileLogOptions().segment_bytes;  // file
  KafkaLogOptions kafka;
};

// Opens the log named by an `EventLog=` value ("file:DIR" or "kafka:BROKERS/TOPIC").
std::unique_ptr<EventLog> open_event_log(const std::string& spec, const EventLogOptions& options);
std::unique_ptr<EventLog> open_event_log(const std::string& spec, uint32_t partitions = 1);

}  // namespace cairn
