// Watches the OOM descriptors of the running jobs' memory cgroups (see
// MemoryCgroups::watch_oom) on a thread of its own, and says which job run's
// cgroup had an event: an OOM kill of one process of a job that keeps running
// is reported while it runs, not only when the job ends.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "common/unique_fd.hpp"

namespace cairn {

class MemoryEventWatch {
 public:
  // Called on the watch thread; must return quickly (send a message).
  using OnEvent = std::function<void(uint64_t job_id, uint32_t run)>;

  explicit MemoryEventWatch(OnEvent on_event);  // throws std::system_error
  ~MemoryEventWatch();                           // joins the thread
  MemoryEventWatch(const MemoryEventWatch&) = delete;
  MemoryEventWatch& operator=(const MemoryEventWatch&) = delete;

  // Any thread. The watch owns fd from now on; a second add for the run replaces the first.
  void add(uint64_t job_id, uint32_t run, UniqueFd fd);
  // Any thread. Closes the run's descriptor; events already taken may still be reported.
  void remove(uint64_t job_id, uint32_t run);

 private:
  struct Watched {
    uint64_t job_id = 0;
    uint32_t run = 0;
    UniqueFd fd;
  };
  void run_loop();

  OnEvent on_event_;
  UniqueFd epoll_;
  UniqueFd wake_;  // eventfd: stop
  std::mutex mutex_;
  uint64_t next_token_ = 1;
  std::map<uint64_t, Watched> watched_;  // by epoll token
  std::thread thread_;
};

}  // namespace cairn
