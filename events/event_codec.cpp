#include "events/event_codec.hpp"

#include <capnp/schema.h>
#include <capnp/serialize-packed.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "events/event_factory.hpp"
#include "events/log/event_log.hpp"
#include "events/submission_limits.hpp"

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

// Reading an event touches each of its words a few times; Cap'n Proto charges a list of
// empty structs one word per element, so a limit in proportion to the record keeps a few
// bytes from claiming millions of elements (found by fuzz_event: ~2 GB from 4 KB of records).
capnp::ReaderOptions reader_options(size_t payload_bytes) {
  uint64_t words = payload_bytes / sizeof(capnp::word);
  return capnp::ReaderOptions{std::max<uint64_t>(64 * 1024, 32 * words), 64};
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

void write_texts(capnp::List<capnp::Text>::Builder out, const std::vector<std::string>& texts) {
  for (size_t i = 0; i < texts.size(); ++i) out.set(static_cast<unsigned>(i), texts[i]);
}

std::vector<StageRequest> read_stages(capnp::List<schema::StagePath>::Reader list) {
  list = bounded_list(list);
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

// Environment blocks by content, shared while some spec holds them. Thread-safe:
// every thread that keeps records may compact them.
class EnvironmentPool {
 public:
  using Block = std::shared_ptr<const std::string>;

  Block intern(std::string block) { return find_or_add(block, &block); }
  // A block copied only when not pooled yet (compact()'s, kept by its thread for the next job).
  Block intern_copy(std::string_view block) { return find_or_add(block, nullptr); }

 private:
  // `owned`, when given, is moved into the pool instead of copying `block`.
  Block find_or_add(std::string_view block, std::string* owned) {
    size_t hash = std::hash<std::string_view>()(block);
    std::lock_guard lock(mutex_);
    if (++interned_ % 4096 == 0) sweep();
    auto& same_hash = pool_[hash];
    for (const auto& weak : same_hash)
      if (auto shared = weak.lock(); shared && *shared == block) return shared;
    auto shared = owned ? std::make_shared<const std::string>(std::move(*owned)) : std::make_shared<const std::string>(block);
    same_hash.push_back(shared);
    return shared;
  }

  void sweep() {
    for (auto it = pool_.begin(); it != pool_.end();) {
      std::erase_if(it->second, [](const auto& weak) { return weak.expired(); });
      it = it->second.empty() ? pool_.erase(it) : std::next(it);
    }
  }

  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<std::weak_ptr<const std::string>>> pool_;
  uint64_t interned_ = 0;
};

EnvironmentPool& environment_pool() {
  static EnvironmentPool pool;
  return pool;
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

void write_environment(schema::JobSpec::Builder out, const std::vector<std::string>& environment) {
  write_texts(out.initEnvironment(static_cast<unsigned>(environment.size())), environment);
}

namespace {

// The core's fields. A logged spec (write_spec) sets every one, as `cairn log dump --json` has
// always shown them; a lean view (write_spec_core) leaves empty texts and default structs unset.
void write_core_fields(schema::JobSpec::Builder out, const JobSpecCore& core, bool every_field) {
  out.setName(core.name);
  out.setPartition(core.partition);
  out.setUserName(core.user_name);
  out.setUid(core.uid);
  out.setGid(core.gid);
  if (every_field || !core.account.empty()) out.setAccount(core.account);
  out.setNumNodes(core.num_nodes);
  out.setNumTasks(core.num_tasks);
  out.setCpusPerTask(core.cpus_per_task);
  out.setMemPerNodeMb(core.mem_per_node_mb);
  out.setMemPerCpuMb(core.mem_per_cpu_mb);
  out.setTimeLimitSec(core.time_limit_sec);
  out.setRequeue(core.requeue);
  // read_spec_core keeps C++'s defaults for a struct not set.
  if (every_field || core.signal != 0 || core.signal_seconds_before != 0 || core.signal_batch_only) {
    auto signal = out.initSignal();
    signal.setSignal(core.signal);
    signal.setSecondsBefore(core.signal_seconds_before);
    signal.setBatchOnly(core.signal_batch_only);
  }
  out.setBeginTimeUs(core.begin_time_us);
  out.setHoldAtSubmit(core.hold_at_submit);
  out.setNice(core.nice);
  out.setExclusive(core.exclusive);
  if (every_field || core.burst_buffer != BurstBufferSpec{}) {
    auto bb = out.initBurstBuffer();
    bb.setPool(core.burst_buffer.pool);
    bb.setCapacityBytes(core.burst_buffer.capacity_bytes);
    write_stages(bb.initStageIn(static_cast<unsigned>(core.burst_buffer.stage_in.size())), core.burst_buffer.stage_in);
    write_stages(bb.initStageOut(static_cast<unsigned>(core.burst_buffer.stage_out.size())), core.burst_buffer.stage_out);
  }
  if (every_field || core.resubmit != ResubmitSpec{}) {
    auto resubmit = out.initResubmit();
    auto states = resubmit.initOnStates(static_cast<unsigned>(core.resubmit.on_states.size()));
    for (unsigned i = 0; i < core.resubmit.on_states.size(); ++i) states.set(i, core.resubmit.on_states[i]);
    auto codes = resubmit.initOnExitCodes(static_cast<unsigned>(core.resubmit.on_exit_codes.size()));
    for (unsigned i = 0; i < core.resubmit.on_exit_codes.size(); ++i) codes.set(i, core.resubmit.on_exit_codes[i]);
    resubmit.setMaxRestarts(core.resubmit.max_restarts);
    resubmit.setDelaySec(core.resubmit.delay_sec);
  }
  if (every_field || !core.dependency.empty()) out.setDependency(core.dependency);
  out.setKillOnInvalidDep(static_cast<uint8_t>(core.kill_on_invalid_dep));
  if (every_field || !core.features.empty()) out.setFeatures(core.features);
  if (every_field || !core.req_nodes.empty()) write_texts(out.initReqNodes(static_cast<unsigned>(core.req_nodes.size())), core.req_nodes);
  if (every_field || !core.exc_nodes.empty()) write_texts(out.initExcNodes(static_cast<unsigned>(core.exc_nodes.size())), core.exc_nodes);
  out.setInteractive(core.interactive);
  if (every_field || !core.licenses.empty()) out.setLicenses(core.licenses);
  if (every_field || !core.reservation.empty()) out.setReservation(core.reservation);
  if (every_field || !core.mail_type.empty()) out.setMailType(core.mail_type);
  if (every_field || !core.gres.tres_per_node.empty()) out.setTresPerNode(core.gres.tres_per_node);
  if (every_field || !core.gres.tres_per_job.empty()) out.setTresPerJob(core.gres.tres_per_job);
  if (every_field || !core.gres.tres_per_task.empty()) out.setTresPerTask(core.gres.tres_per_task);
  if (every_field || !core.cpus_per_tres.empty()) out.setCpusPerTres(core.cpus_per_tres);
  if (every_field || !core.mem_per_tres.empty()) out.setMemPerTres(core.mem_per_tres);
  if (every_field || !core.tres_bind.empty()) out.setTresBind(core.tres_bind);
  out.setDeadlineUs(core.deadline_us);
  if (every_field || !core.qos.empty()) out.setQos(core.qos);
  out.setNodesForGpus(core.nodes_for_gpus);
}

}  // namespace

// Declared with the lean job views (events/record_codec.hpp).
void write_spec_core(schema::JobSpec::Builder out, const JobSpecCore& core) { write_core_fields(out, core, false); }

// The core, then the rest of the spec (read_spec's order).
void write_spec(schema::JobSpec::Builder out, const JobSpec& spec) {
  write_core_fields(out, spec, true);
  out.setScript(spec.script);
  out.setCommand(spec.command);
  out.setWorkDir(spec.work_dir);
  out.setStdoutPattern(spec.stdout_pattern);
  out.setStderrPattern(spec.stderr_pattern);
  out.setOpenMode(to_wire(spec.open_mode));
  write_environment(out, spec.environment);
  out.setSubmitHost(spec.submit_host);
  out.setArraySpec(spec.array_spec);
  out.setComment(spec.comment);
  out.setMailUser(spec.mail_user);
  out.setWckey(spec.wckey);
  out.setNtasksPerNode(spec.ntasks_per_node);
  out.setTmpDiskMb(spec.tmp_disk_mb);
  out.setStdinPattern(spec.stdin_pattern);
  const TaskLayout& layout = spec.task_layout;
  if (layout != TaskLayout{}) {  // older specs and most jobs carry none
    auto wire = out.initTaskLayout();
    wire.setHint(layout.hint);
    wire.setDistribution(layout.distribution);
    wire.setMemBind(layout.mem_bind);
    wire.setThreadsPerCore(layout.threads_per_core);
    wire.setNtasksPerCore(layout.ntasks_per_core);
    wire.setNtasksPerSocket(layout.ntasks_per_socket);
    wire.setSocketsPerNode(layout.sockets_per_node);
    wire.setCoresPerSocket(layout.cores_per_socket);
  }
}

void write_usage(schema::ResourceUsage::Builder out, const ResourceUsage& usage) {
  out.setMeasured(usage.measured);
  out.setTasks(usage.tasks);
  out.setMaxRssBytes(usage.max_rss_bytes);
  out.setMaxRssNode(usage.max_rss_node);
  out.setMaxRssTask(usage.max_rss_task);
  out.setTotalRssBytes(usage.total_rss_bytes);
  out.setUserCpuUs(usage.user_cpu_us);
  out.setSystemCpuUs(usage.system_cpu_us);
  out.setMinCpuUs(usage.min_cpu_us);
  out.setMinCpuNode(usage.min_cpu_node);
  out.setMinCpuTask(usage.min_cpu_task);
  out.setMaxReadBytes(usage.max_read_bytes);
  out.setMaxReadNode(usage.max_read_node);
  out.setMaxReadTask(usage.max_read_task);
  out.setTotalReadBytes(usage.total_read_bytes);
  out.setMaxWriteBytes(usage.max_write_bytes);
  out.setMaxWriteNode(usage.max_write_node);
  out.setMaxWriteTask(usage.max_write_task);
  out.setTotalWriteBytes(usage.total_write_bytes);
  out.setCpuPressureUs(usage.cpu_pressure_us);
  out.setMemoryPressureUs(usage.memory_pressure_us);
  out.setIoPressureUs(usage.io_pressure_us);
  out.setMaxVmBytes(usage.max_vm_bytes);
  out.setMaxVmNode(usage.max_vm_node);
  out.setMaxVmTask(usage.max_vm_task);
  out.setTotalVmBytes(usage.total_vm_bytes);
  out.setMaxPages(usage.max_pages);
  out.setMaxPagesNode(usage.max_pages_node);
  out.setMaxPagesTask(usage.max_pages_task);
  out.setTotalPages(usage.total_pages);
  out.setMaxCpuUs(usage.max_cpu_us);
  out.setMaxCpuNode(usage.max_cpu_node);
  out.setMaxCpuTask(usage.max_cpu_task);
}

ResourceUsage read_usage(schema::ResourceUsage::Reader in) {
  ResourceUsage usage;
  usage.measured = in.getMeasured();
  usage.tasks = in.getTasks();
  usage.max_rss_bytes = in.getMaxRssBytes();
  usage.max_rss_node = in.getMaxRssNode();
  usage.max_rss_task = in.getMaxRssTask();
  usage.total_rss_bytes = in.getTotalRssBytes();
  usage.user_cpu_us = in.getUserCpuUs();
  usage.system_cpu_us = in.getSystemCpuUs();
  usage.min_cpu_us = in.getMinCpuUs();
  usage.min_cpu_node = in.getMinCpuNode();
  usage.min_cpu_task = in.getMinCpuTask();
  usage.max_read_bytes = in.getMaxReadBytes();
  usage.max_read_node = in.getMaxReadNode();
  usage.max_read_task = in.getMaxReadTask();
  usage.total_read_bytes = in.getTotalReadBytes();
  usage.max_write_bytes = in.getMaxWriteBytes();
  usage.max_write_node = in.getMaxWriteNode();
  usage.max_write_task = in.getMaxWriteTask();
  usage.total_write_bytes = in.getTotalWriteBytes();
  usage.cpu_pressure_us = in.getCpuPressureUs();
  usage.memory_pressure_us = in.getMemoryPressureUs();
  usage.io_pressure_us = in.getIoPressureUs();
  usage.max_vm_bytes = in.getMaxVmBytes();
  usage.max_vm_node = in.getMaxVmNode();
  usage.max_vm_task = in.getMaxVmTask();
  usage.total_vm_bytes = in.getTotalVmBytes();
  usage.max_pages = in.getMaxPages();
  usage.max_pages_node = in.getMaxPagesNode();
  usage.max_pages_task = in.getMaxPagesTask();
  usage.total_pages = in.getTotalPages();
  usage.max_cpu_us = in.getMaxCpuUs();
  usage.max_cpu_node = in.getMaxCpuNode();
  usage.max_cpu_task = in.getMaxCpuTask();
  return usage;
}

void write_allocation(capnp::List<schema::NodeAllocation>::Builder out, const std::vector<NodeShare>& nodes) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    out[i].setNode(nodes[i].node);
    out[i].setCpus(nodes[i].cpus);
    out[i].setMemMb(nodes[i].mem_mb);
    if (!nodes[i].gres.empty()) out[i].setGres(nodes[i].gres);
  }
}

std::vector<NodeShare> read_allocation(capnp::List<schema::NodeAllocation>::Reader in) {
  std::vector<NodeShare> out;
  out.reserve(in.size());
  for (auto node : in) out.push_back({node.getNode(), node.getCpus(), node.getMemMb(), node.getGres()});
  return out;
}

JobSpecCore read_spec_core(schema::JobSpec::Reader in) {
  JobSpecCore core;
  core.name = in.getName();
  core.partition = in.getPartition();
  core.user_name = in.getUserName();
  core.uid = in.getUid();
  core.gid = in.getGid();
  core.account = in.getAccount();
  core.num_nodes = in.getNumNodes();
  core.num_tasks = in.getNumTasks();
  core.cpus_per_task = in.getCpusPerTask();
  core.mem_per_node_mb = in.getMemPerNodeMb();
  core.mem_per_cpu_mb = in.getMemPerCpuMb();
  core.time_limit_sec = in.getTimeLimitSec();
  core.requeue = in.getRequeue();
  if (in.hasSignal()) {
    auto signal = in.getSignal();
    core.signal = signal.getSignal();
    core.signal_seconds_before = signal.getSecondsBefore();
    core.signal_batch_only = signal.getBatchOnly();
  }
  core.begin_time_us = in.getBeginTimeUs();
  core.hold_at_submit = in.getHoldAtSubmit();
  core.nice = in.getNice();
  core.exclusive = in.getExclusive();
  if (in.hasBurstBuffer()) {
    auto bb = in.getBurstBuffer();
    core.burst_buffer.pool = bb.getPool();
    core.burst_buffer.capacity_bytes = bb.getCapacityBytes();
    if (bb.hasStageIn()) core.burst_buffer.stage_in = read_stages(bb.getStageIn());
    if (bb.hasStageOut()) core.burst_buffer.stage_out = read_stages(bb.getStageOut());
  }
  if (in.hasResubmit()) {
    auto resubmit = in.getResubmit();
    for (auto state : bounded_list(resubmit.getOnStates())) core.resubmit.on_states.push_back(state);
    for (auto code : bounded_list(resubmit.getOnExitCodes())) core.resubmit.on_exit_codes.push_back(code);
    core.resubmit.max_restarts = resubmit.getMaxRestarts();
    core.resubmit.delay_sec = resubmit.getDelaySec();
  }
  core.dependency = in.getDependency();
  core.kill_on_invalid_dep = in.getKillOnInvalidDep() <= 2 ? static_cast<KillOnInvalidDep>(in.getKillOnInvalidDep())
                                                           : KillOnInvalidDep::unset;
  core.features = in.getFeatures();
  if (in.hasReqNodes()) core.req_nodes = read_texts(bounded_list(in.getReqNodes()));
  if (in.hasExcNodes()) core.exc_nodes = read_texts(bounded_list(in.getExcNodes()));
  core.interactive = in.getInteractive();
  core.licenses = in.getLicenses();
  core.reservation = in.getReservation();
  core.mail_type = in.getMailType();
  core.gres = {in.getTresPerNode(), in.getTresPerJob(), in.getTresPerTask()};
  core.cpus_per_tres = in.getCpusPerTres();
  core.mem_per_tres = in.getMemPerTres();
  core.tres_bind = in.getTresBind();
  core.deadline_us = in.getDeadlineUs();
  core.qos = in.getQos();
  core.nodes_for_gpus = in.getNodesForGpus();
  return core;
}

namespace {

void check_texts(capnp::List<capnp::Text>::Reader list) {
  for (auto text : bounded_list(list)) (void)text;
}

}  // namespace

void check_spec(schema::JobSpec::Reader in) {
  // Deep copies (compact(), query answers) follow every pointer, of known fields or not:
  // totalSize() walks them all, and a capability has no meaning in a stored spec.
  if (in.totalSize().capCount != 0)
    throw kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::heapString("a job spec holds a capability"));
  for (auto text : {in.getName(), in.getPartition(), in.getUserName(), in.getAccount(), in.getScript(),
                    in.getCommand(), in.getWorkDir(), in.getStdoutPattern(), in.getStderrPattern(),
                    in.getSubmitHost(), in.getDependency(), in.getArraySpec(), in.getComment(), in.getFeatures(),
                    in.getMailType(), in.getMailUser(), in.getLicenses(), in.getWckey(), in.getReservation(),
                    in.getTresPerNode(), in.getTresPerJob(), in.getTresPerTask(), in.getCpusPerTres(),
                    in.getMemPerTres(), in.getTresBind()})
    (void)text;
  auto layout = in.getTaskLayout();
  for (auto text : {layout.getHint(), layout.getDistribution(), layout.getMemBind()}) (void)text;
  check_texts(in.getEnvironment());
  check_texts(in.getReqNodes());
  check_texts(in.getExcNodes());
  (void)in.getSignal();
  auto bb = in.getBurstBuffer();
  (void)bb.getPool();
  for (auto stages : {bb.getStageIn(), bb.getStageOut()})
    for (auto stage : bounded_list(stages)) (void)stage.getSource(), (void)stage.getDestination();
  auto resubmit = in.getResubmit();
  for (auto state : bounded_list(resubmit.getOnStates())) (void)state;
  for (auto code : bounded_list(resubmit.getOnExitCodes())) (void)code;
}

JobSpec read_spec(schema::JobSpec::Reader in) {
  JobSpec spec;
  static_cast<JobSpecCore&>(spec) = read_spec_core(in);
  spec.script = in.getScript();
  spec.command = in.getCommand();
  spec.work_dir = in.getWorkDir();
  spec.stdout_pattern = in.getStdoutPattern();
  spec.stderr_pattern = in.getStderrPattern();
  spec.open_mode = from_wire(in.getOpenMode());
  spec.environment = read_texts(bounded_list(in.getEnvironment()));
  spec.submit_host = in.getSubmitHost();
  spec.array_spec = in.getArraySpec();
  spec.comment = in.getComment();
  spec.mail_user = in.getMailUser();
  spec.wckey = in.getWckey();
  spec.ntasks_per_node = in.getNtasksPerNode();
  spec.tmp_disk_mb = in.getTmpDiskMb();
  spec.stdin_pattern = in.getStdinPattern();
  if (in.hasTaskLayout()) {
    auto layout = in.getTaskLayout();
    spec.task_layout.hint = layout.getHint();
    spec.task_layout.distribution = layout.getDistribution();
    spec.task_layout.mem_bind = layout.getMemBind();
    spec.task_layout.threads_per_core = layout.getThreadsPerCore();
    spec.task_layout.ntasks_per_core = layout.getNtasksPerCore();
    spec.task_layout.ntasks_per_socket = layout.getNtasksPerSocket();
    spec.task_layout.sockets_per_node = layout.getSocketsPerNode();
    spec.task_layout.cores_per_socket = layout.getCoresPerSocket();
  }
  return spec;
}

RecordedSpec record_spec(const DecodedEvent& submitted) {
  auto bytes = submitted.payload();
  size_t words = bytes.size() / sizeof(uint64_t);
  auto copy = std::make_shared_for_overwrite<uint64_t[]>(words);
  std::memcpy(copy.get(), bytes.data(), words * sizeof(uint64_t));
  return {std::move(copy), words};
}

RecordedSpec record_spec(schema::JobSpec::Reader spec) {
  // One segment sized for the spec, written straight into the record's words: a listing
  // decodes one spec a job (squeue of 100,000 jobs), and each copy or allocation counts.
  capnp::MallocMessageBuilder message(static_cast<unsigned>(spec.totalSize().wordCount + 64));
  auto event = message.initRoot<schema::Event>();
  event.initHeader().initActor();
  event.getBody().initJobSubmitted().setSpec(spec);
  size_t words = capnp::computeSerializedSizeInWords(message);
  auto copy = std::make_shared_for_overwrite<uint64_t[]>(words);
  kj::ArrayOutputStream out(kj::arrayPtr(reinterpret_cast<kj::byte*>(copy.get()), words * sizeof(uint64_t)));
  capnp::writeMessage(out, message);
  return {std::move(copy), words};
}

RecordedSpec::RecordedSpec(const JobSpec& spec) {
  auto bytes = make::job_submitted({}, 0, spec);
  *this = record_spec(DecodedEvent(0, bytes));
}

namespace {

// The lock that publishes a spec's decoded core, one of a few by its address: two threads
// reading the same undecoded record (the query view and its reader) keep one core.
std::mutex& decode_lock(const void* spec) {
  static std::mutex locks[64];
  return locks[(reinterpret_cast<uintptr_t>(spec) >> 4) % std::size(locks)];
}

}  // namespace

RecordedSpec::RecordedSpec(const RecordedSpec& other)
    : words_(other.words_),
      word_count_(other.word_count_),
      packed_size_(other.packed_size_),
      packed_(other.packed_),
      environment_(other.environment_) {
  share_core_of(other);
}

RecordedSpec::RecordedSpec(RecordedSpec&& other) noexcept
    : words_(std::move(other.words_)),
      word_count_(other.word_count_),
      packed_size_(other.packed_size_),
      packed_(other.packed_),
      core_(std::move(other.core_)),
      decoded_(other.decoded_.exchange(nullptr, std::memory_order_relaxed)),
      environment_(std::move(other.environment_)) {}

RecordedSpec& RecordedSpec::operator=(const RecordedSpec& other) {
  if (this == &other) return *this;
  return *this = RecordedSpec(other);
}

RecordedSpec& RecordedSpec::operator=(RecordedSpec&& other) noexcept {
  if (this == &other) return *this;
  words_ = std::move(other.words_);
  word_count_ = other.word_count_;
  packed_size_ = other.packed_size_;
  packed_ = other.packed_;
  core_ = std::move(other.core_);
  decoded_.store(other.decoded_.exchange(nullptr, std::memory_order_relaxed), std::memory_order_release);
  environment_ = std::move(other.environment_);
  return *this;
}

// A copy shares the core only if it was decoded before the copy (another thread may be
// decoding it now: core_ is read only once published).
void RecordedSpec::share_core_of(const RecordedSpec& other) {
  if (const JobSpecCore* decoded = other.decoded_.load(std::memory_order_acquire)) {
    core_ = other.core_;
    decoded_.store(decoded, std::memory_order_release);
  }
}

const JobSpecCore& RecordedSpec::publish_core(std::shared_ptr<const JobSpecCore> core) const {
  std::lock_guard lock(decode_lock(this));
  if (const JobSpecCore* decoded = decoded_.load(std::memory_order_relaxed)) return *decoded;
  core_ = std::move(core);
  decoded_.store(core_.get(), std::memory_order_release);
  return *core_;
}

// Decoded outside the lock: two threads that race here both decode, and one core is kept.
const JobSpecCore& RecordedSpec::decode_core() const {
  static const JobSpecCore kDefault;
  if (event_bytes().empty()) return kDefault;
  return publish_core(std::make_shared<const JobSpecCore>(read_spec_core(RecordedSpecReader(*this).spec())));
}

std::vector<std::string> split_environment(const std::string& block) {
  std::vector<std::string> entries;
  for (size_t at = 0; at < block.size();) {
    size_t end = block.find('\0', at);
    entries.emplace_back(block, at, end - at);
    at = end + 1;
  }
  return entries;
}

std::string RecordedSpec::partition() const {
  // A packed spec would be unpacked whole: decoded once and kept, as the scheduler would.
  if (core_decoded() || packed_) return core().partition;
  if (event_bytes().empty()) return {};
  return RecordedSpecReader(*this).spec().getPartition();
}

JobSpec RecordedSpec::full() const {
  if (event_bytes().empty()) return {};
  JobSpec spec = read_spec(RecordedSpecReader(*this).spec());
  if (environment_) spec.environment = split_environment(*environment_);
  return spec;
}

namespace {

// compact()'s temporaries, kept by each thread that compacts (the folding ones) for the next
// job: an environment block, a message's first segment and the packed output. Made and freed
// for every job, they left holes between the records that outlive them in malloc's arenas
// (~10% of the controller's RSS growth per pending job; docs/decisions.md, branch live-mem).
constexpr size_t kPackSegmentWords = 4096;  // a larger spec grows into more segments, as before

kj::ArrayPtr<capnp::word> pack_segment() {
  thread_local std::unique_ptr<capnp::word[]> words;
  if (!words) words = std::make_unique<capnp::word[]>(kPackSegmentWords);  // zeroed, as capnp wants it
  return kj::arrayPtr(words.get(), kPackSegmentWords);
}

// A BufferedOutputStream over a buffer that outlives it: written from the start, grown when full.
class ReusedOutput final : public kj::BufferedOutputStream {
 public:
  explicit ReusedOutput(std::vector<kj::byte>& buffer) : buffer_(buffer) {
    if (buffer_.size() < 4096) buffer_.resize(4096);
  }
  kj::ArrayPtr<kj::byte> getWriteBuffer() override { return kj::arrayPtr(buffer_.data() + used_, buffer_.size() - used_); }
  void write(const void* data, size_t size) override {
    if (data == buffer_.data() + used_) {  // written in place, into getWriteBuffer()
      used_ += size;
      return;
    }
    if (buffer_.size() - used_ < size) buffer_.resize(std::max(buffer_.size() * 2, used_ + size));
    std::memcpy(buffer_.data() + used_, data, size);
    used_ += size;
  }
  std::span<const kj::byte> written() const { return {buffer_.data(), used_}; }

 private:
  std::vector<kj::byte>& buffer_;
  size_t used_ = 0;
};

}  // namespace

void RecordedSpec::compact() {
  if (event_bytes().empty() || packed_) return;
  thread_local std::string block;  // one allocation, where a decoded list would take one per entry
  thread_local std::vector<kj::byte> packed_buffer;
  block.clear();
  ReusedOutput packed(packed_buffer);
  {
    RecordedSpecReader reader(*this);
    auto wire = reader.spec();
    if (!core_decoded()) publish_core(std::make_shared<const JobSpecCore>(read_spec_core(wire)));
    for (auto entry : wire.getEnvironment()) block.append(entry.cStr(), entry.size()).push_back('\0');
    capnp::MallocMessageBuilder message(pack_segment());
    auto submitted = message.initRoot<schema::Event>().getBody().initJobSubmitted();
    submitted.setSpec(wire);
    submitted.getSpec().disownEnvironment();
    capnp::writePackedMessage(packed, message);
  }
  auto bytes = packed.written();
  size_t words = (bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t);
  auto copy = std::make_shared<uint64_t[]>(words);  // zeroed: the padding is defined
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  words_ = std::move(copy);
  word_count_ = words;
  packed_size_ = bytes.size();
  packed_ = true;
  environment_ = environment_pool().intern_copy(block);
  // A rare huge spec's room is not kept for the thread's life.
  constexpr size_t kKeptScratchBytes = 1 << 20;
  if (block.capacity() > kKeptScratchBytes) std::string().swap(block);
  if (packed_buffer.size() > kKeptScratchBytes) std::vector<kj::byte>().swap(packed_buffer);
}

std::shared_ptr<const std::string> intern_environment_block(std::string block) {
  return environment_pool().intern(std::move(block));
}

namespace {

// Restored specs' bytes (a snapshot's load), side by side in blocks of 1 MiB: one allocation per
// block instead of one per job (a quarter of a million for a large history). Each spec holds its
// block (an aliasing shared_ptr); a block is freed once every spec restored into it is gone
// (jobs purged or compacted), and jobs are purged roughly in id order, as they were restored.
// Only the specs hold a block: a decode on the same thread goes on filling it while it lives.
class RestoredSpecBlocks {
 public:
  std::shared_ptr<const uint64_t[]> copy(std::span<const uint8_t> bytes) {
    size_t words = (bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t);
    if (words > kBlockWords / 16) return place(std::make_shared_for_overwrite<uint64_t[]>(words), bytes);
    std::shared_ptr<uint64_t[]> block = block_.lock();
    if (!block || used_ + words > kBlockWords) {
      block = std::shared_ptr<uint64_t[]>(new uint64_t[kBlockWords]);  // apart from its count: block_ keeps no memory
      block_ = block;
      used_ = 0;
    }
    used_ += words;
    return place(std::shared_ptr<uint64_t[]>(block, block.get() + used_ - words), bytes);
  }

 private:
  static constexpr size_t kBlockWords = (1 << 20) / sizeof(uint64_t);

  static std::shared_ptr<const uint64_t[]> place(std::shared_ptr<uint64_t[]> words, std::span<const uint8_t> bytes) {
    words[(bytes.size() - 1) / sizeof(uint64_t)] = 0;  // the padding of a packed spec is defined
    std::memcpy(words.get(), bytes.data(), bytes.size());
    return words;
  }

  std::weak_ptr<uint64_t[]> block_;
  size_t used_ = 0;
};

thread_local RestoredSpecBlocks restored_spec_blocks;

}  // namespace

RecordedSpec RecordedSpec::restore(std::span<const uint8_t> event_bytes, bool packed,
                                   std::shared_ptr<const std::string> environment) {
  RecordedSpec spec;
  if (event_bytes.empty()) return spec;
  spec.words_ = restored_spec_blocks.copy(event_bytes);
  spec.word_count_ = (event_bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t);
  if (packed) {
    spec.packed_ = true;
    spec.packed_size_ = event_bytes.size();
    spec.environment_ = environment ? std::move(environment) : environment_pool().intern({});
  }
  return spec;
}

RecordedSpecReader::RecordedSpecReader(const RecordedSpec& spec) {
  auto bytes = spec.event_bytes();
  if (spec.packed()) {
    packed_input_.emplace(kj::ArrayPtr<const kj::byte>(bytes.data(), bytes.size()));
    packed_reader_.emplace(*packed_input_);
    return;
  }
  if (bytes.empty()) {
    default_bytes_ = make::job_submitted({}, 0, JobSpec{});
    bytes = default_bytes_;
  }
  event_.emplace(0, bytes);
}

schema::JobSpec::Reader RecordedSpecReader::spec() const {
  if (packed_reader_) return packed_reader_->getRoot<schema::Event>().getBody().getJobSubmitted().getSpec();
  return event_->event().getBody().getJobSubmitted().getSpec();
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
      reader_(aligned_copy_ == nullptr ? as_words(payload) : aligned_copy_.asPtr(), reader_options(payload.size())),
      event_(reader_.getRoot<schema::Event>()),
      payload_(aligned_copy_ == nullptr ? payload
                                        : std::span<const uint8_t>(aligned_copy_.asBytes().begin(),
                                                                   aligned_copy_.asBytes().size())) {}

}  // namespace cairn
