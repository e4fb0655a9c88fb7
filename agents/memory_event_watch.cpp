#include "agents/memory_event_watch.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <system_error>

#include "agents/memory_cgroup.hpp"

namespace cairn {
namespace {

constexpr uint64_t kWakeToken = 0;

void check(bool ok, const char* what) {
  if (!ok) throw std::system_error(errno, std::system_category(), what);
}

}  // namespace

MemoryEventWatch::MemoryEventWatch(OnEvent on_event)
    : on_event_(std::move(on_event)),
      epoll_(::epoll_create1(EPOLL_CLOEXEC)),
      wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  check(bool(epoll_), "epoll_create1");
  check(bool(wake_), "eventfd");
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kWakeToken;
  check(::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &event) == 0, "epoll_ctl");
  thread_ = std::thread([this] { run_loop(); });
}

MemoryEventWatch::~MemoryEventWatch() {
  uint64_t one = 1;
  [[maybe_unused]] auto written = ::write(wake_.get(), &one, sizeof one);
  thread_.join();
}

void MemoryEventWatch::add(uint64_t job_id, uint32_t run, UniqueFd fd) {
  remove(job_id, run);
  std::lock_guard lock(mutex_);
  uint64_t token = next_token_++;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = token;
  check(::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd.get(), &event) == 0, "epoll_ctl");
  watched_[token] = Watched{job_id, run, std::move(fd)};
}

void MemoryEventWatch::remove(uint64_t job_id, uint32_t run) {
  std::lock_guard lock(mutex_);
  std::erase_if(watched_, [&](auto& entry) {
    if (entry.second.job_id != job_id || entry.second.run != run) return false;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, entry.second.fd.get(), nullptr);
    return true;
  });
}

void MemoryEventWatch::run_loop() {
  epoll_event events[16];
  while (true) {
    int count = ::epoll_wait(epoll_.get(), events, 16, -1);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return;
    for (int i = 0; i < count; ++i) {
      uint64_t token = events[i].data.u64;
      if (token == kWakeToken) return;
      uint64_t job_id = 0;
      uint32_t run = 0;
      {
        std::lock_guard lock(mutex_);
        auto entry = watched_.find(token);
        if (entry == watched_.end()) continue;  // removed meanwhile
        MemoryCgroups::drain_oom_watch(entry->second.fd.get());
        job_id = entry->second.job_id;
        run = entry->second.run;
      }
      on_event_(job_id, run);
    }
  }
}

}  // namespace cairn
