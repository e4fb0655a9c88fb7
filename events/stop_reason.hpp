// Why a running job or step is being stopped: what slurmstepd says in the job's stderr
// ("*** JOB 12 ON n1 CANCELLED AT ... DUE TO TIME LIMIT ***"). It travels with the
// controller's terminate orders (rpc.capnp StopReason, same ordinals). Header only: the
// job's supervisor, cairn-stepd, links nothing else.
#pragma once

#include <cstdint>

namespace cairn {

enum class StopReason : uint8_t {
  none = 0,          // no line (an order that only cleans up)
  cancelled = 1,     // scancel, or the end of the job a step belongs to
  time_limit = 2,
  preemption = 3,
  node_failure = 4,  // another node of the job failed
  requeue = 5,       // scontrol requeue of a running job
};

inline constexpr uint8_t kStopReasonCount = 6;

// A StopReason from the wire (unknown values: none).
constexpr StopReason stop_reason_from(uint32_t value) {
  return value < kStopReasonCount ? static_cast<StopReason>(value) : StopReason::none;
}

}  // namespace cairn
