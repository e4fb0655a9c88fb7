// oom_event_time v1|v2 CGROUP_DIR READY_FILE: watches the memory cgroup's OOM
// events (as cairnd does), creates READY_FILE once watching, and prints the
// wall-clock time in microseconds of the first event: the kernel's side of
// bench_oom.sh's latency. Exits 1 after 60 s without an event.
#include <poll.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>

#include "agents/memory_cgroup.hpp"

int main(int argc, char** argv) {
  if (argc != 4 || (std::strcmp(argv[1], "v1") != 0 && std::strcmp(argv[1], "v2") != 0)) {
    std::cerr << "usage: oom_event_time v1|v2 CGROUP_DIR READY_FILE\n";
    return 2;
  }
  try {
    auto version = std::strcmp(argv[1], "v1") == 0 ? cairn::CgroupVersion::v1 : cairn::CgroupVersion::v2;
    cairn::UniqueFd watch = cairn::watch_oom_events(version, argv[2]);
    std::ofstream(argv[3]) << "ready\n";
    pollfd waiting{watch.get(), POLLIN, 0};
    if (::poll(&waiting, 1, 60'000) != 1) {
      std::cerr << "oom_event_time: no OOM event in " << argv[2] << " within 60 s\n";
      return 1;
    }
    auto now = std::chrono::system_clock::now().time_since_epoch();
    std::cout << std::chrono::duration_cast<std::chrono::microseconds>(now).count() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "oom_event_time: " << e.what() << "\n";
    return 1;
  }
}
