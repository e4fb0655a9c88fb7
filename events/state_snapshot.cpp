#include "events/state_snapshot.hpp"

#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <kj/io.h>
#include <kj/exception.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "events/record_codec.hpp"
#include "events/reservation_codec.hpp"
#include "capnp/snapshot.capnp.h"
#include "events/crc32c.hpp"
#include "events/two_ended_claims.hpp"

namespace cairn {
namespace {

// "CSNP" and the CRC32C of the packed message that follows.
constexpr char kMagic[4] = {'C', 'S', 'N', 'P'};
constexpr size_t kHeaderBytes = 8;

// Jobs come in id order: each goes at the end of the map.
void add_job(ClusterState& state, JobRecord record) {
  uint64_t id = record.id;
  track_unfinished(state, state.jobs.emplace_hint(state.jobs.end(), id, std::move(record))->second);
}

// Where read_jobs puts a range of jobs: after the jobs already in the state, or before them
// (the range precedes them all: chunks claimed from the back).
enum class Place { after, before };

// Below this many jobs a snapshot's jobs are read on one thread.
constexpr unsigned kJobsForTwoThreads = 20'000;
// Jobs a thread claims at a time (TwoEndedClaims): the two threads end within one chunk's time.
constexpr unsigned kJobsPerClaim = 2'048;

// The unfinished jobs of a range, in id order, with their records' addresses: added to the
// state's UnfinishedJobs once every range is in place, in id order (each an append).
using UnfinishedRun = std::vector<UnfinishedJobs::Entry>;

// The jobs [begin, end) of a format 2 snapshot into `state.jobs`, the unfinished ones also into
// `unfinished`, read in ascending order, a chunk from the back too: each of its jobs goes just
// before the same successor (the first job read before it), so every insertion's hint is right.
void read_jobs(snapshot::StateSnapshot::Reader in, TwoEndedClaims::Range range, Place place,
               const std::vector<std::shared_ptr<const std::string>>& environments, SpecCores cores,
               ClusterState& state, UnfinishedRun& unfinished) {
  auto jobs = in.getJobs();
  auto specs = in.getJobSpecs();
  const auto job_successor = place == Place::after ? state.jobs.end() : state.jobs.begin();
  for (unsigned i = range.begin; i < range.end; ++i) {
    auto spec = specs[i];
    std::shared_ptr<const std::string> environment;
    if (spec.getPacked()) {
      if (spec.getEnvironment() >= environments.size()) throw SnapshotError("a spec's environment is missing");
      environment = environments[spec.getEnvironment()];
    }
    auto bytes = spec.getEvent();
    JobRecord record = read_job_view(
        jobs[i], RecordedSpec::restore(std::span(bytes.begin(), bytes.size()), spec.getPacked(), std::move(environment)));
    if (cores == SpecCores::decoded && !is_final(record.state)) record.spec.core();
    uint64_t id = record.id;
    const JobRecord& placed = state.jobs.emplace_hint(job_successor, id, std::move(record))->second;
    if (!is_final(placed.state)) unfinished.push_back({id, &placed});
  }
}

void add_unfinished(ClusterState& state, const UnfinishedRun& run) {
  for (const auto& entry : run) state.unfinished_jobs.insert(entry.id, entry.record);
}

// Materialising the jobs is most of a restart from a snapshot: a thread of its own reads chunks
// from the front (its records in that thread's heap) while this one reads chunks from the
// back, until they meet; the front's map nodes then move in front of the back's, in id order,
// without a copy.
void read_all_jobs(snapshot::StateSnapshot::Reader in,
                   const std::vector<std::shared_ptr<const std::string>>& environments, SpecCores cores,
                   ClusterState& state) {
  unsigned count = in.getJobs().size();
  auto on_this_thread = [&] {
    UnfinishedRun unfinished;
    read_jobs(in, {0, count}, Place::after, environments, cores, state, unfinished);
    add_unfinished(state, unfinished);
  };
  if (count < kJobsForTwoThreads) return on_this_thread();
  TwoEndedClaims claims(count, kJobsPerClaim);
  ClusterState front;
  UnfinishedRun front_unfinished;
  std::vector<UnfinishedRun> back_unfinished;  // a run per chunk, the highest ids first
  std::exception_ptr front_error;
  std::thread reader;
  try {
    reader = std::thread([&] {
      try {
        while (auto range = claims.front())
          read_jobs(in, *range, Place::after, environments, cores, front, front_unfinished);
      } catch (...) {
        front_error = std::current_exception();
        claims.stop();
      }
    });
  } catch (const std::system_error&) {  // no thread to be had: all on this one
    return on_this_thread();
  }
  try {
    while (auto range = claims.back())
      read_jobs(in, *range, Place::before, environments, cores, state, back_unfinished.emplace_back());
  } catch (...) {
    claims.stop();
    reader.join();
    throw;
  }
  reader.join();
  if (front_error) std::rethrow_exception(front_error);
  // Ids ascend through the snapshot, so every id read from the front is below the back's.
  // The map's nodes move, so the records' addresses in the runs hold.
  while (!front.jobs.empty()) state.jobs.insert(state.jobs.begin(), front.jobs.extract(std::prev(front.jobs.end())));
  add_unfinished(state, front_unfinished);
  for (auto run = back_unfinished.rbegin(); run != back_unfinished.rend(); ++run) add_unfinished(state, *run);
}

// The words of the unpacked message, faulted in by a thread of its own ahead of the unpacking:
// half of unpacking a large snapshot was the page faults of its new memory (~300 MB for 250k
// jobs), taken a page at a time on a restart's path while the second core waited for the jobs.
// MADV_POPULATE_WRITE leaves a page already written as it is, so the two threads never race on
// the contents; without it (Linux < 5.14) the unpacking faults its pages itself, as before.
class PrefaultedWords {
 public:
  // At most `prefault_bytes` are faulted in ahead: the segment table's sizes are only as true
  // as the bytes that follow (a message that ends early throws, having written what it holds).
  PrefaultedWords(size_t words, size_t prefault_bytes) : bytes_(words * sizeof(capnp::word)) {
    if (bytes_ == 0) return;
    void* at = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) return;  // the reader allocates its own, as before
    at_ = static_cast<capnp::word*>(at);
    const size_t ahead = std::min(bytes_, prefault_bytes);
    try {
      faulting_ = std::thread([this, ahead] {
        constexpr size_t kChunkBytes = 2 << 20;
        auto* bytes = reinterpret_cast<char*>(at_);
        for (size_t done = 0; done < ahead && !stop_.load(std::memory_order_relaxed); done += kChunkBytes)
          if (::madvise(bytes + done, std::min(kChunkBytes, ahead - done), MADV_POPULATE_WRITE) != 0) return;
      });
    } catch (const std::system_error&) {  // no thread to be had: the unpacking faults its pages
    }
  }
  ~PrefaultedWords() {
    finish();
    if (at_) ::munmap(at_, bytes_);
  }
  PrefaultedWords(const PrefaultedWords&) = delete;
  PrefaultedWords& operator=(const PrefaultedWords&) = delete;
  kj::ArrayPtr<capnp::word> words() const {
    return at_ ? kj::arrayPtr(at_, bytes_ / sizeof(capnp::word)) : kj::ArrayPtr<capnp::word>();
  }
  // Once the message is unpacked: what is left to fault in is left alone.
  void finish() {
    stop_ = true;
    if (faulting_.joinable()) faulting_.join();
  }

 private:
  size_t bytes_ = 0;
  capnp::word* at_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread faulting_;
};

// The words a packed message unpacks to, from its segment table (read as the message's reader
// reads it: the first word, then the other segments' sizes).
size_t unpacked_words(std::span<const uint8_t> packed) {
  kj::ArrayInputStream input(kj::ArrayPtr<const kj::byte>(packed.data(), packed.size()));
  capnp::_::PackedInputStream unpacked(input);
  uint32_t first[2];
  unpacked.read(first, sizeof first);
  size_t segments = size_t{first[0]} + 1;
  size_t words = first[1];
  if (segments > 1 && segments < 512) {
    std::vector<uint32_t> sizes(segments & ~size_t{1});
    unpacked.read(sizes.data(), sizes.size() * sizeof(uint32_t));
    for (size_t i = 0; i + 1 < segments; ++i) words += sizes[i];
  }
  return words;
}

}  // namespace

std::vector<uint8_t> encode_snapshot(const ClusterState& state, uint32_t partition, uint64_t next_offset,
                                     int64_t last_event_us, const std::vector<uint64_t>& shard_next_offsets) {
  // One segment, sized from above: in a message of many segments, most of a job's pointers would
  // cross segments, and a reader resolves each of those under a lock (a few % of a load). What
  // is allocated and never written costs no memory (calloc: untouched pages).
  size_t estimate = 1 << 16;
  for (const auto& [id, job] : state.jobs)
    estimate += capnp::sizeInWords<records::JobView>() + 48 + (job.steps.size() + job.runs.size()) * 32 +
                job.spec.event_bytes().size() / sizeof(capnp::word) + 2;
  estimate += state.nodes.size() * 256 + state.anomalies.size() * 32;
  capnp::MallocMessageBuilder message(static_cast<unsigned>(std::min<size_t>(estimate, 1u << 28)));
  auto out = message.initRoot<snapshot::StateSnapshot>();
  out.setFormatVersion(kSnapshotFormatVersion);
  out.setPartition(partition);
  out.setNextOffset(next_offset);
  auto shard_offsets = out.initShardNextOffsets(static_cast<unsigned>(shard_next_offsets.size()));
  for (unsigned i = 0; i < shard_next_offsets.size(); ++i) shard_offsets.set(i, shard_next_offsets[i]);
  out.setLastEventUs(last_event_us);
  out.setDigest(state_digest(state));
  // Each spec as the controller keeps it (format 2): its bytes, which loading copies back.
  auto jobs = out.initJobs(static_cast<unsigned>(state.jobs.size()));
  auto specs = out.initJobSpecs(static_cast<unsigned>(state.jobs.size()));
  std::unordered_map<const std::string*, uint32_t> environment_index;
  std::vector<const std::string*> environments;
  unsigned i = 0;
  for (const auto& [id, job] : state.jobs) {
    write_job_view(jobs[i], job, JobViewFields{.spec = false});
    auto spec = specs[i++];
    auto bytes = job.spec.event_bytes();
    if (bytes.empty()) continue;
    spec.setEvent(capnp::Data::Reader(bytes.data(), bytes.size()));
    if (!job.spec.packed()) continue;
    spec.setPacked(true);
    const std::string* block = job.spec.environment_block();
    auto [it, added] = environment_index.emplace(block, static_cast<uint32_t>(environments.size()));
    if (added) environments.push_back(block);
    spec.setEnvironment(it->second);
  }
  auto blocks = out.initEnvironments(static_cast<unsigned>(environments.size()));
  for (i = 0; i < environments.size(); ++i) {
    const std::string* block = environments[i];
    blocks.set(i, block ? capnp::Data::Reader(reinterpret_cast<const kj::byte*>(block->data()), block->size())
                        : capnp::Data::Reader());
  }
  auto nodes = out.initNodes(static_cast<unsigned>(state.nodes.size()));
  i = 0;
  for (const auto& [name, node] : state.nodes) write_node_view(nodes[i++], node);
  auto pools = out.initPools(static_cast<unsigned>(state.pools.size()));
  i = 0;
  for (const auto& [name, ledger] : state.pools) {
    auto pool = pools[i++];
    pool.setName(name);
    pool.setReservedBytes(ledger.reserved_bytes);
    auto ids = pool.initJobIds(static_cast<unsigned>(ledger.reserved_by_job.size()));
    auto bytes = pool.initJobBytes(static_cast<unsigned>(ledger.reserved_by_job.size()));
    unsigned j = 0;
    for (const auto& [job_id, reserved] : ledger.reserved_by_job) {
      ids.set(j, job_id);
      bytes.set(j++, reserved);
    }
  }
  auto shards = out.initShards(static_cast<unsigned>(state.shards.size()));
  i = 0;
  for (const auto& [number, cursor] : state.shards) {
    auto shard = shards[i++];
    shard.setShard(number);
    shard.setEpoch(cursor.epoch);
    shard.setNextJobId(cursor.next_job_id);
    shard.setApplied(cursor.applied);
  }
  size_t owned = 0;
  for (const auto& [number, cursor] : state.shards) owned += cursor.owner.controller.empty() ? 0 : 1;
  if (owned > 0) {  // none (shards never claimed): the snapshot is as before
    auto owners = out.initShardOwners(static_cast<unsigned>(owned));
    i = 0;
    for (const auto& [number, cursor] : state.shards) {
      if (cursor.owner.controller.empty()) continue;
      auto owner = owners[i++];
      owner.setShard(number);
      owner.setController(cursor.owner.controller);
      owner.setEndpoint(cursor.owner.endpoint);
      owner.setHost(cursor.owner.host);
      owner.setPid(cursor.owner.pid);
    }
  }
  auto anomalies = out.initAnomalies(static_cast<unsigned>(state.anomalies.size()));
  for (i = 0; i < state.anomalies.size(); ++i) {
    anomalies[i].setOffset(state.anomalies[i].offset);
    anomalies[i].setText(state.anomalies[i].text);
  }
  out.setAnomalyCount(state.anomaly_count);
  out.setSkippedUnknown(state.skipped_unknown);
  out.setSkippedStale(state.skipped_stale);
  out.setPurgedJobs(state.purged_jobs);
  if (!state.config_text.empty()) out.setConfigText(state.config_text);
  write_accounts_view(out.initAccounts(), state.accounts);
  if (!state.partition_table.changed.empty() || state.partition_table.default_name) {
    auto table = out.initPartitionTable();
    auto changed = table.initChanged(static_cast<unsigned>(state.partition_table.changed.size()));
    for (i = 0; i < state.partition_table.changed.size(); ++i) {
      write_partition_settings(changed[i].initSettings(), state.partition_table.changed[i].partition);
      changed[i].setDeleted(state.partition_table.changed[i].deleted);
    }
    table.setDefaultSet(state.partition_table.default_name.has_value());
    table.setDefaultName(state.partition_table.default_name.value_or(""));
  }
  if (!state.reservations.empty() || state.reservations_created != 0) {
    auto table = out.initReservations();
    table.setCreated(state.reservations_created);
    auto list = table.initReservations(static_cast<unsigned>(state.reservations.size()));
    unsigned r = 0;
    for (const auto& [name, reservation] : state.reservations) write_reservation(list[r++], reservation);
  }
  // Packed: a state is mostly zero words (defaults), and the disk is slower than unpacking
  // (unpacked, a snapshot of 250k jobs is 2.8 times larger and loads 30% faster: docs/decisions.md).
  kj::VectorOutputStream packed;
  capnp::writePackedMessage(packed, message);
  auto body = packed.getArray();
  std::vector<uint8_t> bytes(kHeaderBytes);
  uint32_t crc = crc32c(body.begin(), body.size());
  std::memcpy(bytes.data(), kMagic, 4);
  std::memcpy(bytes.data() + 4, &crc, 4);
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

StateSnapshot decode_snapshot(std::span<const uint8_t> bytes, SnapshotLoad load) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, 4) != 0)
    throw SnapshotError("not a snapshot: no snapshot header");
  uint32_t crc = 0;
  std::memcpy(&crc, bytes.data() + 4, 4);
  auto body = bytes.subspan(kHeaderBytes);
  if (crc32c(body.data(), body.size()) != crc) throw SnapshotError("checksum mismatch: torn or altered");
  StateSnapshot snapshot;
  try {
    kj::ArrayInputStream input(kj::ArrayPtr<const kj::byte>(body.data(), body.size()));
    capnp::ReaderOptions options;
    options.traversalLimitInWords = UINT64_MAX / 2;  // a snapshot is as large as the state: trusted local file
    // A snapshot unpacks to ~3 times its packed size; 16 times bounds what is faulted in ahead.
    PrefaultedWords space(load.prefault_unpacked ? unpacked_words(body) : 0, body.size() * 16);
    capnp::PackedMessageReader message(input, options, space.words());
    space.finish();
    auto in = message.getRoot<snapshot::StateSnapshot>();
    uint32_t format = in.getFormatVersion();
    if (format < kOldestSnapshotFormatVersion || format > kSnapshotFormatVersion)
      throw SnapshotError("snapshot format " + std::to_string(format) + ", this build reads " +
                          std::to_string(kOldestSnapshotFormatVersion) + " to " + std::to_string(kSnapshotFormatVersion));
    snapshot.partition = in.getPartition();
    snapshot.next_offset = in.getNextOffset();
    for (uint64_t offset : in.getShardNextOffsets()) snapshot.shard_next_offsets.push_back(offset);
    snapshot.last_event_us = in.getLastEventUs();
    ClusterState& state = snapshot.state;
    auto jobs = in.getJobs();
    if (format >= 2) {
      auto specs = in.getJobSpecs();
      if (specs.size() != jobs.size()) throw SnapshotError("jobs and their specs differ in number");
      std::vector<std::shared_ptr<const std::string>> environments;
      for (auto block : in.getEnvironments())
        environments.push_back(intern_environment_block(std::string(block.asChars().begin(), block.size())));
      read_all_jobs(in, environments, load.cores, state);
    } else {
      for (auto job : jobs) {
        JobRecord record = read_job_view(job);
        if (load.cores == SpecCores::decoded && !is_final(record.state)) record.spec.core();
        add_job(state, std::move(record));
      }
    }
    for (auto node : in.getNodes()) {
      NodeRecord record = read_node_view(node);
      state.nodes.emplace(record.name, std::move(record));
    }
    for (auto pool : in.getPools()) {
      PoolLedger& ledger = state.pools[pool.getName()];
      ledger.reserved_bytes = pool.getReservedBytes();
      auto ids = pool.getJobIds();
      auto reserved = pool.getJobBytes();
      if (ids.size() != reserved.size()) throw SnapshotError("a pool's job lists differ in length");
      for (unsigned j = 0; j < ids.size(); ++j) ledger.reserved_by_job[ids[j]] = reserved[j];
    }
    for (auto shard : in.getShards())
      state.shards[shard.getShard()] = ShardCursor{shard.getEpoch(), shard.getNextJobId(), shard.getApplied(), {}};
    for (auto owner : in.getShardOwners())
      state.shards[owner.getShard()].owner =
          ShardOwnerAddress{owner.getController().cStr(), owner.getEndpoint().cStr(), owner.getHost().cStr(),
                            owner.getPid()};
    for (auto anomaly : in.getAnomalies()) state.anomalies.push_back({anomaly.getOffset(), anomaly.getText()});
    state.anomaly_count = in.getAnomalyCount();
    state.skipped_unknown = in.getSkippedUnknown();
    state.skipped_stale = in.getSkippedStale();
    state.purged_jobs = in.getPurgedJobs();
    state.config_text = in.getConfigText();
    if (in.hasAccounts()) state.accounts = read_accounts_view(in.getAccounts());
    if (in.hasPartitionTable()) {
      auto table = in.getPartitionTable();
      for (auto entry : table.getChanged())
        state.partition_table.changed.push_back({read_partition_settings(entry.getSettings()), entry.getDeleted()});
      if (table.getDefaultSet()) state.partition_table.default_name = std::string(table.getDefaultName());
    }
    if (in.hasReservations()) {
      auto table = in.getReservations();
      state.reservations_created = table.getCreated();
      for (auto wire : table.getReservations()) {
        Reservation reservation = read_reservation(wire);
        std::string name = reservation.name;
        state.reservations.emplace(std::move(name), std::move(reservation));
      }
    }
    // The checksum vouches for the bytes; recomputing the digest would decode every spec.
    snapshot.digest = in.getDigest();
  } catch (const kj::Exception& e) {
    throw SnapshotError(std::string("not a snapshot: ") + e.getDescription().cStr());
  }
  return snapshot;
}

}  // namespace cairn
