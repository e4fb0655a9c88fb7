// Conversions between the Cap'n Proto wire form of events and the domain model.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <capnp/serialize.h>
#include <kj/io.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capnp/events.capnp.h"
#include "events/job_model.hpp"
#include "events/job_usage.hpp"
#include "events/submission_limits.hpp"

namespace cairn {

// Cap'n Proto lets a short message claim millions of empty list elements (each charged one
// word of the reader's limit); copying them would take gigabytes. Nobody sends so many:
// a longer list is refused (a kj exception with Slurm's "parameter too long") before it is read.
template <typename List>
List bounded_list(List list) {
  if (list.size() > kMaxSpecListEntries)
    throw kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__,
                        kj::heapString(kParameterTooLong.data(), kParameterTooLong.size()));
  return list;
}

using EventKind = schema::Event::Body::Which;

// "JobSubmitted", "NodeDown", ...; "Unknown(<n>)" for kinds newer than this reader.
std::string kind_name(EventKind kind);
// Inverse of kind_name, case-insensitive; false when no such kind.
bool parse_kind(std::string_view name, EventKind& kind);
// Number of kinds this build knows (ordinals 1..count).
bool is_known_kind(EventKind kind);

void write_spec(schema::JobSpec::Builder out, const JobSpec& spec);
void write_environment(schema::JobSpec::Builder out, const std::vector<std::string>& environment);
// The entries of a RecordedSpec::environment_block().
std::vector<std::string> split_environment(const std::string& block);
// The shared copy of an environment block, as RecordedSpec::compact() keeps it.
std::shared_ptr<const std::string> intern_environment_block(std::string block);
JobSpec read_spec(schema::JobSpec::Reader in);
// Follows every pointer of the spec (what read_spec reads and what a deep copy walks), copying
// nothing: throws kj::Exception where one does not decode, so that a record is refused when
// applied rather than when its spec is read or copied later.
void check_spec(schema::JobSpec::Reader in);
JobSpecCore read_spec_core(schema::JobSpec::Reader in);
void write_allocation(capnp::List<schema::NodeAllocation>::Builder out, const std::vector<NodeShare>& nodes);
// A batch script's or step's usage (JobEnded, StepEnded, the records, the agents' reports).
void write_usage(schema::ResourceUsage::Builder out, const ResourceUsage& usage);
ResourceUsage read_usage(schema::ResourceUsage::Reader in);
std::vector<NodeShare> read_allocation(capnp::List<schema::NodeAllocation>::Reader in);

struct ActorInfo {
  uint32_t uid = 0;
  std::string user_name;
  schema::ActorKind kind = schema::ActorKind::SYSTEM;
};

// Who/when/where of an event, stamped by its writer.
struct EventMeta {
  int64_t time_us = 0;
  uint32_t shard = 0;
  uint64_t epoch = 0;
  uint64_t job_id = 0;
  std::string node_name;
  ActorInfo actor;
  std::string command_id;
};

// An event under construction: fill body() then take bytes().
class EventBuilder {
 public:
  explicit EventBuilder(const EventMeta& meta);
  schema::Event::Body::Builder body() { return root_.getBody(); }
  schema::Header::Builder header() { return root_.getHeader(); }
  std::vector<uint8_t> bytes();

 private:
  capnp::MallocMessageBuilder message_;
  schema::Event::Builder root_;
};

// A decoded record. Copies the payload only when it is not 8-byte aligned.
class DecodedEvent {
 public:
  DecodedEvent(uint64_t offset, std::span<const uint8_t> payload);
  uint64_t offset() const { return offset_; }
  schema::Event::Reader event() const { return event_; }
  // The encoded event, 8-byte aligned.
  std::span<const uint8_t> payload() const { return payload_; }

 private:
  uint64_t offset_;
  kj::Array<capnp::word> aligned_copy_;
  capnp::FlatArrayMessageReader reader_;
  schema::Event::Reader event_;
  std::span<const uint8_t> payload_;
};

// The spec of a decoded JobSubmitted event, as a job record keeps it.
RecordedSpec record_spec(const DecodedEvent& submitted);
// A spec read elsewhere (an RPC answer), kept the same way.
RecordedSpec record_spec(schema::JobSpec::Reader spec);

// Reads a recorded spec in place, without decoding it into a JobSpec.
class RecordedSpecReader {
 public:
  explicit RecordedSpecReader(const RecordedSpec& spec);
  schema::JobSpec::Reader spec() const;

 private:
  std::vector<uint8_t> default_bytes_;  // for a spec that was never encoded
  std::optional<DecodedEvent> event_;
  std::optional<kj::ArrayInputStream> packed_input_;  // a packed (compacted) spec
  mutable std::optional<capnp::PackedMessageReader> packed_reader_;  // getRoot() is not const
};

}  // namespace cairn
