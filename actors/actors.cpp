// The names of the controller's messages (actors.hpp's type id block).
#include "actors/actors.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduled_actor.hpp>
#include <spdlog/spdlog.h>

#include "events/read_model.hpp"

namespace cairn {

void register_controller_messages(caf::actor_system_config& config) {
  config.add_message_types<caf::id_block::cairn>();
}

void log_failed_requests(caf::scheduled_actor* self, const char* actor_name) {
  self->set_error_handler([actor_name](caf::scheduled_actor* actor, caf::error& error) {
    spdlog::warn("{}: a request failed: {}", actor_name, actor->system().render(error));
  });
}

RunningConfig make_running_config(ClusterConfig config, std::string text, std::string source, int64_t since_us,
                                  std::map<std::string, NodeActor> node_actors) {
  RunningConfig running;
  running.partitions = partition_policies(config);
  running.pools = pool_policies(config);
  running.node_features = node_feature_map(config);
  running.node_gres = node_gres_map(config);
  running.config = std::move(config);
  running.text = std::move(text);
  running.source = std::move(source);
  running.since_us = since_us;
  running.node_actors = std::move(node_actors);
  return running;
}

RunningConfigs::RunningConfigs() { install(RunningConfig{}); }

void RunningConfigs::install(RunningConfig next) {
  std::lock_guard lock(mutex_);
  versions_.push_back(std::make_unique<const RunningConfig>(std::move(next)));
  current_.store(versions_.back().get(), std::memory_order_release);
}

void RunningConfigs::release() {
  std::lock_guard lock(mutex_);
  auto empty = std::make_unique<const RunningConfig>();
  current_.store(empty.get(), std::memory_order_release);
  versions_.clear();
  versions_.push_back(std::move(empty));
}

}  // namespace cairn
