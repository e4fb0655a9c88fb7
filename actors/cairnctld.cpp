// cairnctld: replays the log's shards (Shards=), claims each one's writer epoch,
// starts the actors and the RPC front, then waits for SIGTERM/SIGINT (or for a
// newer controller's claim on its shard, which fences it: exit status 3). With
// --standby it first waits for the file log's writer to stop, then takes over.
#include <caf/all.hpp>
#include <prometheus/exposer.h>
#include <pwd.h>
#include <signal.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <chrono>
#include <optional>
#include <thread>
#include <iostream>

#include "events/burst_buffer_plan.hpp"
#include "actors/actors.hpp"
#include "actors/outside_requests.hpp"
#include "actors/readable_view.hpp"
#include "events/read_model.hpp"
#include "events/snapshot_files.hpp"
#include "common/wall_clock.hpp"
#include "events/job_commands.hpp"
#include "actors/controller_service.hpp"
#include "actors/shard_endpoints.hpp"
#include "common/shard_endpoint.hpp"
#include "common/daemon_log.hpp"
#include "common/logged_config.hpp"
#include "common/daemon_signals.hpp"
#include "common/option_parser.hpp"
#include "common/private_files.hpp"
#include "common/service_notify.hpp"
#include "common/version.hpp"
#include "common/string_util.hpp"
#include "common/actor_scheduler.hpp"
#include "common/loop_scheduler.hpp"
#include "protocol/actors_on_loop.hpp"
#include "common/worker_threads.hpp"
#include "events/event_codec.hpp"
#include "events/event_factory.hpp"
#include "events/log/event_log_config.hpp"
#include "events/log/fence_watch.hpp"
#include "events/log/file_log_owners.hpp"
#include "events/log/kafka_group.hpp"
#include "events/log/kafka_spec.hpp"
#include "events/log/shard_claim.hpp"
#include "events/replay.hpp"
#include "events/shard_ownership.hpp"
#include "events/shard_replay.hpp"
#include "events/job_id.hpp"

using namespace cairn;

namespace {

// Set when the file log saw another controller take one of this one's shards.
std::atomic<bool> g_fenced{false};
// Set when a shard of --takeover lost its owner: this controller stops and starts again, in
// place (the same command line, the same pid), and takes that shard with its own.
std::atomic<bool> g_restart{false};
char** g_argv = nullptr;
// Set in the environment of a restart in place (finish()): a group member that rejoins with its
// instance id gets its assignment back at once and need not wait for the group to settle.
constexpr const char* kRestartedInPlace = "CAIRN_CONTROLLER_RESTARTED_IN_PLACE";

// How the process ends: exit, or, to take a shard over (or to write what KafkaControllerGroup=
// assigned now), the same command line again; a fenced controller exits.
[[noreturn]] void finish(int status) {
  spdlog::default_logger()->flush();
  if (g_restart && status != 3) {
    ::setenv(kRestartedInPlace, "1", 1);
    ::execv("/proc/self/exe", g_argv);
    spdlog::critical("cannot restart to take a shard over: {}", std::strerror(errno));
    spdlog::default_logger()->flush();
    std::_Exit(1);
  }
  std::_Exit(status);
}

constexpr const char* kUsage =
    "Usage: cairnctld [--conf FILE] [-D] [--accept-log-loss] [--standby] [--shards LIST] [--takeover LIST]\n"
    "                 [--socket PATH]\n"
    "\n"
    "The Cairn controller: replays the event log (EventLog=), takes the writer's claim on\n"
    "its shard, schedules, and serves the CLI and the node agents on ControllerSocket= and\n"
    "ControllerAddr=:ControllerPort=, and Prometheus metrics on MetricsAddr=:MetricsPort=\n"
    "(off by default; docs/metrics.md). It runs in the foreground until SIGTERM or SIGINT;\n"
    "under systemd (cairnctld.service) it says READY=1 once it serves.\n"
    "\n"
    "Options:\n"
    "      --conf FILE        the configuration (else $CAIRN_CONF, else /etc/cairn/cairn.conf)\n"
    "  -D                     run in the foreground (always the case; accepted as Slurm's)\n"
    "      --accept-log-loss  start although the file event log holds less than its META says\n"
    "                         it held (records, segments or META removed); the loss is logged\n"
    "                         and recorded\n"
    "      --standby          wait for the file event log's writer to stop (its lock), however\n"
    "                         long, then take over: replay, claim the next writer epoch, serve;\n"
    "                         on Kafka, wait for the shards' writer (its lease) the same way\n"
    "      --shards LIST      write only these shards (as in 0,2): on the file log each under\n"
    "                         its own lock and lease, on Kafka each partition under its own\n"
    "                         transactional id and the lease of its endpoint file; read the\n"
    "                         others, written by other controllers, into the views; commands\n"
    "                         on their jobs go to them\n"
    "      --takeover LIST    with --shards, on the file log: also write these shards once their\n"
    "                         owner is gone (it died, or stopped renewing its lease): this\n"
    "                         controller then starts again in place and takes them with its own\n"
    "      --socket PATH      listen on PATH rather than ControllerSocket= (a second controller\n"
    "                         on the same host)\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          print the version (cairn X.Y.Z) and exit\n"
    "\n"
    "With KafkaControllerGroup=NAME (Kafka only) a controller joins that consumer group and writes\n"
    "the shards the group assigns it (none: it reads and forwards); when the assignment changes it\n"
    "starts again in place (same pid and sockets) to write the new set. Not with --shards or\n"
    "--standby: the group decides.\n"
    "\n"
    "Logging: stderr (journald under systemd); with SlurmctldLogFile=FILE the log goes to FILE\n"
    "too and stderr keeps warnings and errors. SIGUSR2 reopens FILE (logrotate:\n"
    "/etc/logrotate.d/cairn).\n"
    "\n"
    "Its actors run on CAF worker threads; CAIRN_CAF_SCHEDULER=loop in the environment runs\n"
    "them on the RPC thread instead: less CPU per job on a small queue, but a long scheduling\n"
    "pass (a long queue) then holds every request while it runs.\n"
    "\n"
    "Exit status: 0 after SIGTERM/SIGINT, 1 on an error (said on stderr), 2 on a bad command\n"
    "line, 3 when a newer controller claimed the shard, or another took it first (fenced).\n";

// Jobs that need an actor right away: started and not finished (timers, agents' reports),
// due for resubmission, or with a burst-buffer step to drive. A queued job gets its
// actor at its next event.
std::vector<uint64_t> live_jobs(const ClusterState& state) {
  std::vector<uint64_t> ids;
  for (const auto& [id, job] : state.jobs)
    if ((!is_final(job.state) && job.state != JobState::PENDING) || should_resubmit(job) ||
        next_bb_step(job) != BbStep::none)
      ids.push_back(id);
  return ids;
}

// The event log's directory and the snapshots hold users' scripts and environments, the job
// history their commands and directories:
// 0700, and owned by SlurmUser when the controller runs as root (what the log and the
// snapshot writer create in them takes the directory's owner). StateSaveLocation itself
// keeps its mode: users reach the controller's socket through it.
void prepare_private_directories(const ClusterConfig& config) {
  std::vector<std::string> dirs = {snapshot_dir(config), job_history_dir(config)};
  if (config.event_log.starts_with("file:")) dirs.push_back(config.event_log.substr(5));
  struct passwd entry {}, *found = nullptr;
  char buffer[4096];
  bool known = getpwnam_r(config.slurm_user.c_str(), &entry, buffer, sizeof buffer, &found) == 0 && found;
  if (!known && geteuid() == 0)
    spdlog::warn("SlurmUser={} is not a user of this host: the event log and snapshots stay root's", config.slurm_user);
  for (const auto& dir : dirs) {
    if (dir.empty()) continue;
    if (make_private_directory(dir)) spdlog::info("{}: made private (0700): it holds job scripts and environments", dir);
    if (known) hand_directory_to(dir, entry.pw_uid, entry.pw_gid);
  }
}

// A predecessor killed a moment ago may still hold the file log's lock while
// the kernel tears it down: wait for it LogWriterWait rather than fail a restart.
// Kafka brokers out of reach: say so and retry with backoff until they answer.
// A standby (--standby) waits on the lock for as long as its holder lives.
// With --shards, `ownership` is what --shards names and whichever shard of `takeover` has lost
// its owner (on return: what the log was opened with).
std::unique_ptr<EventLog> open_log_waiting(const ClusterConfig& config, bool accept_log_loss, bool standby,
                                           bool per_shard, ShardOwnership& ownership, const ShardOwnership& takeover) {
  constexpr auto kMaxBackoff = std::chrono::seconds(30);
  const std::chrono::seconds lock_wait(config.log_writer_wait_sec);
  auto lock_deadline = std::chrono::steady_clock::now() + lock_wait;
  auto backoff = std::chrono::milliseconds(500);
  bool said_locked = false;
  while (true) {
    try {
      // Kafka: a writer is started per partition by its first append (the claim), so a controller
      // of some shards opens the log as any other.
      if (!per_shard || !config.event_log.starts_with("file:")) return open_configured_log(config, accept_log_loss);
      ShardOwnership attempt = ownership;
      std::vector<std::string> taking;
      for (uint32_t shard : takeover.owned()) {
        if (ownership.owns(shard)) continue;
        if (auto why = shard_free_to_take(config.event_log.substr(5), shard, ShardOwnerOptions{}.lease_timeout)) {
          attempt = attempt.with(shard);
          taking.push_back(*why);
        }
      }
      FileLogOptions file;
      file.partitions = config.shards;
      file.segment_bytes = config.event_log_segment_bytes;
      file.accept_loss = accept_log_loss;
      ShardOwnerOptions owners;
      owners.owned = attempt.owned();
      // Another controller took one of this one's shards (it stopped renewing its lease):
      // every later append fails; stop as a fenced controller does.
      owners.on_fenced = [](const std::string&) {
        g_fenced = true;
        ::kill(::getpid(), SIGTERM);
      };
      auto log = open_file_log(config.event_log.substr(5), file, owners);
      for (const auto& why : taking) spdlog::warn("--takeover: {}: this controller writes it now", why);
      ownership = attempt;
      return log;
    } catch (const LogLoss& e) {
      throw LogLoss(fmt::format("{}. Restore what is missing, or, if the loss is known and accepted, start cairnctld "
                                "with --accept-log-loss (job ids go on after the highest ever issued)",
                                e.what()));
    } catch (const LogUnavailable& e) {
      spdlog::error("{}; retrying in {:.1f} s", e.what(), backoff.count() / 1000.0);
      notify_status(fmt::format("waiting for the event log: {}", e.what()));
      std::this_thread::sleep_for(backoff);
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
    } catch (const LogError& e) {
      bool locked = std::string(e.what()).find("locked by another process") != std::string::npos;
      if (!locked || (!standby && std::chrono::steady_clock::now() >= lock_deadline)) throw;
      if (!said_locked && standby) {
        spdlog::info("standby: {}; taking over when it stops", e.what());
        notify_status("standby: waiting for the event log's writer to stop");
      } else if (!said_locked) {
        spdlog::warn("{}; waiting up to {} s for it to stop (LogWriterWait)", e.what(), lock_wait.count());
      }
      said_locked = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

// Every event the other controllers write in the shards this one does not: tailed into the
// controller's order (the log actor numbers them), so that its views show the whole site.
struct ForeignShardTails {
  std::atomic<bool> stopping{false};
  std::vector<std::thread> threads;
  ~ForeignShardTails() {
    stopping = true;
    for (auto& thread : threads) thread.join();
  }
};

// --takeover: watches the shards named there, written by other controllers; once one's owner is
// gone, stops this controller so that it starts again in place and takes it (finish()).
struct TakeoverWatch {
  std::atomic<bool> stopping{false};
  std::thread thread;
  ~TakeoverWatch() {
    stopping = true;
    if (thread.joinable()) thread.join();
  }
  void start(std::string log_dir, std::vector<uint32_t> shards, std::string owned) {
    if (shards.empty()) return;
    thread = std::thread([this, log_dir = std::move(log_dir), shards = std::move(shards), owned = std::move(owned)] {
      while (!stopping) {
        for (uint32_t shard : shards) {
          if (auto why = shard_free_to_take(log_dir, shard, ShardOwnerOptions{}.lease_timeout)) {
            spdlog::warn("--takeover: {}: restarting to write shards {},{}", *why, owned, shard);
            g_restart = true;
            ::kill(::getpid(), SIGTERM);
            return;
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
};

// For `cairn shards`' reader lags: how far this controller's view applied each shard
// (shard_readers_dir()/cairnctld@HOST:PID, "SHARD NEXT" lines), rewritten every second, removed at
// a clean stop (a killed controller's file stays; `cairn shards` skips readers that stopped).
struct ReaderReport {
  std::atomic<bool> stopping{false};
  std::string path;
  std::thread thread;
  ~ReaderReport() {
    stopping = true;
    if (thread.joinable()) thread.join();
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove(path, ignored);
  }
  void start(const std::string& dir, std::shared_ptr<const ControllerContext> context, uint32_t shards) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) return spdlog::warn("cannot make {}: {}", dir, error.message());
    path = dir + "/" + context->controller_name;
    thread = std::thread([this, context, shards] {
      while (!stopping) {
        std::string text;
        for (uint32_t shard = 0; shard < shards && shard < context->shard_applied_end->size(); ++shard)
          text += fmt::format("{} {}\n", shard, (*context->shard_applied_end)[shard].load(std::memory_order_acquire));
        std::string temporary = path + ".tmp";
        if (std::ofstream(temporary, std::ios::trunc) << text) ::rename(temporary.c_str(), path.c_str());
        for (int i = 0; i < 10 && !stopping; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
};

std::thread tail_foreign_shard(const EventLog& log, uint32_t shard, uint64_t from, LogActor log_actor,
                               std::atomic<uint64_t>* applied_end, const std::atomic<bool>& stopping) {
  return std::thread([&log, shard, from, log_actor, applied_end, &stopping] {
    try {
      auto reader = log.read(shard, from);
      uint64_t sent_end = from;  // past the last record handed to the log actor
      while (!stopping) {
        auto record = reader->next(200);
        if (!record) {
          // At the end, past records readers never see (Kafka's transaction markers): once the
          // view applied what was sent, it has applied the shard up to there, which is what a
          // forwarded command waits for (the owner's end offset counts the markers).
          auto end = reader->end_position();
          if (end && *end > sent_end && applied_end->load(std::memory_order_acquire) >= sent_end) {
            uint64_t seen = applied_end->load(std::memory_order_acquire);
            while (seen < *end && !applied_end->compare_exchange_weak(seen, *end, std::memory_order_release)) {
            }
          }
          continue;
        }
        sent_end = record->offset + 1;
        auto bytes = std::make_shared<const std::vector<uint8_t>>(std::move(record->payload));
        uint64_t job_id = 0;
        try {
          DecodedEvent decoded(record->offset, *bytes);
          job_id = decoded.event().getHeader().getJobId();
        } catch (const kj::Exception&) {
        }
        caf::anon_send(log_actor, foreign_atom_v,
                       CommittedEvent{0, bytes, job_id, record->offset, shard, reader->record_ended()});
      }
    } catch (const std::exception& e) {
      spdlog::critical("reading shard {}, written by another controller: {}; stopping", shard, e.what());
      ::kill(::getpid(), SIGTERM);
    }
  });
}

// Kafka has no lock beside a shard: a controller of some shards, or a standby, takes each only
// when no live controller holds it (ShardEndpoints' lease). Like the file log's lock, a plain
// start waits LogWriterWait (10 s) for a holder to go (a stopped one's lease runs out in 5 s), a
// standby for as long as it lives.
void wait_for_free_kafka_shards(const ClusterConfig& config, const ShardOwnership& ownership, bool standby) {
  const std::chrono::seconds wait(config.log_writer_wait_sec);
  auto deadline = std::chrono::steady_clock::now() + wait;
  bool said = false;
  while (true) {
    std::string held;
    for (uint32_t shard : ownership.owned()) {
      auto holder = shard_holder(shard_endpoint_path(config, shard));
      if (!holder.empty()) {
        held = fmt::format("shard {} is written by another controller ({})", shard, holder);
        break;
      }
    }
    if (held.empty()) return;
    if (!standby && std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error(fmt::format("--shards {}: {}; stop that controller, or start this one with --standby "
                                           "to take the shard over when it stops",
                                           ownership.text(), held));
    if (!said && standby) {
      spdlog::info("standby: {}; taking over when it stops", held);
      notify_status("standby: waiting for the shard's writer to stop");
    } else if (!said) {
      spdlog::warn("{}; waiting up to {} s for it to stop (LogWriterWait)", held, wait.count());
    }
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// For `cairn shards`: the member of the group that owns each of this controller's shards.
void write_group_member_files(const ClusterConfig& config, const ShardOwnership& ownership,
                              const KafkaControllerGroup::Membership& membership) {
  for (uint32_t shard : ownership.owned()) {
    std::string path = shard_group_member_path(config, shard), temporary = path + ".tmp";
    if (std::ofstream(temporary, std::ios::trunc) << membership.member_id << " " << membership.generation << "\n")
      ::rename(temporary.c_str(), path.c_str());
  }
}

// ControllerAddr='s entries, in order; {""} (the Unix socket only) with ControllerPort=0.
std::vector<std::string> controller_listen_addresses(const ClusterConfig& config) {
  std::vector<std::string> addresses;
  for (auto address : split(config.controller_addr, ','))
    if (!trim(address).empty()) addresses.emplace_back(trim(address));
  if (config.controller_port == 0 || addresses.empty()) addresses = {""};
  return addresses;
}

// The first address this host can bind at `port` (an address of this host not already served):
// the one the listener takes. The last one when none binds (the listener then says why).
size_t first_bindable_address(const std::vector<std::string>& addresses, uint16_t port) {
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (addresses[i].empty()) return i;
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    std::string host = addresses[i] == "*" ? std::string() : addresses[i];
    if (getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) continue;
    bool bindable = false;
    for (addrinfo* at = found; at && !bindable; at = at->ai_next) {
      int fd = ::socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC, at->ai_protocol);
      if (fd < 0) continue;
      int on = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
      bindable = ::bind(fd, at->ai_addr, at->ai_addrlen) == 0;
      ::close(fd);
    }
    freeaddrinfo(found);
    if (bindable) return i;
  }
  return addresses.size() - 1;
}

// KafkaControllerGroup=: joins the group and waits for its first assignment (for as long as it
// takes: the brokers may be out of reach, as for the log's open), then for the group to settle
// (a cooperative rebalance gives a newcomer its partitions in a second round).
std::unique_ptr<KafkaControllerGroup> join_controller_group(const ClusterConfig& config, ShardOwnership& ownership) {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  auto group = std::make_unique<KafkaControllerGroup>(
      parse_kafka_spec(config.event_log, config.kafka_topic), kafka_properties(config.extra),
      config.kafka_controller_group, controller_group_instance_id(host, config.controller_socket));
  notify_status("joining the consumer group " + config.kafka_controller_group);
  std::vector<uint32_t> assigned;
  for (bool waiting = true; waiting;) {
    try {
      assigned = group->wait_for_assignment(std::chrono::seconds(10));
      waiting = false;
    } catch (const LogUnavailable& e) {
      spdlog::warn("{}; still waiting", e.what());
    }
  }
  bool restarted = std::getenv(kRestartedInPlace) != nullptr;
  ::unsetenv(kRestartedInPlace);
  for (auto settled = assigned; !restarted; settled = assigned) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    assigned = group->membership().assigned;
    if (assigned == settled) break;
  }
  ownership = ownership_of_assignment(assigned, config.shards, config.kafka_controller_group);
  auto membership = group->membership();
  spdlog::info("KafkaControllerGroup={}: member {} (instance {}, generation {}) writes shards {}",
               config.kafka_controller_group, membership.member_id, membership.instance_id, membership.generation,
               ownership.text());
  return group;
}

// From now on a change of the group's assignment restarts this controller in place (finish()),
// which joins again with the same instance id and writes the new set. A revoked shard is
// relinquished first: once the rebalance goes on, nothing more of this controller becomes
// durable in it. A lost one (this member's session expired: the group already gave it away)
// fences this controller, which exits 3.
void follow_controller_group(KafkaControllerGroup& group, EventLog& log, const ShardOwnership& ownership,
                             const ClusterConfig& config) {
  const std::string name = config.kafka_controller_group;
  auto restart = [name](const std::string& why) {
    spdlog::warn("KafkaControllerGroup={}: {}: restarting in place to write the group's new assignment", name, why);
    g_restart = true;
    ::kill(::getpid(), SIGTERM);
  };
  auto current = group.listen([&group, &log, ownership, name, restart, config](KafkaControllerGroup::Change change,
                                                                             const std::vector<uint32_t>& partitions) {
    std::vector<uint32_t> owned;
    for (uint32_t shard : partitions)
      if (ownership.owns(shard)) owned.push_back(shard);
    if (change == KafkaControllerGroup::Change::assigned) {
      if (owned.size() != partitions.size()) return restart(fmt::format("assigned shards {}", fmt::join(partitions, ",")));
      write_group_member_files(config, ownership, group.membership());  // a rebalance that kept them: a new generation
      return;
    }
    bool lost = change == KafkaControllerGroup::Change::lost;
    for (uint32_t shard : owned)
      relinquish_kafka_partition(log, shard, fmt::format("shard {} was {} this controller by KafkaControllerGroup={}; its next owner "
                                        "writes it",
                                        shard, lost ? "taken from" : "revoked from", name));
    if (owned.empty()) return;
    if (!lost) return restart(fmt::format("shards {} revoked", fmt::join(owned, ",")));
    spdlog::critical("fenced: KafkaControllerGroup={} gave shards {} to another member (this member's session "
                     "expired); this controller stops writing",
                     name, fmt::join(owned, ","));
    group.stop_joining();
    g_fenced = true;
    ::kill(::getpid(), SIGTERM);
  });
  if (ownership_of_assignment(current, ownership.shards(), name).owned() != ownership.owned())
    restart(fmt::format("the assignment changed while starting (now shards {})", fmt::join(current, ",")));
}

std::string join_numbers(const std::vector<uint64_t>& numbers) {
  std::string text;
  for (uint64_t number : numbers) text += (text.empty() ? "" : ",") + std::to_string(number);
  return text;
}

// Shards= against the log: a file log has at least as many shards (open_event_log adds what is
// missing), one with more lost none but cannot be written by fewer. A Kafka shard is a
// partition of the topic, which Cairn does not create: the counts must be the same (a
// partition no controller writes, or a shard without a partition, would be a site's part lost).
void refuse_shard_mismatch(const ClusterConfig& config, const EventLog& log) {
  if (config.event_log.starts_with("file:")) {
    if (log.partitions() > config.shards)
      throw std::runtime_error(fmt::format("Shards={}, but the event log {} has {} shards (p0 to p{}): a shard cannot "
                                           "be removed; set Shards={}",
                                           config.shards, config.event_log.substr(5), log.partitions(),
                                           log.partitions() - 1, log.partitions()));
  } else if (log.partitions() != config.shards) {
    throw std::runtime_error(kafka_shard_count_mismatch(config.event_log, config.shards, log.partitions()));
  }
}

// MetricsPort=: Prometheus scrapes the controller's metrics over HTTP (docs/metrics.md). A
// port that cannot be had stops the start: a controller that runs without the metrics its
// operators watch would look healthy and say nothing.
std::unique_ptr<prometheus::Exposer> serve_metrics(const ClusterConfig& config, const ControllerMetrics& metrics) {
  if (config.metrics_port == 0) return nullptr;
  std::string address = fmt::format("{}:{}", config.metrics_addr, config.metrics_port);
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(address, 1);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("MetricsPort={}: cannot listen on {} (in use, or not an address of this "
                                         "host): {}",
                                         config.metrics_port, address, e.what()));
  }
  for (const auto& collectable : metrics.collectables()) exposer->RegisterCollectable(collectable);
  spdlog::info("metrics: http://{}/metrics", address);
  return exposer;
}

int run(const ParsedArgs& args) {
  std::string config_path = find_config_path(args.get("conf"));
  std::string config_text = read_logged_config(config_path);  // with the gres.conf beside it
  auto config = parse_logged_config(config_text, config_path);
  if (!config.slurmctld_log_file.empty()) log_to_file(config.slurmctld_log_file);
  auto metrics = std::make_shared<ControllerMetrics>();
  // A standby serves its metrics once the log is its own: its writer holds the port till then.
  bool standby = args.has("standby");
  std::unique_ptr<prometheus::Exposer> exposer;
  if (!standby) exposer = serve_metrics(config, *metrics);
  prepare_private_directories(config);
  bool accept_log_loss = args.has("accept-log-loss");
  if (accept_log_loss && !config.event_log.starts_with("file:"))
    spdlog::warn("--accept-log-loss applies to a file event log only; EventLog={} is not one", config.event_log);
  ShardOwnership ownership = ShardOwnership::all(config.shards);
  ShardOwnership takeover;  // none
  const bool per_shard = args.has("shards");
  if (args.has("takeover") && !per_shard)
    throw UsageError("cairnctld: --takeover needs --shards (a controller without it writes every shard)");
  if (per_shard) {
    try {
      ownership = ShardOwnership::parse(*args.get("shards"), config.shards);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("cairnctld: ") + e.what());
    }
    if (args.has("takeover")) {
      if (!config.event_log.starts_with("file:"))
        throw UsageError(fmt::format("cairnctld: --takeover is built on the file event log only so far, not on "
                                     "EventLog={}",
                                     config.event_log));
      try {
        takeover = ShardOwnership::parse(*args.get("takeover"), config.shards, "--takeover");
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("cairnctld: ") + e.what());
      }
    }
  }
  bool on_kafka = !config.event_log.starts_with("file:");
  if (args.has("socket")) config.controller_socket = *args.get("socket");
  const bool in_group = !config.kafka_controller_group.empty();  // parse_config: on Kafka only
  if (in_group && (per_shard || standby))
    throw UsageError(fmt::format("cairnctld: {} and KafkaControllerGroup={}: the consumer group decides which shards "
                                 "this controller writes; remove one of them",
                                 per_shard ? "--shards " + *args.get("shards") : std::string("--standby"),
                                 config.kafka_controller_group));
  std::unique_ptr<KafkaControllerGroup> group;  // outlives the log's writers; never leaves the group
  if (in_group) group = join_controller_group(config, ownership);
  // On Kafka a standby, and a controller of some shards, wait for the shards' live writer (its
  // lease); a plain controller of every shard takes them at once, fencing any writer (as before),
  // and so does a member of a group: the group gave it the shard, a stopped owner is fenced.
  if (on_kafka && !in_group && (standby || !ownership.owns_all()))
    wait_for_free_kafka_shards(config, ownership, standby);
  notify_status("opening the event log " + config.event_log);
  const auto warn = [](const std::string& why) { spdlog::warn("{}", why); };
  // A controller of the one shard, starting to write it at once: its newest snapshot loads on
  // this thread while the log opens on another (the file log's checksum scan of its segments,
  // Kafka's metadata), both on a restart's path; whether the snapshot fits the log's end is
  // checked once both are done. A standby or a controller of some shards waits for the log first.
  const bool load_while_opening = config.shards == 1 && !standby && !per_shard && !in_group;
  auto started = std::chrono::steady_clock::now();  // the replay's time below counts the log's open too
  std::optional<StateSnapshot> early_snapshot;
  std::unique_ptr<EventLog> log;
  if (load_while_opening) {
    auto opening = std::async(std::launch::async, [&] {
      return open_log_waiting(config, accept_log_loss, standby, per_shard, ownership, takeover);
    });
    early_snapshot = load_newest_snapshot(snapshot_dir(config), 0, {}, warn, kControllerStart);
    log = opening.get();
  } else {
    log = open_log_waiting(config, accept_log_loss, standby, per_shard, ownership, takeover);
  }
  refuse_shard_mismatch(config, *log);
  if (group) follow_controller_group(*group, *log, ownership, config);
  struct StopFollowing {  // before the log closes, however run() ends
    KafkaControllerGroup* group;
    ~StopFollowing() {
      if (group) group->listen(nullptr);
    }
  } stop_following{group.get()};
  if (standby) exposer = serve_metrics(config, *metrics);
  notify_status("replaying the event log");
  ClusterState state;
  const uint32_t shards = config.shards;
  std::vector<uint64_t> shard_ends(shards, 0);  // by shard: the next offset to fold
  uint64_t replayed_events = 0;
  std::string replayed_from = " from the start";
  if (shards == 1) {
    // A snapshot is a cache: any that does not load is said and ignored, and the log replayed from its start.
    uint64_t from = 0;
    // kControllerStart: unfinished jobs' spec cores decoded by the load's two threads (the first pass reads them all).
    std::optional<StateSnapshot> snapshot;
    // Asked with or without a snapshot: on Kafka, where a stopped leader is found and named.
    const uint64_t log_end = log->end_offset(0);
    if (early_snapshot && early_snapshot->next_offset <= log_end) {
      snapshot = std::move(early_snapshot);
    } else if (!load_while_opening || early_snapshot) {  // past the log's end: said, and an older one taken
      early_snapshot.reset();
      snapshot = load_newest_snapshot(snapshot_dir(config), 0, {log_end, INT64_MAX}, warn, kControllerStart);
    }
    if (snapshot) {
      state = std::move(snapshot->state);
      from = snapshot->next_offset;
      replayed_from = fmt::format(" after a snapshot up to offset {}", from);
    }
    auto replayed = replay_partition(*log, 0, from, state);
    shard_ends[0] = replayed.next_offset;
    replayed_events = replayed.events;
  } else {
    // A snapshot of every shard says how far it folded each; the rest is replayed, in time order.
    std::vector<uint64_t> log_ends(shards);
    for (uint32_t shard = 0; shard < shards; ++shard) log_ends[shard] = log->end_offset(shard);
    auto snapshot = load_newest_sharded_snapshot(snapshot_dir(config), log_ends, warn, kControllerStart);
    replayed_from = fmt::format(" of {} shards from their start, in their time order", shards);
    if (snapshot) {
      state = std::move(snapshot->state);
      shard_ends = snapshot->shard_next_offsets;
      replayed_from = fmt::format(" of {} shards after a snapshot up to offsets {}, in their time order", shards,
                                  join_numbers(shard_ends));
    }
    replayed_events = replay_shards_in_time_order(*log, shard_ends, state).events;
  }
  spdlog::info("replayed {} events{} in {:.3f} s: {} jobs, {} nodes, {} anomalies", replayed_events, replayed_from,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), state.jobs.size(),
               state.nodes.size(), state.anomaly_count);

  auto context = std::make_shared<ControllerContext>();
  context->metrics = metrics;
  if (args.has("socket")) context->socket_override = config.controller_socket;
  context->boot_time_us = wall_clock_us();
  context->running->install(make_running_config(config, config_text, config_path, context->boot_time_us, {}));
  context->partitions->set(effective_partitions(context->configured_partitions(), state.partition_table));
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  context->controller_name = fmt::format("cairnctld@{}:{}", host, getpid());
  // ControllerAddr= may list several controllers (a writer and its standbys, other hosts):
  // this one listens on the first of them it can bind, and names it in its claims so that
  // controllers and agents on other hosts find it through the log.
  const std::vector<std::string> listen_addresses = controller_listen_addresses(config);
  const size_t listen_first = first_bindable_address(listen_addresses, config.controller_port);
  const ShardOwnerAddress owner_address{
      context->controller_name,
      listen_addresses[listen_first].empty()
          ? "unix:" + config.controller_socket
          : fmt::format("tcp:{}:{}", listen_addresses[listen_first], config.controller_port),
      host, static_cast<uint32_t>(getpid())};
  // The writer's claim on every shard it writes: the next epoch of each (fences a previous writer's leftovers).
  std::vector<uint64_t> epochs(shards), claim_offsets(shards);
  for (uint32_t shard = 0; shard < shards; ++shard) {
    epochs[shard] = state.shards[shard].epoch;
    if (!ownership.owns(shard)) continue;
    EventMeta claim;
    claim.time_us = wall_clock_us();
    claim.shard = shard;
    claim.epoch = epochs[shard] = state.shards[shard].epoch + 1;
    claim.actor = {static_cast<uint32_t>(getuid()), "cairnctld", schema::ActorKind::SYSTEM};
    claim_offsets[shard] = claim_shard(*log, claim, owner_address, state, shard_ends[shard]);
  }
  context->ownership = ownership;
  context->read_by_others = per_shard || in_group;
  EventLog* raw_log = log.get();
  context->shard_end = [raw_log](uint32_t shard) { return raw_log->end_offset(shard); };
  context->shard = ownership.owned().empty() ? 0 : ownership.owned().front();  // none: a read replica
  context->epoch = epochs[context->shard];
  if (shards > 1) context->shard_epochs = epochs;
  uint64_t epoch = context->epoch;
  // Where the controller's order of durable events starts (CommittedEvent::offset): shard 0's
  // offset with one shard, a count over all shards with several.
  uint64_t end_offset = 0;
  for (uint64_t end : shard_ends) end_offset += end;
  context->acked_end->store(end_offset);
  for (uint32_t shard = 0; shard < shards && shard < context->shard_applied_end->size(); ++shard)
    (*context->shard_applied_end)[shard].store(shard_ends[shard]);
  metrics->start(wall_clock_us(), context->shard, log.get(), context->acked_end);

  caf::actor_system_config caf_config;
  register_controller_messages(caf_config);
  // CAIRN_CAF_SCHEDULER=loop: the actors run on the RPC loop's thread (common/loop_scheduler.hpp):
  // 8-18% less controller CPU per trivial job, no shorter wall, and a scheduling pass or a
  // snapshot's encoding (tens of ms with a long queue) then holds every RPC. Not the default:
  // docs/decisions.md, "The controller's actors on its RPC loop thread, when asked".
  bool actors_on_loop = loop_scheduler_chosen(false);
  if (actors_on_loop)
    use_loop_scheduler(caf_config);
  else
    use_actor_scheduler(caf_config, actor_worker_threads(std::thread::hardware_concurrency()), WorkerWakes::backlog_only);
  caf::actor_system system{caf_config};
  system.await_actors_before_shutdown(false);
  context->system = &system;
  context->outside_requests = std::make_shared<OutsideRequests>(system);

  auto live = live_jobs(state);
  std::erase_if(live, [&](uint64_t id) { return !ownership.owns(shard_of_job(id)); });  // their owners' jobs
  std::string logged_config = state.config_text;
  // Never issue an id twice, even after an accepted loss of the records that held it.
  std::vector<uint64_t> next_ids(shards);
  for (uint32_t shard = 0; shard < shards; ++shard)
    next_ids[shard] = std::max(next_job_id(state, shard), log->noted_job_id(shard) + 1);
  auto history = std::make_shared<JobHistory>(job_history_dir(config));
  if (history->entry_count() < state.purged_jobs)
    spdlog::warn("the job history in {} holds {} jobs but the log purged {}: sacct will miss the others",
                 history->dir(), history->entry_count(), state.purged_jobs);
  // Wire every actor before any message flows: they read context->actors.
  context->actors.history = spawn_job_history(system, context, history);
  auto readable = std::make_shared<ReadableView>();
  context->actors.query_view = spawn_query_view(system, context, readable, std::move(state), end_offset);
  context->actors.query_reader = spawn_query_reader(system, context, readable);
  context->actors.dispatcher = spawn_dispatcher(system, context);
  context->actors.log = spawn_log_actor(system, *log, context, std::move(next_ids));
  std::map<std::string, NodeActor> node_actors;
  for (const auto& node : config.nodes) node_actors[node.name] = spawn_node_actor(system, context, node.name);
  context->running->install(
      make_running_config(config, config_text, config_path, context->boot_time_us, std::move(node_actors)));
  context->actors.config_admin = spawn_config_admin(system, context);
  context->actors.scheduler = spawn_scheduler(system, context);
  context->actors.accounts = spawn_account_admin(system, context);
  context->actors.node_admin = spawn_node_admin(system, context);
  context->actors.partition_admin = spawn_partition_admin(system, context);
  context->actors.reservations = spawn_reservation_admin(system, context);
  caf::anon_send(context->actors.dispatcher, live_atom_v, live);
  ForeignShardTails tails;  // stopped before the log closes, however run() ends
  for (uint32_t shard : ownership.not_owned())
    tails.threads.push_back(tail_foreign_shard(*log, shard, shard_ends[shard], context->actors.log,
                                               &(*context->shard_applied_end)[shard], tails.stopping));
  // Started on a file other than the one the log last recorded, or on a log that recorded none
  // yet (its first start): the log records the configuration, so that `--at` views of any
  // later moment read the one in force then, not the file as it is when they ask.
  if (logged_config != config_text)
    caf::anon_send(context->actors.config_admin, config_logged_atom_v, logged_config);

  // A newer claim on the shard (a second controller) fences this one: it stops writing and exits.
  // A log no second writer can open (the file log's lock) cannot be fenced: there is no
  // watch, and appends are acknowledged as soon as they are durable.
  std::atomic<bool> fenced{false};
  LogActor log_actor = context->actors.log;
  std::vector<std::unique_ptr<FenceWatch>> watches;  // one per shard this controller writes
  if (log->exclusive_writer()) {
    for (uint32_t shard = 0; shard < shards; ++shard) caf::anon_send(log_actor, checked_atom_v, shard, UINT64_MAX);
  } else {
    for (uint32_t shard : ownership.owned())
      watches.push_back(std::make_unique<FenceWatch>(
          *log, shard, claim_offsets[shard] + 1, epochs[shard],
          [&fenced, log_actor, shard](const FenceNotice& notice) {
            spdlog::critical("fenced: {} claimed shard {} with epoch {} at offset {}; this controller stops writing",
                             notice.controller, shard, notice.epoch, notice.offset);
            caf::anon_send(log_actor, fenced_atom_v, notice.epoch, notice.controller);
            fenced = true;
            ::kill(::getpid(), SIGTERM);
          },
          [log_actor, shard](uint64_t end) { caf::anon_send(log_actor, checked_atom_v, shard, end); }));
  }

  KjLoopThread loop;
  std::optional<ActorsOnLoop> actors_on_loop_thread;  // destroyed before the loop
  if (actors_on_loop) actors_on_loop_thread.emplace(loop, system);
  RpcListenerOptions listen;
  listen.unix_path = config.controller_socket;
  std::optional<RpcListener> bound;
  for (size_t i = listen_first; !bound; ++i) {
    if (!listen_addresses[i].empty())
      listen.tcp_address = fmt::format("{}:{}", listen_addresses[i], config.controller_port);
    try {
      bound.emplace(loop, listen, controller_bootstrap(loop, context));
    } catch (const std::runtime_error& e) {
      if (i + 1 == listen_addresses.size()) throw;
      spdlog::info("{}; trying the next ControllerAddr", e.what());
    }
    // The claims name where this controller listens: another process took that address since.
    if (bound && i != listen_first && ownership.owned().size() > 0)
      throw std::runtime_error(fmt::format(
          "ControllerAddr={}: {}:{} was taken by another process after this controller named it in its shard "
          "claims; start it again",
          config.controller_addr, listen_addresses[listen_first], config.controller_port));
  }
  RpcListener& listener = *bound;
  std::error_code ignored_error;
  // Where the shards this controller writes are served (on Kafka, renewed: the owner's lease,
  // which standbys wait on, also when it writes every shard).
  std::optional<ShardEndpoints> endpoints;
  if (per_shard || on_kafka) {
    std::vector<std::string> files;
    for (uint32_t shard : ownership.owned()) files.push_back(shard_endpoint_path(config, shard));
    endpoints.emplace(std::move(files), listener.unix_endpoint(), on_kafka ? kShardLeaseRenewal : std::chrono::milliseconds(0));
  } else if (shards > 1) {
    // The writer of every shard: agents and other controllers find it at ControllerSocket=.
    for (uint32_t shard = 0; shard < shards; ++shard)
      std::filesystem::remove(shard_endpoint_path(config, shard), ignored_error);
  }
  spdlog::info("{} ready: {}{}, {} live jobs, listening on {}{}", context->controller_name,
               shards == 1 ? fmt::format("epoch {}", epoch) : fmt::format("{} shards, epochs {}", shards, join_numbers(epochs)),
               per_shard || in_group ? fmt::format(", writing shards {}", ownership.text()) : "",
               live.size(),
               listener.unix_endpoint(), listen.tcp_address.empty() ? "" : " and " + listener.tcp_endpoint());
  notify_ready(fmt::format("serving: epoch {}, listening on {}{}", epoch, listener.unix_endpoint(),
                           listen.tcp_address.empty() ? "" : " and " + listener.tcp_endpoint()));

  ReaderReport reader_report;
  if (shards > 1) reader_report.start(shard_readers_dir(config), context, shards);
  if (group) write_group_member_files(config, ownership, group->membership());
  TakeoverWatch takeover_watch;  // stopped before the log closes
  {
    std::vector<uint32_t> watched;
    for (uint32_t shard : takeover.owned())
      if (!ownership.owns(shard)) watched.push_back(shard);
    takeover_watch.start(config.event_log.substr(5), watched, ownership.text());
  }

  // SIGHUP: as `scontrol reconfigure` by the controller's own user (who may signal it).
  Caller hangup = caller_for_uid(getuid(), getgid(), config);
  hangup.is_operator = true;
  ConfigAdminActor config_admin = context->actors.config_admin;
  int received = wait_for_stop_signal(reopen_log_file, [&] {
    spdlog::info("SIGHUP received: reading {} again", config_path);
    caf::anon_send(config_admin, reconfigure_atom_v, hangup);
  });
  notify_stopping();
  if (g_fenced) fenced = true;
  if (fenced && group) group->stop_joining();  // a fenced member takes no shard on its way out
  if (g_restart) spdlog::info("stopping, to start again with the shard to take over");
  else if (!fenced) spdlog::info("signal {} received: shutting down", received);
  listener.close();
  loop.stop();
  context->outside_requests.reset();  // it holds an actor: before the actor system goes
  log->flush();
  // The query reader has a thread of its own, which the actor system's destructor waits for
  // until the actor is gone, and it and the context hold each other: stop it, drop the handle.
  caf::anon_send_exit(context->actors.query_reader, caf::exit_reason::user_shutdown);
  context->actors.query_reader = nullptr;
  // CAF 0.17's actor_system destructor can deadlock (its clock thread and the coordinator wait
  // on each other) with many nodes' timers. Should the orderly teardown below (which closes the
  // log: META says "closed") not end within 10 s, exit anyway: everything acknowledged is
  // durable, and the log's next open checks its tail as after a crash.
  int status = fenced ? 3 : 0;
  std::thread([status] {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    spdlog::warn("the shutdown did not finish within 10 s; exiting without it");
    finish(status);
  }).detach();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  g_argv = argv;
  // Before any thread exists, so that only sigwait sees these signals.
  block_daemon_signals({SIGHUP});
  log_to_stderr();
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l cairnctld: %v");
  try {
    auto args = parse_options("cairnctld",
                              {{0, "conf", true, ""},
                               {'D', "", false, "foreground"},
                               {0, "accept-log-loss", false, ""},
                               {0, "standby", false, ""},
                               {0, "shards", true, ""},
                               {0, "takeover", true, ""},
                               {0, "socket", true, ""},
                               {'h', "help", false, ""},
                               {'V', "version", false, ""}},
                              {argv + 1, argv + argc});
    if (args.has("help")) {
      std::cout << kUsage;
      return 0;
    }
    if (args.has("version")) {
      std::cout << cairn_version_line() << "\n";
      return 0;
    }
    if (!args.positionals.empty())
      throw UsageError("cairnctld: unexpected argument '" + args.positionals.front() + "'");
    int status = run(args);
    finish(status);  // actors with pending timers would keep the runtime alive
  } catch (const UsageError& e) {
    std::cerr << e.what() << "\n" << kUsage;
    return 2;
  } catch (const ShardTaken& e) {  // lost the claim race: as fenced
    spdlog::critical("{}", e.what());
    return 3;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    if (g_restart) finish(1);  // KafkaControllerGroup= took a shard away while starting: start again
    return 1;
  }
}
