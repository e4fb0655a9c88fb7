// scontrol reconfigure and SIGHUP: only root, SlurmUser and Operators= may (Slurm's
// validate_super_user). One at a time: cairn.conf is read again from where the controller
// found it and parsed (a syntax error changes nothing and names its line and key); what
// cannot change live is refused by key; removals the jobs forbid are refused against the
// folded state; otherwise its ConfigApplied event is appended and, once durable, the new
// configuration is installed whole (a node actor for each new node) and the scheduler kicked.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <deque>

#include "actors/actors.hpp"
#include "actors/view_current.hpp"
#include "common/logged_config.hpp"
#include "events/config_change.hpp"

namespace cairn {
namespace {

// ESLURM_USER_ID_MISSING, as slurmctld answers a reconfigure from another user.
constexpr const char* kReconfigureDenied = "Invalid user id";

struct PendingReconfigure {
  Caller caller;
  caf::typed_response_promise<Recorded> reply;
};

struct ConfigAdminState {
  std::shared_ptr<const ControllerContext> context;
  std::deque<PendingReconfigure> queue;
  std::shared_ptr<PendingReconfigure> current;
  static inline const char* name = "config_admin";
};

using ConfigAdmin = std::remove_pointer_t<ConfigAdminActor::stateful_pointer<ConfigAdminState>>;

void next_reconfigure(ConfigAdmin* self);

void finish(ConfigAdmin* self, bool ok, const std::string& error) {
  auto& st = self->state;
  if (st.current) {
    if (!ok) spdlog::error("reconfigure by {} (uid {}) refused: {}", st.current->caller.user, st.current->caller.uid, error);
    st.current->reply.deliver(Recorded{ok, error});
  }
  st.current.reset();
  next_reconfigure(self);
}

// The new configuration, with the node actors of the nodes it keeps and new ones for the
// nodes it adds (spawned once the configuration naming them is in force).
void install(ConfigAdmin* self, const ClusterConfig& next, const std::string& text, const std::string& source,
             int64_t since_us) {
  const auto& context = self->state.context;
  std::map<std::string, NodeActor> kept;
  std::vector<std::string> added;
  const auto& current = context->node_actors();
  for (const auto& node : next.nodes) {
    auto it = current.find(node.name);
    if (it != current.end())
      kept.emplace(node.name, it->second);
    else
      added.push_back(node.name);
  }
  context->running->install(make_running_config(next, text, source, since_us, kept));
  if (added.empty()) return;
  for (const auto& name : added) kept.emplace(name, spawn_node_actor(self->system(), context, name));
  context->running->install(make_running_config(next, text, source, since_us, std::move(kept)));
}

void append_and_install(ConfigAdmin* self, std::shared_ptr<const ClusterConfig> next, std::string text,
                        std::vector<std::string> changes) {
  auto& st = self->state;
  const Caller& caller = st.current->caller;
  std::string source = st.context->running->current().source;
  if (!st.context->owns(0)) {
    // Several controllers: ConfigApplied is shard 0's, recorded by its owner (the reconfigure
    // went there too); this one installs what it read from its own file.
    install(self, *next, text, source, st.context->now_us());
    spdlog::info("reconfigure by {} (uid {}): {} change(s) read from {} (recorded by shard 0's owner)", caller.user,
                 caller.uid, changes.size(), source);
    for (const auto& change : changes) spdlog::info("reconfigure: {}", change);
    self->send(st.context->actors.query_view, config_installed_atom_v);
    self->send(st.context->actors.scheduler, kick_atom_v);
    return finish(self, true, {});
  }
  EventDraft draft;
  draft.actor = actor_info(caller);
  draft.command_id = caller.command_id;
  draft.build = [text, source, changes](const EventMeta& meta) {
    return make::config_applied(meta, text, source, changes);
  };
  self->request(st.context->actors.log, caf::infinite, append_atom_v, std::move(draft))
      .then([=](const AppendAck& ack) {
        if (!ack.ok) return finish(self, false, ack.error);
        auto& state = self->state;
        install(self, *next, text, source, state.context->now_us());
        spdlog::info("reconfigure by {} (uid {}): {} change(s) read from {}", state.current->caller.user,
                     state.current->caller.uid, changes.size(), source);
        for (const auto& change : changes) spdlog::info("reconfigure: {}", change);
        self->request(state.context->actors.query_view, caf::infinite, caught_up_atom_v, ack.offset + 1)
            .then([=](bool) {
              // Installed after the event was applied: the partitions in force follow the file now.
              self->send(self->state.context->actors.query_view, config_installed_atom_v);
              self->send(self->state.context->actors.scheduler, kick_atom_v);
              finish(self, true, {});
            });
      });
}

void next_reconfigure(ConfigAdmin* self) {
  auto& st = self->state;
  if (st.current || st.queue.empty()) return;
  st.current = std::make_shared<PendingReconfigure>(std::move(st.queue.front()));
  st.queue.pop_front();
  const RunningConfig& running = st.context->running->current();
  std::string text;
  auto next = std::make_shared<ClusterConfig>();
  try {
    text = read_logged_config(running.source);  // a change of gres.conf alone is a change too
    *next = parse_logged_config(text, running.source);
    if (!st.context->socket_override.empty()) next->controller_socket = st.context->socket_override;
  } catch (const ConfigError& error) {
    return finish(self, false, error.what());
  }
  ConfigChange change = diff_config(running.config, *next);
  if (!change.refused.empty()) return finish(self, false, refused_change_text(change));
  if (text == running.text) return finish(self, true, {});  // the file as in force: nothing to record
  // The running configuration lives as long as the controller (RunningConfigs): no owner needed.
  std::shared_ptr<const ClusterConfig> before(std::shared_ptr<void>(), &running.config);
  QueryViewActor query_view = st.context->actors.query_view;
  when_view_is_current(self, *st.context, [=] {
    self->request(query_view, caf::infinite, config_check_atom_v, ConfigCandidate{before, next})
        .then([=](const std::string& refusal) {
          if (!refusal.empty()) return finish(self, false, refusal);
          append_and_install(self, next, text, change.changes);
        });
  });
}

// At start on a file other than the log's last configuration: records the file's text and
// what changed since (across a restart every key may change). A log that recorded none yet
// records the file as the first configuration, with no changes.
void record_start(ConfigAdmin* self, const std::string& logged_text) {
  const auto& context = self->state.context;
  const RunningConfig& running = context->running->current();
  std::vector<std::string> changes;
  if (!logged_text.empty()) {
    try {
      ConfigChange change = diff_config(parse_logged_config(logged_text, running.source), running.config);
      for (const auto& key : change.refused) changes.push_back(key + " changed across a restart");
      changes.insert(changes.end(), change.changes.begin(), change.changes.end());
    } catch (const ConfigError& error) {
      changes.push_back(std::string("the logged configuration does not parse: ") + error.what());
    }
  }
  EventDraft draft;
  draft.actor = {static_cast<uint32_t>(getuid()), "cairnctld", schema::ActorKind::SYSTEM};
  draft.build = [text = running.text, source = running.source, changes](const EventMeta& meta) {
    return make::config_applied(meta, text, source, changes);
  };
  self->request(context->actors.log, caf::infinite, append_atom_v, std::move(draft)).then([=](const AppendAck& ack) {
    if (!ack.ok) return spdlog::error("cannot record the configuration read at start: {}", ack.error);
    if (logged_text.empty()) return spdlog::info("the configuration in force is recorded in the log");
    spdlog::info("started on a configuration other than the log's last: {} change(s) recorded", changes.size());
  });
}

ConfigAdminActor::behavior_type config_admin(ConfigAdmin* self, std::shared_ptr<const ControllerContext> context) {
  self->state.context = std::move(context);
  log_failed_requests(self, "config_admin");
  return {
      [=](reconfigure_atom, Caller& caller) -> caf::result<Recorded> {
        if (!caller.may_write) return Recorded{false, std::string(kReadOnlyDenied)};
        if (!caller.is_operator) {
          spdlog::error("Security violation, RECONFIGURE RPC from uid={}", caller.uid);
          return Recorded{false, kReconfigureDenied};
        }
        auto promise = self->make_response_promise<Recorded>();
        self->state.queue.push_back({std::move(caller), promise});
        next_reconfigure(self);
        return promise;
      },
      [=](config_logged_atom, const std::string& logged_text) { record_start(self, logged_text); },
  };
}

}  // namespace

ConfigAdminActor spawn_config_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context) {
  return system.spawn(config_admin, std::move(context));
}

}  // namespace cairn
