// The Kafka event-log backend ("kafka:BROKERS/TOPIC").
//
// Shard = partition. Each written partition has its own producer (acks=all,
// idempotent, transactional with "<prefix>.<topic>.<partition>" where the
// broker supports it) and its own thread that group-commits: it takes every
// queued append, produces them in one transaction and resolves them once the
// commit (or, without transactions, the acks=all delivery reports) came back.
// Each group commit is written as few records as fit under a byte cap: its events framed
// together (event_frame.hpp), a lone event as it is. Records have no key (the partition is
// chosen explicitly) and the first record of each group commit carries a "cairn.schema"
// header (the rest of the transaction was written by the same build). Readers are
// read_committed consumers assigned to one partition that hand a frame's events out one by
// one, each with the record's offset; DecodedEvent copies each to aligned words.
#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

#include "events/event_codec.hpp"
#include "events/log/event_frame.hpp"
#include "events/log/event_log.hpp"
#include "events/log/fence_watch.hpp"
#include "events/log/kafka_spec.hpp"
#include "events/log/record_header.hpp"

namespace cairn {
namespace {

// Brokers older than 0.11 have neither transactions nor idempotent producers.
std::string older_protocol(const std::string& text) {
  return fmt::format("the brokers speak a protocol older than Kafka 0.11 ({}); Cairn needs transactions or at least "
                     "idempotent producers: upgrade the brokers, or check kafka.broker.version.fallback= and "
                     "kafka.api.version.request=",
                     text);
}

using Clock = std::chrono::steady_clock;
using Properties = std::map<std::string, std::string>;

constexpr int kDefaultAppendTimeoutMs = 5000;  // under the CLI's 10 s call timeout: the refusal reaches the user
constexpr auto kInitialBackoff = std::chrono::milliseconds(100);
// Appends in one transaction at most: a backlog (a burst, a bulk load) is committed in
// pieces that fit librdkafka's local queue (100,000 messages by default) and its deadline.
constexpr size_t kMaxBatch = 20000;
constexpr auto kMaxBackoff = std::chrono::seconds(5);
// A fenced writer waits this long for its fencer's claim (appended right after the
// fencer initialised the transactional id) to tell a successor from a claim-race loser.
constexpr auto kFencerClaimWait = std::chrono::seconds(2);

bool fencing_error(rd_kafka_resp_err_t code) {
  return code == RD_KAFKA_RESP_ERR__FENCED || code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
         code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH;
}

// Librdkafka's error callback: says once per distinct error (and again after 30 s)
// that the brokers cannot be reached, so an operator sees why commands fail.
class ErrorReporter {
 public:
  explicit ErrorReporter(std::string where) : where_(std::move(where)) {}
  void report(rd_kafka_resp_err_t error, const char* reason) {
    std::lock_guard lock(mutex_);
    auto now = Clock::now();
    if (error == last_ && now - last_time_ < std::chrono::seconds(30)) return;
    last_ = error, last_time_ = now;
    spdlog::warn("event log {}: {} (librdkafka keeps retrying)", where_, reason);
  }

 private:
  std::string where_;
  std::mutex mutex_;
  rd_kafka_resp_err_t last_ = RD_KAFKA_RESP_ERR_NO_ERROR;
  Clock::time_point last_time_{};
};

void error_callback(rd_kafka_t*, int error, const char* reason, void* opaque) {
  static_cast<ErrorReporter*>(opaque)->report(static_cast<rd_kafka_resp_err_t>(error), reason);
}

// Librdkafka's own log lines (connection attempts...) go to spdlog's debug level;
// what an operator must see comes through error_callback.
void log_callback(const rd_kafka_t*, int level, const char* facility, const char* text) {
  spdlog::debug("librdkafka {} {}: {}", level, facility, text);
}

void set_property(rd_kafka_conf_t* conf, const std::string& key, const std::string& value, const std::string& where) {
  char error[512];
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK)
    throw LogError(fmt::format("event log {}: bad Kafka property {}={}: {}", where, key, value, error));
}

// Cairn's settings first, then the operator's kafka.* properties, then what correctness needs.
rd_kafka_conf_t* make_conf(const KafkaSpec& spec, const Properties& defaults, const Properties& user,
                           const Properties& required, ErrorReporter* reporter, const std::string& where) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  try {
    set_property(conf, "bootstrap.servers", spec.brokers, where);
    set_property(conf, "log_level", "3", where);
    for (const auto* group : {&defaults, &user, &required})
      for (const auto& [key, value] : *group) set_property(conf, key, value, where);
  } catch (...) {
    rd_kafka_conf_destroy(conf);
    throw;
  }
  rd_kafka_conf_set_opaque(conf, reporter);
  rd_kafka_conf_set_error_cb(conf, error_callback);
  rd_kafka_conf_set_log_cb(conf, log_callback);
  return conf;
}

// kafka.api.version.request=false with kafka.broker.version.fallback below 0.11 makes
// librdkafka speak the protocol of a broker without transactions or idempotent producers
// (and requests that Kafka 4 brokers no longer answer: a watermark query then hung).
// Refused at open, naming both keys; empty when the properties are fine.
std::string old_protocol_trouble(const Properties& properties) {
  auto request = properties.find("api.version.request");
  if (request == properties.end() || (request->second != "false" && request->second != "0")) return {};
  auto fallback = properties.find("broker.version.fallback");
  std::string version = fallback == properties.end() ? "0.10.0" : fallback->second;  // librdkafka's default
  unsigned major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%u.%u", &major, &minor) != 2 || major > 0 || minor >= 11) return {};
  return fmt::format("kafka.api.version.request=false with kafka.broker.version.fallback={} speaks the protocol of "
                     "Kafka {}, which has no transactions or idempotent producers (Cairn needs Kafka 0.11 or later, "
                     "and newer brokers refuse those requests); remove kafka.api.version.request=false or set "
                     "kafka.broker.version.fallback= to the brokers' version",
                     version, version);
}

// The principal the brokers see, as far as the client knows it.
std::string principal_of(const Properties& properties) {
  auto user = properties.find("sasl.username");
  if (user != properties.end()) return "User:" + user->second;
  return "this client's principal (its TLS certificate's, or ANONYMOUS)";
}

// An ACL refusal, as one line naming the principal and what to change; empty for other errors.
std::string acl_refusal(rd_kafka_resp_err_t code, const Properties& properties, const std::string& topic,
                        const std::string& transactional_id) {
  std::string principal = principal_of(properties);
  // An idempotent producer (no transactional id) needs Write on some topic to start.
  if (code == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
      (code == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED && transactional_id.empty()))
    return fmt::format("the brokers refuse {} Write on topic {} ({}); grant {} Write (and Describe, Read) on it, or "
                       "set kafka.sasl.username= to a principal that has them",
                       principal, topic, rd_kafka_err2str(code), principal);
  if (code == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED ||
      code == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED)
    return fmt::format("the brokers refuse {} the transactional id {} ({}); grant {} Write (and Describe) on it, or "
                       "change KafkaTransactionalIdPrefix= to a prefix it may use (empty: no transactions)",
                       principal, transactional_id, rd_kafka_err2str(code), principal);
  return {};
}

// Milliseconds until `deadline`, at least 1 (librdkafka's calls take a timeout).
int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 1, 3600000));
}

struct HandleDeleter {
  void operator()(rd_kafka_t* handle) const { rd_kafka_destroy(handle); }
};
using Handle = std::unique_ptr<rd_kafka_t, HandleDeleter>;

Handle make_handle(rd_kafka_type_t type, rd_kafka_conf_t* conf, const std::string& where) {
  char error[512];
  rd_kafka_t* handle = rd_kafka_new(type, conf, error, sizeof error);
  if (!handle) {
    rd_kafka_conf_destroy(conf);
    throw LogError(fmt::format("event log {}: cannot create a Kafka client: {}", where, error));
  }
  return Handle(handle);
}

struct ErrorDeleter {
  void operator()(rd_kafka_error_t* error) const { rd_kafka_error_destroy(error); }
};
using TxnError = std::unique_ptr<rd_kafka_error_t, ErrorDeleter>;

struct QueuedAppend {
  std::vector<uint8_t> payload;
  AppendCallback done;
  Clock::time_point deadline;  // answered by then, whatever it waited behind
  bool ends_record = true;  // the last append of its Kafka record
  // Filled by the delivery report.
  bool delivered = false;
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;
  int64_t offset = -1;
};

// One Kafka record of a batch: one append as it is, or a frame of several.
struct OutgoingRecord {
  std::vector<QueuedAppend*> items;
  std::vector<uint8_t> frame;  // empty: the one item's payload is the record
};

void delivery_report(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  for (auto* item : static_cast<OutgoingRecord*>(message->_private)->items) {
    item->delivered = true;
    item->error = message->err;
    item->offset = message->offset;
  }
}

class KafkaLog;

// The single producer (and thread) of one partition.
class PartitionWriter {
 public:
  PartitionWriter(KafkaLog& log, uint32_t partition);
  ~PartitionWriter();
  void enqueue(std::vector<uint8_t> payload, AppendCallback done);
  void claimed(uint64_t epoch, uint64_t offset) {
    claim_offset_ = offset;
    claimed_epoch_ = epoch;
  }
  void relinquish(const std::string& why) {
    std::lock_guard lock(commit_mutex_);  // waits for the batch being written
    relinquished_ = why;
  }

 private:
  void run();
  void connect(Clock::time_point deadline);
  void learn_topic(Clock::time_point deadline);
  void wait_until_readable(int64_t offset, Clock::time_point deadline);
  void commit(std::deque<QueuedAppend>& batch);
  std::string produce_and_commit(std::deque<QueuedAppend>& batch, Clock::time_point deadline);
  void frame(std::deque<QueuedAppend>& batch);
  rd_kafka_resp_err_t produce(OutgoingRecord& record, const std::string* header);
  std::string wait_for_deliveries(std::deque<QueuedAppend>& batch, Clock::time_point deadline);
  // `commit_us`: from the batch's first produce to its acknowledgement (and transaction's commit).
  void resolve(std::deque<QueuedAppend>& batch, const std::string& error, uint64_t commit_us);
  std::string refusal(rd_kafka_resp_err_t code) const;
  std::string producer_failed(rd_kafka_resp_err_t code, const std::string& text, Clock::time_point deadline);
  std::string fenced(const std::string& text, Clock::time_point deadline);
  std::optional<FenceNotice> successor_claim(Clock::time_point deadline);

  KafkaLog& log_;
  const uint32_t partition_;
  const std::string transactional_id_;
  Handle producer_;
  bool transactional_ = false;
  std::string fatal_;  // sticky (fenced by a newer producer of the same transactional id)
  // The claim this process's controller won on the partition (EventLog::writer_claimed); 0: none.
  std::atomic<uint64_t> claimed_epoch_{0}, claim_offset_{0};
  bool fenced_by_loser_ = false;       // the last batch's producer was fenced by a claim-race loser
  std::optional<uint64_t> loser_seen_;  // the offset of the last loser's claim met after a fence
  Handle tail_;            // a read_committed consumer following the partition (wait_until_readable)
  int64_t readable_ = -1;  // the highest offset it has seen readable
  // The records of the batch being written (delivery reports point at them).
  std::deque<OutgoingRecord> outgoing_;

  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<QueuedAppend> queue_;
  bool stopping_ = false;
  std::mutex commit_mutex_;   // held while a batch is written
  std::string relinquished_;  // under commit_mutex_: why this process no longer writes the partition
  std::thread thread_;
};

class KafkaLog : public EventLog {
 public:
  KafkaLog(KafkaSpec spec, KafkaLogOptions options)
      : spec_(std::move(spec)),
        options_(std::move(options)),
        where_(fmt::format("kafka:{}/{}", spec_.brokers, spec_.topic)),
        reporter_(where_) {
    if (auto trouble = old_protocol_trouble(options_.properties); !trouble.empty())
      throw LogError(fmt::format("event log {}: {}", where_, trouble));
    auto it = options_.properties.find("message.timeout.ms");
    append_timeout_ms_ = it == options_.properties.end() ? kDefaultAppendTimeoutMs : std::stoi(it->second);
    metadata_ = make_handle(RD_KAFKA_PRODUCER, make_conf(spec_, {}, options_.properties, {}, &reporter_, where_),
                            where_);  // shared with end_offset()'s queries
    partition_count_ = discover_partitions();
    writers_.resize(partition_count_);
  }

  ~KafkaLog() override {
    std::lock_guard lock(writers_mutex_);
    writers_.clear();  // each writer drains its queue first
  }

  uint32_t partitions() const override { return partition_count_; }

  void writer_claimed(uint32_t partition, uint64_t epoch, uint64_t claim_offset) override {
    if (partition < partition_count_) writer(partition).claimed(epoch, claim_offset);
  }

  void relinquish(uint32_t partition, const std::string& why) {
    if (partition < partition_count_) writer(partition).relinquish(why);
  }

  void append(uint32_t partition, std::vector<uint8_t> payload, AppendCallback done) override {
    if (partition >= partition_count_) {
      if (done) done({false, 0, fmt::format("event log {} has no partition {}", where_, partition)});
      return;
    }
    writer(partition).enqueue(std::move(payload), std::move(done));
  }

  // The high watermark, asked by a thread of its own with a deadline this call keeps:
  // librdkafka 2.0.2's rd_kafka_query_watermark_offsets ignores its timeout while the
  // partition's leader is down. A query past the deadline is left to end by itself; it
  // holds the handle (shared) until then.
  uint64_t end_offset(uint32_t partition) const override {
    check_partition(partition);
    struct Query {
      std::mutex mutex;
      std::condition_variable answered;
      bool done = false;
      rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;
      int64_t high = 0;
    };
    auto query = std::make_shared<Query>();
    rd_kafka_poll(metadata_.get(), 0);  // its error callback
    std::thread([query, handle = metadata_, topic = spec_.topic, partition, timeout = options_.open_timeout_ms] {
      int64_t low = 0, high = 0;
      auto error = rd_kafka_query_watermark_offsets(handle.get(), topic.c_str(), static_cast<int32_t>(partition), &low,
                                                    &high, timeout);
      std::lock_guard lock(query->mutex);
      query->error = error, query->high = high, query->done = true;
      query->answered.notify_all();
    }).detach();
    std::unique_lock lock(query->mutex);
    if (!query->answered.wait_for(lock, std::chrono::milliseconds(options_.open_timeout_ms), [&] { return query->done; }))
      throw LogUnavailable(fmt::format("event log {}: the brokers did not say where partition {} ends within {} ms: {}; "
                                       "check that the brokers of EventLog= run",
                                       where_, partition, options_.open_timeout_ms, leader_trouble(partition)));
    if (query->error)
      throw LogUnavailable(fmt::format("event log {}: cannot read the end of partition {}: {}", where_, partition,
                                       rd_kafka_err2str(query->error)));
    return static_cast<uint64_t>(query->high);
  }

  std::unique_ptr<LogReader> read(uint32_t partition, uint64_t from) const override;

  void flush() override {
    std::unique_lock lock(progress_mutex_);
    uint64_t target = accepted_;
    progress_.wait(lock, [&] { return finished_ >= target; });
  }

  LogStats stats() const override {
    std::lock_guard lock(progress_mutex_);
    return stats_;
  }

  // Why a partition does not answer, as the metadata says (a second's look).
  std::string leader_trouble(uint32_t partition) const {
    rd_kafka_topic_t* topic = rd_kafka_topic_new(metadata_.get(), spec_.topic.c_str(), nullptr);
    const rd_kafka_metadata_t* metadata = nullptr;
    auto error = rd_kafka_metadata(metadata_.get(), 0, topic, &metadata, 1000);
    rd_kafka_topic_destroy(topic);
    if (error) return fmt::format("no broker answers ({})", rd_kafka_err2str(error));
    std::string trouble = "its leader does not answer";
    if (metadata->topic_cnt == 1 && static_cast<uint32_t>(metadata->topics[0].partition_cnt) > partition) {
      const auto& about = metadata->topics[0].partitions[partition];
      trouble = about.leader < 0 ? "it has no leader (no in-sync replica runs)"
                                 : fmt::format("its leader, broker {}, does not answer (stopped or down; no other "
                                               "in-sync replica has taken over)",
                                               about.leader);
    }
    rd_kafka_metadata_destroy(metadata);
    return trouble;
  }

  // Why a batch could not be committed, when the topic is the cause: it was deleted,
  // or lost the partition (a second's look at the metadata). Empty otherwise.
  std::string topic_trouble(uint32_t partition) const {
    rd_kafka_topic_t* topic = rd_kafka_topic_new(metadata_.get(), spec_.topic.c_str(), nullptr);
    const rd_kafka_metadata_t* metadata = nullptr;
    auto error = rd_kafka_metadata(metadata_.get(), 0, topic, &metadata, 1000);
    rd_kafka_topic_destroy(topic);
    if (error) return {};
    std::string trouble;
    if (metadata->topic_cnt != 1 || metadata->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
      trouble = fmt::format("; topic {} does not exist any more: recreate it (cairn kafka create-topic) or name "
                            "another in EventLog= or KafkaTopic=", spec_.topic);
    else if (static_cast<uint32_t>(metadata->topics[0].partition_cnt) <= partition)
      trouble = fmt::format("; topic {} has no partition {} any more", spec_.topic, partition);
    rd_kafka_metadata_destroy(metadata);
    return trouble;
  }

  // For writers and readers.
  const KafkaSpec& spec() const { return spec_; }
  const KafkaLogOptions& options() const { return options_; }
  const std::string& where() const { return where_; }
  ErrorReporter* reporter() const { return &reporter_; }
  int append_timeout_ms() const { return append_timeout_ms_; }
  void accepted() {
    std::lock_guard lock(progress_mutex_);
    ++accepted_;
  }
  void finished(uint64_t records, uint64_t ok, uint64_t bytes, bool committed, uint64_t commit_us) {
    {
      std::lock_guard lock(progress_mutex_);
      finished_ += records;
      stats_.appends += ok;
      stats_.bytes += bytes;
      if (committed) ++stats_.syncs;
      stats_.commit_us += commit_us;
    }
    progress_.notify_all();
  }

 private:
  void check_partition(uint32_t partition) const {
    if (partition >= partition_count_)
      throw LogError(fmt::format("event log {} has no partition {} (it has {})", where_, partition, partition_count_));
  }

  uint32_t discover_partitions() {
    rd_kafka_topic_t* topic = rd_kafka_topic_new(metadata_.get(), spec_.topic.c_str(), nullptr);
    const rd_kafka_metadata_t* metadata = nullptr;
    // Short attempts, serving the error callback in between: "brokers are down" is said at once.
    auto deadline = Clock::now() + std::chrono::milliseconds(options_.open_timeout_ms);
    rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR__TIMED_OUT;
    while (Clock::now() < deadline) {
      auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      error = rd_kafka_metadata(metadata_.get(), 0, topic, &metadata, static_cast<int>(std::min<int64_t>(remaining, 1000)));
      rd_kafka_poll(metadata_.get(), 0);
      if (!error) break;
    }
    rd_kafka_topic_destroy(topic);
    if (error == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED || error == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED)
      throw LogError(fmt::format("event log {}: the brokers refuse {} access to topic {} ({}); grant it the ACLs in "
                                 "README.md, or set kafka.sasl.username= to a principal that has them",
                                 where_, principal_of(options_.properties), spec_.topic, rd_kafka_err2str(error)));
    if (error)
      throw LogUnavailable(fmt::format("event log {}: no Kafka broker answered within {} ms ({}); check the brokers "
                                       "of EventLog= and the kafka.security.* properties",
                                       where_, options_.open_timeout_ms, rd_kafka_err2str(error)));
    std::unique_ptr<const rd_kafka_metadata_t, void (*)(const rd_kafka_metadata_t*)> owned(metadata,
                                                                                           rd_kafka_metadata_destroy);
    auto topic_error = metadata->topic_cnt == 1 ? metadata->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    if (topic_error == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED)
      throw LogError(fmt::format("event log {}: the brokers refuse {} access to topic {} ({}); grant it the ACLs in "
                                 "README.md, or set kafka.sasl.username= to a principal that has them",
                                 where_, principal_of(options_.properties), spec_.topic, rd_kafka_err2str(topic_error)));
    if (topic_error || metadata->topics[0].partition_cnt == 0)
      throw LogError(fmt::format("event log {}: topic {} does not exist ({}); create it (cairn kafka create-topic, "
                                 "one partition per shard) or name another in EventLog= or KafkaTopic=",
                                 where_, spec_.topic, rd_kafka_err2str(topic_error)));
    auto count = static_cast<uint32_t>(metadata->topics[0].partition_cnt);
    if (options_.partitions != 0 && count != options_.partitions)
      throw LogError(fmt::format("event log {}: topic {} has {} partitions but KafkaPartitions={}; set "
                                 "KafkaPartitions={} or use a topic of {} partitions",
                                 where_, spec_.topic, count, options_.partitions, count, options_.partitions));
    return count;
  }

  PartitionWriter& writer(uint32_t partition) {
    std::lock_guard lock(writers_mutex_);
    if (!writers_[partition]) writers_[partition] = std::make_unique<PartitionWriter>(*this, partition);
    return *writers_[partition];
  }

  const KafkaSpec spec_;
  const KafkaLogOptions options_;
  const std::string where_;
  mutable ErrorReporter reporter_;
  int append_timeout_ms_ = kDefaultAppendTimeoutMs;
  std::shared_ptr<rd_kafka_t> metadata_;  // metadata and watermarks; never produces
  uint32_t partition_count_ = 0;

  std::mutex writers_mutex_;
  std::vector<std::unique_ptr<PartitionWriter>> writers_;

  mutable std::mutex progress_mutex_;
  std::condition_variable progress_;
  uint64_t accepted_ = 0, finished_ = 0;
  LogStats stats_;
};

// ---------------------------------------------------------------- writer

PartitionWriter::PartitionWriter(KafkaLog& log, uint32_t partition)
    : log_(log),
      partition_(partition),
      transactional_id_(transactional_id(log.options().transactional_id_prefix, log.spec().topic, partition)) {
  thread_ = std::thread([this] { run(); });
}

PartitionWriter::~PartitionWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  thread_.join();
  if (tail_) rd_kafka_destroy_flags(tail_.release(), RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);  // it joined no group
}

void PartitionWriter::enqueue(std::vector<uint8_t> payload, AppendCallback done) {
  log_.accepted();
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(
        {std::move(payload), std::move(done), Clock::now() + std::chrono::milliseconds(log_.append_timeout_ms())});
  }
  queued_.notify_one();
}

void PartitionWriter::run() {
  std::deque<QueuedAppend> batch;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and drained
      if (queue_.size() <= kMaxBatch) {
        batch.swap(queue_);  // everything queued: one transaction
      } else {               // within librdkafka's local queue (queue.buffering.max.messages)
        auto end = queue_.begin() + static_cast<std::ptrdiff_t>(kMaxBatch);
        batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(end));
        queue_.erase(queue_.begin(), end);
      }
    }
    {
      std::lock_guard commit_lock(commit_mutex_);
      commit(batch);
    }
    batch.clear();
  }
}

// A producer for this partition: transactional where the broker supports it.
// Transactions are an extra fence (a newer producer of the same id aborts the
// older one's transactions on a real broker); the writer epoch is the rule.
void PartitionWriter::connect(Clock::time_point deadline) {
  const std::string& where = log_.where();
  Properties defaults = {{"linger.ms", "1"}, {"message.timeout.ms", std::to_string(kDefaultAppendTimeoutMs)}};
  Properties required = {{"acks", "all"}, {"enable.idempotence", "true"}};
  if (!transactional_id_.empty()) {
    required["transactional.id"] = transactional_id_;
    auto conf = make_conf(log_.spec(), defaults, log_.options().properties, required, log_.reporter(), where);
    rd_kafka_conf_set_dr_msg_cb(conf, delivery_report);
    producer_ = make_handle(RD_KAFKA_PRODUCER, conf, where);
    TxnError error(rd_kafka_init_transactions(producer_.get(), remaining_ms(deadline)));
    if (!error) {
      transactional_ = true;
      return;
    }
    auto code = rd_kafka_error_code(error.get());
    if (auto refused = refusal(code); !refused.empty()) {
      producer_.reset();
      throw LogError(refused);
    }
    if (code == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE) {  // an idempotent producer would not work either
      producer_.reset();
      throw LogError(older_protocol(rd_kafka_error_string(error.get())));
    }
    if (rd_kafka_error_is_retriable(error.get()) || code == RD_KAFKA_RESP_ERR__TIMED_OUT) {
      producer_.reset();
      throw LogUnavailable(fmt::format("cannot start the producer of partition {}: {}", partition_,
                                       rd_kafka_error_string(error.get())));
    }
    spdlog::warn("event log {}: the brokers refuse transactions ({}); partition {} is written by an idempotent "
                 "producer, fenced by writer epochs only",
                 where, rd_kafka_error_string(error.get()), partition_);
    required.erase("transactional.id");
  }
  auto conf = make_conf(log_.spec(), defaults, log_.options().properties, required, log_.reporter(), where);
  rd_kafka_conf_set_dr_msg_cb(conf, delivery_report);
  producer_ = make_handle(RD_KAFKA_PRODUCER, conf, where);
  transactional_ = false;
}

// Asks for the topic's metadata at once: otherwise a new producer learns the partition
// of a topic it has not used yet at librdkafka's next periodic refresh, and its first
// transaction (a controller's epoch claim) waited a second for it.
void PartitionWriter::learn_topic(Clock::time_point deadline) {
  rd_kafka_topic_t* topic = rd_kafka_topic_new(producer_.get(), log_.spec().topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  if (rd_kafka_metadata(producer_.get(), 0, topic, &metadata, std::min(remaining_ms(deadline), 2000)) ==
      RD_KAFKA_RESP_ERR_NO_ERROR)
    rd_kafka_metadata_destroy(metadata);
  rd_kafka_topic_destroy(topic);
}

// A committed transaction is durable at once, but read_committed readers see its
// records only once the coordinator wrote the commit marker, a moment after the commit
// returned: a reader opened right after an acknowledged append could miss it. So the
// writer follows its partition with a read_committed consumer of its own and resolves
// a batch once that consumer read past it, or at the deadline (the records are durable
// either way). A consumer, not ListOffsets: librdkafka 2.0.2's
// rd_kafka_query_watermark_offsets ignored its timeout while a leader was down.
void PartitionWriter::wait_until_readable(int64_t offset, Clock::time_point deadline) {
  if (offset < 0) return;
  if (!tail_) {
    Properties defaults = {{"fetch.wait.max.ms", "10"}, {"group.id", "cairn-writer"}};
    Properties required = {{"isolation.level", "read_committed"}, {"enable.partition.eof", "true"},
                           {"enable.auto.commit", "false"}, {"enable.auto.offset.store", "false"}};
    tail_ = make_handle(RD_KAFKA_CONSUMER,
                        make_conf(log_.spec(), defaults, log_.options().properties, required, log_.reporter(),
                                  log_.where()),
                        log_.where());
    auto* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, log_.spec().topic.c_str(), static_cast<int32_t>(partition_))->offset = offset;
    rd_kafka_assign(tail_.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
  }
  while (readable_ < offset && Clock::now() < deadline) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(tail_.get(), std::min(remaining_ms(deadline), 100));
    if (!message) continue;
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) readable_ = std::max(readable_, message->offset - 1);
    else if (!message->err) readable_ = std::max(readable_, message->offset);
    rd_kafka_message_destroy(message);
  }
}

// Resolves every append of the batch: all committed, or all failed. A producer
// left in an unknown state is dropped and made anew for the next batch.
void PartitionWriter::commit(std::deque<QueuedAppend>& batch) {
  // The batch's deadline is its oldest append's: an append queued behind a failing
  // batch is still answered within the timeout (under the CLI's).
  auto deadline = batch.front().deadline;
  auto began = Clock::now();
  std::string error = fatal_.empty() ? relinquished_ : fatal_;
  if (error.empty() && Clock::now() >= deadline) error = "not durable: no time left to write it (the brokers were slow)";
  bool retried = false;
  while (error.empty()) {
    if (!producer_) {
      try {
        connect(deadline);
        learn_topic(deadline);
      } catch (const LogError& e) {
        error = std::string("not durable: ") + e.what();
        break;
      }
    }
    error = produce_and_commit(batch, deadline);
    if (error.empty() || !fenced_by_loser_ || retried) break;
    // Its producer was fenced by a controller that lost the claim race: once more, with a new one.
    fenced_by_loser_ = false;
    retried = true;
    error.clear();
    for (auto& item : batch) item.delivered = false, item.error = RD_KAFKA_RESP_ERR_NO_ERROR, item.offset = -1;
  }
  auto spent = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - began);
  if (error.starts_with("not durable")) error += log_.topic_trouble(partition_);
  // Past its deadline by more than the abort's and a producer's teardown: the CLI (10 s) may
  // have given up first. Said with the parts, so a slow broker and a slow machine can be told apart.
  if (auto late = Clock::now() - deadline; late > std::chrono::seconds(1))
    spdlog::warn("event log {}: {} append(s) to partition {} answered {:.1f} s past their deadline (their commit "
                 "took {:.1f} s, the rest was waiting behind earlier ones)",
                 log_.where(), batch.size(), partition_, std::chrono::duration<double>(late).count(),
                 std::chrono::duration<double>(spent).count());
  resolve(batch, error, static_cast<uint64_t>(spent.count()));
}

std::string PartitionWriter::produce_and_commit(std::deque<QueuedAppend>& batch, Clock::time_point deadline) {
  rd_kafka_t* producer = producer_.get();
  if (transactional_) {
    TxnError begun(rd_kafka_begin_transaction(producer));
    if (begun && rd_kafka_error_is_fatal(begun.get()))
      return producer_failed(rd_kafka_error_code(begun.get()), rd_kafka_error_string(begun.get()), deadline);
    if (begun) {
      producer_.reset();
      return fmt::format("cannot begin a transaction: {}", rd_kafka_error_string(begun.get()));
    }
  }
  // No key, and the schema header on the batch's first record only: they were ~10% of a
  // record's bytes, and a reader checks the header wherever it finds one.
  std::string header = encode_schema_version();
  frame(batch);
  for (auto& record : outgoing_) {
    bool first = &record == &outgoing_.front();
    auto backoff = kInitialBackoff;
    while (true) {
      rd_kafka_resp_err_t error = produce(record, first ? &header : nullptr);
      if (!error) break;
      if (error == RD_KAFKA_RESP_ERR__FATAL) {
        char reason[512] = "";
        auto code = rd_kafka_fatal_error(producer, reason, sizeof reason);
        return producer_failed(code, reason, deadline);
      }
      // A full local queue drains as deliveries come back; anything else is final.
      if (error != RD_KAFKA_RESP_ERR__QUEUE_FULL || Clock::now() >= deadline) {
        producer_.reset();
        return fmt::format("cannot produce: {}", rd_kafka_err2str(error));
      }
      rd_kafka_poll(producer, static_cast<int>(backoff.count()));
    }
  }
  if (!transactional_) return wait_for_deliveries(batch, deadline);

  // Commit, retrying what librdkafka calls retriable until the deadline.
  auto backoff = kInitialBackoff;
  while (true) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    TxnError error(rd_kafka_commit_transaction(producer, static_cast<int>(std::max<int64_t>(remaining, 1))));
    if (!error) break;
    std::string text = rd_kafka_error_string(error.get());
    if (auto refused = refusal(rd_kafka_error_code(error.get())); !refused.empty()) {
      if (rd_kafka_error_txn_requires_abort(error.get())) TxnError(rd_kafka_abort_transaction(producer, 1000));
      producer_.reset();
      return "not durable: " + refused;
    }
    if (rd_kafka_error_is_fatal(error.get())) return producer_failed(rd_kafka_error_code(error.get()), text, deadline);
    if (rd_kafka_error_is_retriable(error.get()) && Clock::now() + backoff < deadline) {
      std::this_thread::sleep_for(backoff);
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
      continue;
    }
    // Abortable, or out of time: abort if possible; a fresh producer either way
    // (a real broker aborts the open transaction when the same id initialises again).
    if (rd_kafka_error_txn_requires_abort(error.get())) TxnError(rd_kafka_abort_transaction(producer, 1000));
    producer_.reset();
    return fmt::format("not durable: the transaction was not committed: {}", text);
  }
  int64_t last = -1;
  for (const auto& item : batch) {
    if (!item.delivered || item.error) {
      producer_.reset();
      auto code = item.delivered ? item.error : RD_KAFKA_RESP_ERR__TIMED_OUT;
      auto refused = refusal(code);
      return fmt::format("not durable: {}", refused.empty() ? rd_kafka_err2str(code) : refused);
    }
    last = std::max(last, item.offset);
  }
  wait_until_readable(last, deadline);
  return {};
}

// The batch's records: runs of appends framed together up to the cap, a lone one as it is.
// A frame is part of one group commit, so no acknowledged position falls inside one.
void PartitionWriter::frame(std::deque<QueuedAppend>& batch) {
  outgoing_.clear();
  std::vector<size_t> sizes;
  sizes.reserve(batch.size());
  for (const auto& item : batch) sizes.push_back(item.payload.size());
  std::vector<std::span<const uint8_t>> payloads;
  for (const auto& piece : plan_event_frames(sizes, log_.options().frame_cap_bytes)) {
    auto& record = outgoing_.emplace_back();
    payloads.clear();
    for (size_t i = piece.first; i < piece.first + piece.count; ++i) {
      batch[i].ends_record = i + 1 == piece.first + piece.count;
      record.items.push_back(&batch[i]);
      payloads.emplace_back(batch[i].payload);
    }
    if (piece.count > 1) encode_event_frame(payloads, record.frame);
  }
}

// Queues one record with librdkafka (without copying it: the batch outlives its delivery),
// with the schema header when `header` is given.
rd_kafka_resp_err_t PartitionWriter::produce(OutgoingRecord& record, const std::string* header) {
  auto& value = record.frame.empty() ? record.items.front()->payload : record.frame;
  rd_kafka_vu_t fields[5];
  size_t count = 0;
  fields[count].vtype = RD_KAFKA_VTYPE_TOPIC;
  fields[count++].u.cstr = log_.spec().topic.c_str();
  fields[count].vtype = RD_KAFKA_VTYPE_PARTITION;
  fields[count++].u.i32 = static_cast<int32_t>(partition_);
  fields[count].vtype = RD_KAFKA_VTYPE_VALUE;
  fields[count].u.mem.ptr = value.data();
  fields[count++].u.mem.size = value.size();
  if (header) {
    fields[count].vtype = RD_KAFKA_VTYPE_HEADER;
    fields[count].u.header.name = kSchemaHeaderName.data();
    fields[count].u.header.val = header->data();
    fields[count++].u.header.size = static_cast<ssize_t>(header->size());
  }
  fields[count].vtype = RD_KAFKA_VTYPE_OPAQUE;
  fields[count++].u.ptr = &record;
  rd_kafka_error_t* error = rd_kafka_produceva(producer_.get(), fields, count);
  if (!error) return RD_KAFKA_RESP_ERR_NO_ERROR;
  // As rd_kafka_producev says it: a fatal error's code is the producer's (rd_kafka_fatal_error),
  // produceva's is its cause (an idempotent producer on a pre-0.11 broker: UNSUPPORTED_FEATURE).
  auto code = rd_kafka_error_is_fatal(error) ? RD_KAFKA_RESP_ERR__FATAL : rd_kafka_error_code(error);
  rd_kafka_error_destroy(error);
  return code;
}

std::string PartitionWriter::refusal(rd_kafka_resp_err_t code) const {
  return acl_refusal(code, log_.options().properties, log_.spec().topic, transactional_id_);
}

// A fatal error of the producer: fenced (below), or another that no new producer cures.
std::string PartitionWriter::producer_failed(rd_kafka_resp_err_t code, const std::string& text,
                                             Clock::time_point deadline) {
  producer_.reset();
  if (fencing_error(code)) return fenced(text, deadline);
  // An ACL refusal may surface as the producer's fatal error (its idempotence PID refused):
  // name the principal and the key, as for a refused batch.
  auto refused = refusal(code);
  if (code == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE)  // an idempotent producer on a pre-0.11 broker
    fatal_ = older_protocol(text);
  else
    fatal_ = fmt::format("the producer of partition {} failed: {}; this writer stops", partition_,
                         refused.empty() ? text : refused + ": " + text);
  spdlog::error("event log {}: {}", log_.where(), fatal_);
  return fatal_;
}

// The broker fenced this writer's producer: another producer initialised the same
// transactional id. A successor (a claim above this writer's epoch) fences it for good; a
// controller that lost the claim race (its claim, of this epoch, came second) initialised
// the id before learning that it lost, and exits: this writer initialises it again.
std::string PartitionWriter::fenced(const std::string& text, Clock::time_point deadline) {
  if (claimed_epoch_ != 0) {
    auto successor = successor_claim(deadline);
    if (!successor) {
      spdlog::warn("event log {}: the producer of partition {} was fenced ({}) by a controller that lost the claim "
                   "race to this one (no claim above epoch {} in the log); initialising it again",
                   log_.where(), partition_, text, claimed_epoch_.load());
      fenced_by_loser_ = true;
      return "not durable: fenced by a controller that lost the claim race; initialising the producer again";
    }
    fatal_ = fmt::format("fenced: {} claimed partition {} with epoch {} at offset {} and its producer fenced this "
                         "one's ({}); this writer stops",
                         successor->controller, partition_, successor->epoch, successor->offset, text);
  } else {
    fatal_ = fmt::format("the producer of partition {} was fenced: {}; this writer stops", partition_, text);
  }
  spdlog::error("event log {}: {}", log_.where(), fatal_);
  return fatal_;
}

// A claim above this writer's epoch after its own, if the shard holds one. It reads to
// the end, and waits up to kFencerClaimWait (within the batch's deadline) for the
// fencer's claim unless it found a loser's it had not met yet (a claim of this epoch or
// below): then the fencer is known. A shard that cannot be read counts as none: the
// writer epoch, which the controller's fence watch enforces, stays the rule either way.
std::optional<FenceNotice> PartitionWriter::successor_claim(Clock::time_point deadline) {
  auto now = Clock::now();  // at least a look to the end, even with the batch's time almost out
  auto until = std::max(now + std::chrono::milliseconds(500),
                        std::min(now + kFencerClaimWait, deadline - std::chrono::seconds(1)));
  uint64_t own = claimed_epoch_;
  std::optional<uint64_t> new_loser;
  try {
    auto reader = log_.read(partition_, claim_offset_ + 1);
    while (Clock::now() < until) {
      auto record = reader->next(std::min(remaining_ms(until), 100));
      if (!record) {
        if (new_loser) break;  // at the end, the fencer found
        continue;
      }
      auto claim = shard_claim_in(*record, partition_);
      if (claim && claim->epoch > own) return claim;
      if (claim && (!loser_seen_ || claim->offset > *loser_seen_)) new_loser = claim->offset;
    }
  } catch (const LogError& e) {
    spdlog::warn("event log {}: cannot read partition {} for a newer claim: {}", log_.where(), partition_, e.what());
  }
  if (new_loser) loser_seen_ = new_loser;
  return std::nullopt;
}

// Without transactions: every delivery report, each acked by all in-sync replicas.
std::string PartitionWriter::wait_for_deliveries(std::deque<QueuedAppend>& batch, Clock::time_point deadline) {
  rd_kafka_t* producer = producer_.get();
  auto pending = [&] {
    return std::any_of(batch.begin(), batch.end(), [](const QueuedAppend& item) { return !item.delivered; });
  };
  // Deliveries come back after message.timeout.ms at the latest; the margin covers the local queue.
  auto hard_deadline = deadline + std::chrono::seconds(5);
  while (pending() && Clock::now() < hard_deadline) rd_kafka_poll(producer, 50);
  if (pending()) {
    auto refused = refusal(rd_kafka_fatal_error(producer, nullptr, 0));  // an idempotent producer refused its id
    producer_.reset();  // waits for (and fails) what is left: their reports go to items still alive
    return "not durable: " + (refused.empty() ? std::string("no delivery report from the brokers") : refused);
  }
  for (const auto& item : batch)
    if (item.error) {
      // After a fatal error (an idempotent producer refused its id) the records are purged: the cause is that error.
      auto fatal = rd_kafka_fatal_error(producer, nullptr, 0);
      auto code = fatal ? fatal : item.error;
      if (fatal) producer_.reset();
      auto refused = refusal(code);
      return fmt::format("not durable: {}", refused.empty() ? rd_kafka_err2str(item.error) : refused);
    }
  return {};
}

// Callbacks in offset order; a throwing callback must not stop the writer.
void PartitionWriter::resolve(std::deque<QueuedAppend>& batch, const std::string& error, uint64_t commit_us) {
  uint64_t bytes = 0;
  if (!error.empty()) spdlog::error("event log {}: {} append(s) to partition {} failed: {}", log_.where(), batch.size(),
                                    partition_, error);
  for (auto& item : batch) {
    bytes += item.payload.size();
    if (!item.done) continue;
    try {
      item.done({error.empty(), error.empty() ? static_cast<uint64_t>(item.offset) : 0,
                 error.empty() ? std::string() : fmt::format("event log {}: {}", log_.where(), error),
                 item.ends_record});
    } catch (const std::exception& e) {
      spdlog::error("event log {}: append callback threw: {}", log_.where(), e.what());
    }
  }
  log_.finished(batch.size(), error.empty() ? batch.size() : 0, error.empty() ? bytes : 0, error.empty(),
                error.empty() ? commit_us : 0);
}

// ---------------------------------------------------------------- reader

constexpr int kEndProbeMs = 10000;  // next(0): how long to wait to learn where the end is

class KafkaLogReader : public LogReader {
 public:
  KafkaLogReader(const KafkaLog& log, uint32_t partition, uint64_t from) : log_(log), partition_(partition) {
    // A replay reads millions of small records: large fetches, and a prefetch queue bounded
    // by bytes rather than by count. Whenever the queue is full, librdkafka 2.0.2's fetcher
    // stops and looks again only up to a second later, so the bound must hold more than a
    // second of replay (~200 MB here): with 128 MiB a replay from the broker stalled up to
    // 0.5 s and ran at ~800k events/s instead of ~1.5M. It is only filled while a replay
    // reads faster than it folds; a reader that keeps up holds little.
    Properties defaults = {{"fetch.wait.max.ms", "10"},
                           {"group.id", "cairn-reader"},
                           {"max.partition.fetch.bytes", "8388608"},
                           {"queued.min.messages", "10000000"},
                           {"queued.max.messages.kbytes", "524288"}};
    Properties required = {{"isolation.level", "read_committed"},
                           {"enable.partition.eof", "true"},
                           {"enable.auto.commit", "false"},
                           {"enable.auto.offset.store", "false"},
                           {"auto.offset.reset", "error"}};
    consumer_ = make_handle(RD_KAFKA_CONSUMER,
                            make_conf(log.spec(), defaults, log.options().properties, required, log.reporter(),
                                      log.where()),
                            log.where());
    std::unique_ptr<rd_kafka_topic_partition_list_t, void (*)(rd_kafka_topic_partition_list_t*)> list(
        rd_kafka_topic_partition_list_new(1), rd_kafka_topic_partition_list_destroy);
    rd_kafka_topic_partition_list_add(list.get(), log.spec().topic.c_str(), static_cast<int32_t>(partition))->offset =
        static_cast<int64_t>(from);
    if (auto error = rd_kafka_assign(consumer_.get(), list.get()))
      throw LogError(fmt::format("event log {}: cannot read partition {}: {}", log.where(), partition,
                                 rd_kafka_err2str(error)));
    queue_.reset(rd_kafka_queue_get_consumer(consumer_.get()));
  }

  ~KafkaLogReader() override {
    drop_batch();
    single_.reset();
    queue_.reset();
    rd_kafka_consumer_close(consumer_.get());
  }

  // With wait_ms <= 0, "the current end" is where the broker last said the
  // partition ends (a partition-EOF event); until one came, it asks.
  std::optional<LogRecord> next(int wait_ms) override {
    LogRecord record;
    std::span<const uint8_t> payload;
    if (!next_view(record.offset, payload, wait_ms)) return std::nullopt;
    record.payload.assign(payload.begin(), payload.end());  // out of librdkafka's buffer (and aligned)
    return record;
  }

  std::optional<uint64_t> end_position() const override { return end_position_; }
  bool record_ended() const override { return events_.ended(); }

  // Without a copy: the payload stays in librdkafka's buffer until the next call. A frame's
  // events come one by one, each with its record's offset.
  bool next_view(uint64_t& offset, std::span<const uint8_t>& payload, int wait_ms) override {
    if (!events_.ended()) {  // the record taken last is a frame with events left; it is still held
      offset = record_offset_;
      return events_.next(payload);
    }
    rd_kafka_message_t* message = next_message(wait_ms);
    if (!message) return false;
    offset = record_offset_ = static_cast<uint64_t>(message->offset);
    events_.start({static_cast<const uint8_t*>(message->payload), message->len});
    return events_.next(payload);
  }

 private:
  using Message = std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)>;
  using Queue = std::unique_ptr<rd_kafka_queue_t, void (*)(rd_kafka_queue_t*)>;
  // What one rd_kafka_consume_batch_queue call takes from the queue at most.
  static constexpr size_t kBatchMessages = 4096;

  // The next record's message (the reader's until the next call), or null at the current
  // end (or after wait_ms).
  rd_kafka_message_t* next_message(int wait_ms) {
    // Replaying, the next record is usually queued already: taking it without a timeout
    // spares the clock reads, a tenth of a replay's time on this kind of VM.
    rd_kafka_message_t* quick = poll(0);
    if (quick && !quick->err) {
      at_end_ = false;
      check_schema(quick);
      return quick;
    }
    return next_message_waiting(wait_ms, quick);
  }

  // The consumer queue's next event: from the batch taken last; when that is done, the
  // next batch of whatever is queued already (one call and one lock for thousands of
  // records, rather than a poll each); when nothing is, one poll waiting up to timeout_ms
  // (a batch call would wait for a full batch or the whole timeout). Null after the timeout.
  rd_kafka_message_t* poll(int timeout_ms) {
    if (next_in_batch_ == batch_.size()) {
      drop_batch();
      single_.reset();
      if (queue_) {
        batch_.resize(kBatchMessages);
        ssize_t taken = rd_kafka_consume_batch_queue(queue_.get(), 0, batch_.data(), kBatchMessages);
        batch_.resize(taken > 0 ? static_cast<size_t>(taken) : 0);
      }
    }
    if (next_in_batch_ < batch_.size()) return batch_[next_in_batch_++];
    if (timeout_ms == 0) return nullptr;
    single_.reset(rd_kafka_consumer_poll(consumer_.get(), timeout_ms));
    return single_.get();
  }

  void drop_batch() {
    for (auto* message : batch_) rd_kafka_message_destroy(message);
    batch_.clear();
    next_in_batch_ = 0;
  }

  // As next_message, starting with `pending` (an event already polled) when there is one.
  rd_kafka_message_t* next_message_waiting(int wait_ms, rd_kafka_message_t* pending) {
    auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms > 0 ? wait_ms : kEndProbeMs);
    while (true) {
      rd_kafka_message_t* message = pending;
      pending = nullptr;
      if (!message) {
        auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        int timeout = (wait_ms <= 0 && at_end_) ? 0 : static_cast<int>(std::max<int64_t>(remaining, 0));
        message = poll(timeout);
      }
      if (!message) {
        if (wait_ms > 0 || at_end_) return nullptr;
        if (Clock::now() >= deadline)
          throw LogUnavailable(fmt::format("event log {}: no answer from the brokers within {} ms reading partition {}",
                                           log_.where(), kEndProbeMs, partition_));
        continue;
      }
      if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        at_end_ = true;
        end_position_ = static_cast<uint64_t>(message->offset);
        if (wait_ms <= 0 || Clock::now() >= deadline) return nullptr;
        continue;
      }
      if (message->err) {
        std::string text = rd_kafka_message_errstr(message);
        if (message->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET || message->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE)
          throw LogError(fmt::format("event log {}: partition {}: records are missing ({}); the topic's retention "
                                     "dropped events the log still needs",
                                     log_.where(), partition_, text));
        if (rd_kafka_fatal_error(consumer_.get(), nullptr, 0))
          throw LogError(fmt::format("event log {}: reading partition {}: {}", log_.where(), partition_, text));
        log_.reporter()->report(message->err, text.c_str());  // transient: librdkafka retries
        continue;
      }
      at_end_ = false;
      check_schema(message);
      return message;
    }
  }

  // On every record: an idempotent writer (no transactions, no commit markers) leaves no gap
  // in offsets where a writer of another build starts. With frames, records are few.
  void check_schema(rd_kafka_message_t* message) {
    rd_kafka_headers_t* headers = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    std::optional<uint32_t> version;
    if (rd_kafka_message_headers(message, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR)
      return;  // within a group commit whose first record said the version
    if (rd_kafka_header_get_last(headers, kSchemaHeaderName.data(), &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR && value)
      version = decode_schema_version({static_cast<const uint8_t*>(value), size});
    auto compatibility = schema_compatibility(version);
    if (compatibility == SchemaCompatibility::newer && !warned_newer_) {
      warned_newer_ = true;
      spdlog::warn("event log {}: partition {} holds events of schema version {} (this build reads {}); unknown "
                   "fields and kinds are skipped",
                   log_.where(), partition_, *version, kEventSchemaVersion);
    } else if (compatibility == SchemaCompatibility::unknown && !warned_unknown_) {
      warned_unknown_ = true;
      spdlog::warn("event log {}: record {} of partition {} has no valid {} header; not written by Cairn?",
                   log_.where(), message->offset, partition_, kSchemaHeaderName);
    }
  }

  const KafkaLog& log_;
  const uint32_t partition_;
  Handle consumer_;
  Queue queue_{nullptr, rd_kafka_queue_destroy};  // the consumer's queue, for batches (null: none)
  std::vector<rd_kafka_message_t*> batch_;  // taken by the last batch call, each destroyed with it
  size_t next_in_batch_ = 0;
  Message single_{nullptr, rd_kafka_message_destroy};  // taken by the last waiting poll
  bool at_end_ = false;
  std::optional<uint64_t> end_position_;
  bool warned_newer_ = false, warned_unknown_ = false;
  RecordEvents events_;  // of the record taken last (held until the next message is taken)
  uint64_t record_offset_ = 0;
};

std::unique_ptr<LogReader> KafkaLog::read(uint32_t partition, uint64_t from) const {
  check_partition(partition);
  return std::make_unique<KafkaLogReader>(*this, partition, from);
}

}  // namespace

std::unique_ptr<EventLog> open_kafka_log(const std::string& spec, const KafkaLogOptions& options) {
  return std::make_unique<KafkaLog>(parse_kafka_spec(spec, options.topic), options);
}

void relinquish_kafka_partition(EventLog& log, uint32_t partition, const std::string& why) {
  if (auto* kafka = dynamic_cast<KafkaLog*>(&log)) kafka->relinquish(partition, why);
}

}  // namespace cairn
