// cairnctld: replays the shard's log, claims the writer epoch, starts the
// actors and the RPC front, then waits for SIGTERM/SIGINT.
#include <caf/all.hpp>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <iostream>

#include "actors/controller_actors.hpp"
#include "actors/job_commands.hpp"
#include "actors/rpc_server.hpp"
#include "common/daemon_signals.hpp"
#include "common/option_parser.hpp"
#include "events/replay.hpp"

using namespace cairn;

namespace {

constexpr const char* kUsage = "usage: cairnctld [--conf FILE] [-D]\n";

std::vector<BbPoolPolicy> pool_policies(const ClusterConfig& config) {
  std::vector<BbPoolPolicy> pools;
  if (const auto* first = config.default_bb_pool()) pools.push_back({first->name, first->capacity_bytes});
  for (const auto& pool : config.bb_pools)
    if (pools.empty() || pool.name != pools.front().name) pools.push_back({pool.name, pool.capacity_bytes});
  return pools;
}

// Jobs that need an actor right away: started and not finished (timers, agents' reports),
// or due for resubmission. A queued job gets its actor at its next event.
std::vector<uint64_t> live_jobs(const ClusterState& state) {
  std::vector<uint64_t> ids;
  for (const auto& [id, job] : state.jobs)
    if ((!is_final(job.state) && job.state != JobState::PENDING) || should_resubmit(job)) ids.push_back(id);
  return ids;
}

AppendAck append_blocking(caf::actor_system& system, const caf::actor& log, EventDraft draft) {
  AppendAck ack;
  caf::scoped_actor self{system};
  self->request(log, caf::infinite, append_atom::value, std::move(draft))
      .receive([&](const AppendAck& result) { ack = result; },
               [&](caf::error& error) { ack.error = system.render(error); });
  return ack;
}

// A predecessor killed a moment ago may still hold the log's lock while the
// kernel tears it down: wait for it a little rather than fail a restart.
std::unique_ptr<EventLog> open_log_waiting_for_lock(const std::string& spec) {
  constexpr auto kLockWait = std::chrono::seconds(10);
  auto deadline = std::chrono::steady_clock::now() + kLockWait;
  bool said = false;
  while (true) {
    try {
      return open_event_log(spec);
    } catch (const LogError& e) {
      bool locked = std::string(e.what()).find("locked by another process") != std::string::npos;
      if (!locked || std::chrono::steady_clock::now() >= deadline) throw;
      if (!said) spdlog::warn("{}; waiting up to {} s for it to stop", e.what(), kLockWait.count());
      said = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

int run(const ParsedArgs& args) {
  auto config = load_config(find_config_path(args.get("conf")));
  auto log = open_log_waiting_for_lock(config.event_log);
  ClusterState state;
  auto started = std::chrono::steady_clock::now();
  auto replayed = replay_partition(*log, 0, 0, state);
  spdlog::info("replayed {} events in {:.3f} s: {} jobs, {} nodes, {} anomalies", replayed.events,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), state.jobs.size(),
               state.nodes.size(), state.anomaly_count);

  auto context = std::make_shared<ControllerContext>();
  context->config = config;
  context->partitions = partition_policies(config);
  context->pools = pool_policies(config);
  context->shard = 0;
  context->epoch = state.shards[0].epoch + 1;
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  context->controller_name = fmt::format("cairnctld@{}:{}", host, getpid());

  caf::actor_system_config caf_config;
  caf_config.set("scheduler.policy", caf::atom("sharing"));
  caf_config.set("scheduler.max-threads", std::max(1u, std::min(2u, std::thread::hardware_concurrency())));
  caf::actor_system system{caf_config};
  system.await_actors_before_shutdown(false);

  auto live = live_jobs(state);
  uint64_t next_id = next_job_id(state, 0);
  uint64_t end_offset = log->end_offset(0);
  // Wire every actor before any message flows: they read context->actors.
  context->actors.query_view = spawn_query_view(system, context, std::move(state), end_offset);
  context->actors.dispatcher = spawn_dispatcher(system, context);
  context->actors.log = spawn_log_actor(system, *log, context, next_id);
  for (const auto& node : config.nodes) context->actors.nodes[node.name] = spawn_node_actor(system, context, node.name);
  context->actors.scheduler = spawn_scheduler(system, context);

  EventDraft claim;
  claim.actor = {static_cast<uint32_t>(getuid()), "cairnctld", schema::ActorKind::SYSTEM};
  uint64_t epoch = context->epoch;
  std::string name = context->controller_name;
  claim.build = [epoch, name](const EventMeta& meta) { return make::epoch_claimed(meta, 0, epoch, name); };
  auto ack = append_blocking(system, context->actors.log, std::move(claim));
  if (!ack.ok) throw LogError("cannot claim the writer epoch: " + ack.error);
  caf::anon_send(context->actors.dispatcher, live_atom::value, live);

  KjLoopThread loop;
  RpcListenerOptions listen;
  listen.unix_path = config.controller_socket;
  if (config.controller_port != 0)
    listen.tcp_address = fmt::format("{}:{}", config.controller_addr, config.controller_port);
  RpcListener listener(loop, listen, controller_bootstrap(loop, context));
  spdlog::info("{} ready: epoch {}, {} live jobs, listening on {}{}", context->controller_name, epoch, live.size(),
               listener.unix_endpoint(), listen.tcp_address.empty() ? "" : " and " + listener.tcp_endpoint());

  int received = wait_for_stop_signal();
  spdlog::info("signal {} received: shutting down", received);
  listener.close();
  loop.stop();
  log->flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists, so that only sigwait sees these signals.
  block_daemon_signals();
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l cairnctld: %v");
  try {
    auto args = parse_options("cairnctld", {{0, "conf", true, ""}, {'D', "", false, "foreground"}, {'h', "help", false, ""}},
                              {argv + 1, argv + argc});
    if (args.has("help")) {
      std::cout << kUsage;
      return 0;
    }
    int status = run(args);
    std::_Exit(status);  // actors with pending timers would keep the runtime alive
  } catch (const UsageError& e) {
    std::cerr << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
