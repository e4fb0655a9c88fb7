#include "agents/agent_spool.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "common/small_file.hpp"

namespace cairn {
namespace {

// A supervisor records itself within milliseconds of its start; this is for a loaded node.
constexpr auto kSupervisorStartWait = std::chrono::seconds(5);

std::string errno_text(int error_number) { return std::system_category().message(error_number); }

[[noreturn]] void fail(const std::string& what, const std::string& path, int error_number) {
  throw std::runtime_error(fmt::format("{} {}: {}", what, path, errno_text(error_number)));
}

// A run's record as far as it is written (a failed read: none).
std::optional<RunRecord> read_run_record(int fd) {
  auto file = read_small_fd(fd);
  return file.ok() ? parse_run_record(file.text) : std::nullopt;
}

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t length = ::write(fd, text.data(), text.size());
    if (length < 0 && errno == EINTR) continue;
    if (length <= 0) return false;
    text.remove_prefix(static_cast<size_t>(length));
  }
  return true;
}

// True when another open file holds the lock: the run's supervisor lives.
bool held_elsewhere(int fd) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return false;
  return errno == EWOULDBLOCK;
}

bool is_instance(std::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string new_instance() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t length = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (length < 0 && errno == EINTR) continue;
    if (length < 0) throw std::runtime_error("getrandom: " + errno_text(errno));
    got += static_cast<size_t>(length);
  }
  std::string text;
  for (unsigned char byte : bytes) text += fmt::format("{:02x}", byte);
  return text;
}

// The spool's instance, made (atomically) when the spool is new or the file unreadable.
std::string spool_instance(const std::string& dir) {
  const std::string path = dir + "/instance";
  if (auto file = read_small_file(path, O_NOFOLLOW); file.ok()) {
    std::string_view value = file.text;
    while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
    if (is_instance(value)) return std::string(value);
  }
  std::string instance = new_instance();
  const std::string temporary = path + ".new";
  UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd || !write_all(fd.get(), instance + "\n") || ::fsync(fd.get()) != 0) fail("cannot write", temporary, errno);
  fd.reset();
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail("cannot write", path, errno);
  return instance;
}

}  // namespace

UniqueFd open_pidfd(pid_t pid) {
  if (pid <= 1) return UniqueFd();
  return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
}

AgentSpool::AgentSpool(std::string dir) : dir_(std::move(dir)), runs_dir_(dir_ + "/runs") {
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error) throw std::runtime_error("cannot create the spool directory " + dir_ + ": " + error.message());
  // Switched jobs read their scripts through it (see write_script_file).
  ::chmod(dir_.c_str(), 0755);
  const std::string lock_path = dir_ + "/cairnd.lock";
  lock_ = UniqueFd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!lock_) fail("cannot open", lock_path, errno);
  if (::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) fail("cannot lock", lock_path, errno);
    auto holder = read_small_fd(lock_.get()).text;
    while (!holder.empty() && holder.back() == '\n') holder.pop_back();
    throw std::runtime_error(fmt::format("another cairnd{} uses the spool directory {}",
                                         holder.empty() ? "" : " (pid " + holder + ")", dir_));
  }
  if (::ftruncate(lock_.get(), 0) == 0) (void)write_all(lock_.get(), fmt::format("{}\n", ::getpid()));
  instance_ = spool_instance(dir_);
  if (::mkdir(runs_dir_.c_str(), 0700) != 0 && errno != EEXIST) fail("cannot create", runs_dir_, errno);
}

std::string AgentSpool::run_path(uint64_t job_id, uint32_t run) const {
  return runs_dir_ + "/" + run_file_name(job_id, run);
}

UniqueFd AgentSpool::create_run(const RunLaunchFacts& facts) const {
  const std::string path = run_path(facts.job_id, facts.run);
  constexpr int kFlags = O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW;
  UniqueFd fd(::open(path.c_str(), kFlags | O_EXCL, 0600));
  bool leftover = !fd && errno == EEXIST;  // an earlier launch of the run that never started, say
  if (leftover) fd = UniqueFd(::open(path.c_str(), kFlags, 0600));
  if (!fd) fail("cannot create the run record", path, errno);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
    fail("cannot lock the run record", path, errno == EWOULDBLOCK ? EBUSY : errno);
  if ((leftover && ::ftruncate(fd.get(), 0) != 0) || !write_all(fd.get(), launch_line(facts)))
    fail("cannot write the run record", path, errno);
  return fd;
}

std::optional<RunRecord> AgentSpool::read_run(uint64_t job_id, uint32_t run) const {
  auto file = read_small_file(run_path(job_id, run), O_NOFOLLOW);
  if (!file.ok()) return std::nullopt;
  return parse_run_record(file.text);
}

bool AgentSpool::append_run(uint64_t job_id, uint32_t run, const std::string& line) const {
  UniqueFd fd(::open(run_path(job_id, run).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW));
  return fd && write_all(fd.get(), line);
}

void AgentSpool::remove_run(uint64_t job_id, uint32_t run) const { ::unlink(run_path(job_id, run).c_str()); }

void AgentSpool::write_step(const StepRunRecord& record) const {
  const std::string path = runs_dir_ + "/" + step_file_name(record.job_id, record.run, record.step_id);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd || !write_all(fd.get(), format_step_record(record))) fail("cannot write the step record", path, errno);
}

void AgentSpool::remove_step(uint64_t job_id, uint32_t run, uint32_t step_id) const {
  ::unlink((runs_dir_ + "/" + step_file_name(job_id, run, step_id)).c_str());
}

std::vector<FoundRun> AgentSpool::take_runs() const {
  std::vector<FoundRun> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(runs_dir_, error)) {
    const std::string name = entry.path().filename().string();
    if (is_step_file_name(name) || !parse_run_file_name(name)) continue;
    const std::string path = entry.path().string();
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) continue;
    bool alive = held_elsewhere(fd.get());
    auto record = read_run_record(fd.get());
    // A supervisor that has just started records itself in a moment.
    for (auto deadline = std::chrono::steady_clock::now() + kSupervisorStartWait;
         alive && (!record || !record->supervisor) && std::chrono::steady_clock::now() < deadline;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      alive = held_elsewhere(fd.get());
      record = read_run_record(fd.get());
    }
    if (!record) {  // the agent died while writing it: nothing ran
      if (!alive) ::unlink(path.c_str());
      continue;
    }
    FoundRun run;
    if (alive && record->supervisor) {
      run.pidfd = open_pidfd(record->supervisor->pid);
      // Still locked once the pidfd is open: the pid was the supervisor's, not a later process's.
      if (!run.pidfd || !held_elsewhere(fd.get())) {
        alive = false;
        run.pidfd.reset();
        record = read_run_record(fd.get());  // it may have ended meanwhile
        if (!record) continue;
      }
    } else {
      alive = false;
    }
    run.record = std::move(*record);
    run.fate = run_fate(run.record, alive);
    found.push_back(std::move(run));
  }
  return found;
}

std::vector<StepRunRecord> AgentSpool::take_steps() const {
  std::vector<StepRunRecord> steps;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(runs_dir_, error)) {
    const std::string name = entry.path().filename().string();
    if (!is_step_file_name(name)) continue;
    if (auto file = read_small_file(entry.path().string(), O_NOFOLLOW); file.ok())
      if (auto record = parse_step_record(file.text)) steps.push_back(std::move(*record));
    ::unlink(entry.path().c_str());
  }
  return steps;
}

}  // namespace cairn
