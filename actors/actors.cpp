// The names of the controller's messages (actors.hpp's type id block).
#include "actors/actors.hpp"

#include <caf/actor_system_config.hpp>

namespace cairn {

void register_controller_messages(caf::actor_system_config& config) {
  config.add_message_types<caf::id_block::cairn>();
}

}  // namespace cairn
