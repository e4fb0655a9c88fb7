// The writer's clock for event timestamps (reducers never read it).
#pragma once

#include <chrono>
#include <cstdint>

namespace cairn {

inline int64_t wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace cairn
