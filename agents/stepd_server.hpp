// `cairn-stepd --server`: started once by cairnd, it forks a batch job's supervisor for each
// request on its socket (agents/supervisor_wire.hpp) instead of cairnd exec'ing cairn-stepd
// per job. Each supervisor is made the agent's child (clone with CLONE_PARENT), so that the
// agent reaps it and counts its CPU as before, and leads a session of its own.
#pragma once

namespace cairn {

using SuperviseMain = int (*)(int argc, char** argv);

// Serves until the agent closes its end of socket_fd; returns the exit code.
int serve_supervisors(int socket_fd, SuperviseMain supervise);

}  // namespace cairn
