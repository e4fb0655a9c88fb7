#include "events/event_codec.hpp"

#include <capnp/schema.h>

#include <cctype>
#include <cstring>
#include <mutex>

#include "events/event_log.hpp"

namespace cairn {
namespace {

capnp::StructSchema body_schema() { return capnp::Schema::from<schema::Event::Body>(); }

// Kind names come from the schema itself: "jobSubmitted" -> "JobSubmitted".
const std::vector<std::string>& kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (auto field : body_schema().getUnionFields()) {
      std::string name = field.getProto().getName();
      name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
      size_t ordinal = field.getProto().getDiscriminantValue();
      if (out.size() <= ordinal) out.resize(ordinal + 1);
      out[ordinal] = name;
    }
    return out;
  }();
  return names;
}

kj::ArrayPtr<const capnp::word> as_words(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const capnp::word*>(bytes.data()), bytes.size() / sizeof(capnp::word)};
}

bool aligned(std::span<const uint8_t> bytes) {
  return reinterpret_cast<uintptr_t>(bytes.data()) % alignof(capnp::word) == 0;
}

kj::Array<capnp::word> copy_if_misaligned(uint64_t offset, std::span<const uint8_t> payload) {
  if (payload.size() % sizeof(capnp::word) != 0)
    throw LogError("record at offset " + std::to_string(offset) + " is not a Cap'n Proto message");
  if (aligned(payload)) return nullptr;
  auto words = kj::heapArray<capnp::word>(payload.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), payload.data(), words.size() * sizeof(capnp::word));
  return words;
}

template <typename List>
std::vector<std::string> read_texts(List list) {
  std::vector<std::string> out;
  out.reserve(list.size());
  for (auto text : list) out.emplace_back(text.cStr(), text.size());
  return out;
}

std::vector<StageRequest> read_stages(capnp::List<schema::StagePath>::Reader list) {
  std::vector<StageRequest> out;
  for (auto stage : list) out.push_back({stage.getSource(), stage.getDestination()});
  return out;
}

void write_stages(capnp::List<schema::StagePath>::Builder out, const std::vector<StageRequest>& stages) {
  for (size_t i = 0; i < stages.size(); ++i) {
    out[i].setSource(stages[i].source);
    out[i].setDestination(stages[i].destination);
  }
}

schema::OpenMode to_wire(OpenMode mode) {
  switch (mode) {
    case OpenMode::append: return schema::OpenMode::APPEND;
    case OpenMode::truncate: return schema::OpenMode::TRUNCATE;
    default: return schema::OpenMode::DEFAULT;
  }
}

OpenMode from_wire(schema::OpenMode mode) {
  switch (mode) {
    case schema::OpenMode::APPEND: return OpenMode::append;
    case schema::OpenMode::TRUNCATE: return OpenMode::truncate;
    default: return OpenMode::unset;
  }
}

}  // namespace

std::string kind_name(EventKind kind) {
  const auto& names = kind_names();
  auto ordinal = static_cast<size_t>(kind);
  if (ordinal < names.size() && !names[ordinal].empty()) return names[ordinal];
  return "Unknown(" + std::to_string(ordinal) + ")";
}

bool is_known_kind(EventKind kind) {
  const auto& names = kind_names();
  auto ordinal = static_cast<size_t>(kind);
  return ordinal < names.size() && !names[ordinal].empty();
}

bool parse_kind(std::string_view name, EventKind& kind) {
  const auto& names = kind_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& candidate = names[i];
    if (candidate.size() != name.size()) continue;
    bool same = true;
    for (size_t c = 0; c < name.size() && same; ++c)
      same = std::tolower(static_cast<unsigned char>(candidate[c])) == std::tolower(static_cast<unsigned char>(name[c]));
    if (same && !candidate.empty()) {
      kind = static_cast<EventKind>(i);
      return true;
    }
  }
  return false;
}

void write_spec(schema::JobSpec::Builder out, const JobSpec& spec) {
  out.setName(spec.name);
  out.setPartition(spec.partition);
  out.setUserName(spec.user_name);
  out.setUid(spec.uid);
  out.setGid(spec.gid);
  out.setAccount(spec.account);
  out.setNumNodes(spec.num_nodes);
  out.setNumTasks(spec.num_tasks);
  out.setCpusPerTask(spec.cpus_per_task);
  out.setMemPerNodeMb(spec.mem_per_node_mb);
  out.setMemPerCpuMb(spec.mem_per_cpu_mb);
  out.setTimeLimitSec(spec.time_limit_sec);
  out.setScript(spec.script);
  out.setCommand(spec.command);
  out.setWorkDir(spec.work_dir);
  out.setStdoutPattern(spec.stdout_pattern);
  out.setStderrPattern(spec.stderr_pattern);
  out.setOpenMode(to_wire(spec.open_mode));
  auto env = out.initEnvironment(static_cast<unsigned>(spec.environment.size()));
  for (size_t i = 0; i < spec.environment.size(); ++i) env.set(i, spec.environment[i]);
  out.setRequeue(spec.requeue);
  auto signal = out.initSignal();
  signal.setSignal(spec.signal);
  signal.setSecondsBefore(spec.signal_seconds_before);
  signal.setBatchOnly(spec.signal_batch_only);
  out.setBeginTimeUs(spec.begin_time_us);
  out.setHoldAtSubmit(spec.hold_at_submit);
  out.setNice(spec.nice);
  auto bb = out.initBurstBuffer();
  bb.setPool(spec.burst_buffer.pool);
  bb.setCapacityBytes(spec.burst_buffer.capacity_bytes);
  write_stages(bb.initStageIn(static_cast<unsigned>(spec.burst_buffer.stage_in.size())), spec.burst_buffer.stage_in);
  write_stages(bb.initStageOut(static_cast<unsigned>(spec.burst_buffer.stage_out.size())), spec.burst_buffer.stage_out);
  auto resubmit = out.initResubmit();
  auto states = resubmit.initOnStates(static_cast<unsigned>(spec.resubmit.on_states.size()));
  for (size_t i = 0; i < spec.resubmit.on_states.size(); ++i) states.set(i, spec.resubmit.on_states[i]);
  auto codes = resubmit.initOnExitCodes(static_cast<unsigned>(spec.resubmit.on_exit_codes.size()));
  for (size_t i = 0; i < spec.resubmit.on_exit_codes.size(); ++i) codes.set(i, spec.resubmit.on_exit_codes[i]);
  resubmit.setMaxRestarts(spec.resubmit.max_restarts);
  resubmit.setDelaySec(spec.resubmit.delay_sec);
  out.setSubmitHost(spec.submit_host);
  out.setDependency(spec.dependency);
  out.setArraySpec(spec.array_spec);
  out.setExclusive(spec.exclusive);
  out.setComment(spec.comment);
  out.setKillOnInvalidDep(static_cast<uint8_t>(spec.kill_on_invalid_dep));
}

JobSpec read_spec(schema::JobSpec::Reader in) {
  JobSpec spec;
  spec.name = in.getName();
  spec.partition = in.getPartition();
  spec.user_name = in.getUserName();
  spec.uid = in.getUid();
  spec.gid = in.getGid();
  spec.account = in.getAccount();
  spec.num_nodes = in.getNumNodes();
  spec.num_tasks = in.getNumTasks();
  spec.cpus_per_task = in.getCpusPerTask();
  spec.mem_per_node_mb = in.getMemPerNodeMb();
  spec.mem_per_cpu_mb = in.getMemPerCpuMb();
  spec.time_limit_sec = in.getTimeLimitSec();
  spec.script = in.getScript();
  spec.command = in.getCommand();
  spec.work_dir = in.getWorkDir();
  spec.stdout_pattern = in.getStdoutPattern();
  spec.stderr_pattern = in.getStderrPattern();
  spec.open_mode = from_wire(in.getOpenMode());
  spec.environment = read_texts(in.getEnvironment());
  spec.requeue = in.getRequeue();
  auto signal = in.getSignal();
  spec.signal = signal.getSignal();
  spec.signal_seconds_before = signal.getSecondsBefore();
  spec.signal_batch_only = signal.getBatchOnly();
  spec.begin_time_us = in.getBeginTimeUs();
  spec.hold_at_submit = in.getHoldAtSubmit();
  spec.nice = in.getNice();
  auto bb = in.getBurstBuffer();
  spec.burst_buffer.pool = bb.getPool();
  spec.burst_buffer.capacity_bytes = bb.getCapacityBytes();
  spec.burst_buffer.stage_in = read_stages(bb.getStageIn());
  spec.burst_buffer.stage_out = read_stages(bb.getStageOut());
  auto resubmit = in.getResubmit();
  for (auto state : resubmit.getOnStates()) spec.resubmit.on_states.push_back(state);
  for (auto code : resubmit.getOnExitCodes()) spec.resubmit.on_exit_codes.push_back(code);
  spec.resubmit.max_restarts = resubmit.getMaxRestarts();
  spec.resubmit.delay_sec = resubmit.getDelaySec();
  spec.submit_host = in.getSubmitHost();
  spec.dependency = in.getDependency();
  spec.array_spec = in.getArraySpec();
  spec.exclusive = in.getExclusive();
  spec.comment = in.getComment();
  spec.kill_on_invalid_dep = in.getKillOnInvalidDep() <= 2 ? static_cast<KillOnInvalidDep>(in.getKillOnInvalidDep())
                                                           : KillOnInvalidDep::unset;
  return spec;
}

// A small first segment: events are ~100-1000 bytes and MallocMessageBuilder zeroes it.
EventBuilder::EventBuilder(const EventMeta& meta) : message_(128), root_(message_.initRoot<schema::Event>()) {
  auto header = root_.initHeader();
  header.setTimeUs(meta.time_us);
  header.setShard(meta.shard);
  header.setEpoch(meta.epoch);
  header.setJobId(meta.job_id);
  header.setNodeName(meta.node_name);
  auto actor = header.initActor();
  actor.setUid(meta.actor.uid);
  actor.setUserName(meta.actor.user_name);
  actor.setKind(meta.actor.kind);
  header.setCommandId(meta.command_id);
}

std::vector<uint8_t> EventBuilder::bytes() {
  auto words = capnp::messageToFlatArray(message_);
  auto chars = words.asBytes();
  return {chars.begin(), chars.end()};
}

DecodedEvent::DecodedEvent(uint64_t offset, std::span<const uint8_t> payload)
    : offset_(offset),
      aligned_copy_(copy_if_misaligned(offset, payload)),
      reader_(aligned_copy_ == nullptr ? as_words(payload) : aligned_copy_.asPtr(),
              capnp::ReaderOptions{64ull << 20, 64}),
      event_(reader_.getRoot<schema::Event>()) {}

}  // namespace cairn
