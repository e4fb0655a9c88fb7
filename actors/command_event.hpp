// The event a job command appends once job_commands.hpp allowed it.
#pragma once

#include "actors/controller_messages.hpp"

namespace cairn {

EventDraft command_event(const ControlRequest& request, const JobRecord& job);

}  // namespace cairn
