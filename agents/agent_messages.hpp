// Atoms and message types between cairnd's actors and the inbox. Include only
// from the .cpp files of agents/ that talk to the actors.
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include <vector>

#include "agents/agent_ports.hpp"

namespace cairn::agent_msg {

// Orders from the controller (agent actor, then task actor).
using launch_atom = caf::atom_constant<caf::atom("launch")>;
using suspend_atom = caf::atom_constant<caf::atom("suspend")>;
using resume_atom = caf::atom_constant<caf::atom("resume")>;
using signal_atom = caf::atom_constant<caf::atom("signal")>;
using terminate_atom = caf::atom_constant<caf::atom("terminate")>;
// Children reaped by the SIGCHLD watch (agent actor), one shell's exit (task actor).
using reaped_atom = caf::atom_constant<caf::atom("reaped")>;
using exited_atom = caf::atom_constant<caf::atom("exited")>;
// From a task actor: its batch shell's pid; its run ended; it is gone without an end.
using spawned_atom = caf::atom_constant<caf::atom("spawned")>;
using ended_atom = caf::atom_constant<caf::atom("ended")>;
using forgotten_atom = caf::atom_constant<caf::atom("forgotten")>;
// The controller made a run's end durable.
using acked_atom = caf::atom_constant<caf::atom("acked")>;
// A newer run of the same job replaces this task's run.
using supersede_atom = caf::atom_constant<caf::atom("supersede")>;
// The run's memory cgroup had an event (agent actor, task actor); an OOM kill to report (to the agent actor).
using memory_atom = caf::atom_constant<caf::atom("memory")>;
using oom_atom = caf::atom_constant<caf::atom("oom")>;
// Burst buffers: an order to the staging actor; a stager's outcome.
using bb_stage_atom = caf::atom_constant<caf::atom("bbstage")>;
using bb_teardown_atom = caf::atom_constant<caf::atom("bbteardown")>;
using bb_done_atom = caf::atom_constant<caf::atom("bbdone")>;
// Job steps: a launch (agent actor, which spawns a step actor); a signal (0: terminate).
using step_launch_atom = caf::atom_constant<caf::atom("steplaunch")>;
using step_control_atom = caf::atom_constant<caf::atom("stepctl")>;
// A run an earlier agent started (agent actor, at start).
using adopt_atom = caf::atom_constant<caf::atom("adopt")>;
// Timers.
using kill_atom = caf::atom_constant<caf::atom("kill")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using recheck_atom = caf::atom_constant<caf::atom("recheck")>;
using cleanup_atom = caf::atom_constant<caf::atom("cleanup")>;
using usage_atom = caf::atom_constant<caf::atom("usage")>;

}  // namespace cairn::agent_msg

// Never leave the process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobLaunch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobEnd)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobOom)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::LaunchDone)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StageDone)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StageOrder)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StageOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ExitStatus)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cairn::ReapedChild>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepLaunch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepStarted)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepLaunched)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AdoptedRun)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::UsageDone)
