// The names of the controller's messages (actors.hpp's type id block).
#include "actors/actors.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduled_actor.hpp>
#include <spdlog/spdlog.h>

namespace cairn {

void register_controller_messages(caf::actor_system_config& config) {
  config.add_message_types<caf::id_block::cairn>();
}

void log_failed_requests(caf::scheduled_actor* self, const char* actor_name) {
  self->set_error_handler([actor_name](caf::scheduled_actor* actor, caf::error& error) {
    spdlog::warn("{}: a request failed: {}", actor_name, actor->system().render(error));
  });
}

}  // namespace cairn
