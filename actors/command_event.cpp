#include "actors/command_event.hpp"

namespace cairn {

EventDraft command_event(const ControlRequest& request, const JobRecord& job) {
  EventDraft draft;
  draft.actor = actor_info(request.caller);
  draft.command_id = request.caller.command_id;
  draft.job_id = job.id;
  uint64_t id = job.id;
  int32_t signal = request.signal;
  bool admin = request.caller.is_operator;
  switch (request.verb) {
    case ControlVerb::cancel:
      draft.build = [id, signal](const EventMeta& meta) { return make::job_cancelled(meta, id, signal); };
      break;
    case ControlVerb::suspend:
      draft.build = [id](const EventMeta& meta) { return make::job_suspend(meta, id); };
      break;
    case ControlVerb::resume:
      draft.build = [id](const EventMeta& meta) { return make::job_resume(meta, id); };
      break;
    case ControlVerb::hold:
    case ControlVerb::uhold: {
      bool by_admin = admin && request.verb == ControlVerb::hold;
      draft.build = [id, by_admin](const EventMeta& meta) { return make::job_held(meta, id, by_admin); };
      break;
    }
    case ControlVerb::release:
      draft.build = [id](const EventMeta& meta) { return make::job_released(meta, id); };
      break;
    case ControlVerb::requeue:
    case ControlVerb::requeue_hold: {
      bool hold = request.verb == ControlVerb::requeue_hold;
      JobState cause = job.state;
      uint32_t attempt = job.restarts + 1;
      draft.build = [id, hold, cause, attempt](const EventMeta& meta) {
        return make::job_requeued(meta, id, cause, attempt, hold, 0, false);
      };
      break;
    }
    case ControlVerb::signal:
      draft.build = [id, signal](const EventMeta& meta) { return make::job_signalled(meta, id, signal, false); };
      break;
    case ControlVerb::split:  // check_job_command asks for no event
      break;
  }
  return draft;
}

}  // namespace cairn
