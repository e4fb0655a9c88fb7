// What both backends share: the blocking append and the dispatch on `EventLog=`.
#include "events/log/event_log.hpp"
#include "events/log/kafka_spec.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <mutex>

namespace cairn {

uint64_t EventLog::append_sync(uint32_t partition, std::vector<uint8_t> payload) {
  std::mutex mutex;
  std::condition_variable done;
  std::optional<AppendResult> outcome;
  append(partition, std::move(payload), [&](const AppendResult& result) {
    std::lock_guard lock(mutex);
    outcome = result;
    done.notify_one();
  });
  std::unique_lock lock(mutex);
  done.wait(lock, [&] { return outcome.has_value(); });
  if (!outcome->ok) throw LogError(outcome->error);
  return outcome->offset;
}

std::unique_ptr<EventLog> open_event_log(const std::string& spec, const EventLogOptions& options) {
  if (spec.starts_with("file:")) {
    std::string dir = spec.substr(5);
    if (dir.empty()) throw LogError("EventLog=file: needs a directory, as in file:/var/lib/cairn/log");
    FileLogOptions file;
    file.partitions = options.partitions;
    file.read_only = options.read_only;
    file.accept_loss = options.accept_loss;
    file.segment_bytes = options.segment_bytes;
    return open_file_log(dir, file);
  }
  if (spec.starts_with("kafka:")) {
    auto log = open_kafka_log(spec, options.kafka);
    if (log->partitions() < options.partitions)
      throw LogError(kafka_shard_count_mismatch(spec, options.partitions, log->partitions()));
    return log;
  }
  throw LogError(fmt::format("unknown EventLog '{}': expected file:DIR or kafka:BROKERS/TOPIC", spec));
}

std::unique_ptr<EventLog> open_event_log(const std::string& spec, uint32_t partitions) {
  EventLogOptions options;
  options.partitions = partitions;
  return open_event_log(spec, options);
}

}  // namespace cairn
