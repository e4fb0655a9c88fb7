#include "common/daemon_log.hpp"

#include <fcntl.h>
#include <spdlog/details/file_helper.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace cairn {
namespace {

// Opened before spdlog appends to it, so that a new file gets 0640, not the umask's 0644:
// a daemon's log names users' jobs and commands.
void create_log_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) throw std::runtime_error(path + ": cannot open the log file: " + std::strerror(errno));
  ::close(fd);
}

// A file sink whose file can be replaced while other threads log.
class ReopenableFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit ReopenableFileSink(const std::string& path) : path_(path) { file_ = open_file(); }

  // Returns the error when the file cannot be opened again (the old one stays in use).
  std::string reopen() {
    std::unique_ptr<spdlog::details::file_helper> fresh;
    try {
      fresh = open_file();
    } catch (const std::exception& e) {
      return e.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    file_->flush();
    file_ = std::move(fresh);
    return {};
  }

  const std::string& path() const { return path_; }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    file_->write(formatted);
  }
  // Each line is written through at once: an operator tailing the file, or a daemon
  // that dies, should not leave lines in a buffer.
  void flush_() override { file_->flush(); }

 private:
  std::unique_ptr<spdlog::details::file_helper> open_file() const {
    create_log_file(path_);
    auto file = std::make_unique<spdlog::details::file_helper>();
    file->open(path_, false);
    return file;
  }

  std::string path_;
  std::unique_ptr<spdlog::details::file_helper> file_;
};

std::shared_ptr<ReopenableFileSink> g_file_sink;  // set once, before other threads start

// Registers `logger` as the default one in place of the current default, with the
// registry's pattern and level (spdlog::set_pattern's), before other threads log.
void replace_default_logger(std::shared_ptr<spdlog::logger> logger) {
  spdlog::drop(spdlog::default_logger()->name());
  spdlog::initialize_logger(logger);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace

void log_to_stderr() {
  replace_default_logger(std::make_shared<spdlog::logger>("cairn", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
}

void log_to_file(const std::string& path) {
  auto stderr_sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  stderr_sink->set_level(spdlog::level::warn);
  try {
    g_file_sink = std::make_shared<ReopenableFileSink>(path);
  } catch (const spdlog::spdlog_ex& e) {
    throw std::runtime_error(path + ": cannot open the log file: " + e.what());
  }
  auto logger = std::make_shared<spdlog::logger>("cairn", spdlog::sinks_init_list{stderr_sink, g_file_sink});
  replace_default_logger(logger);
  logger->flush_on(spdlog::level::trace);
}

namespace {
std::atomic<int> g_slurm_debug_level{kSlurmDebugInfo};
}  // namespace

void set_slurm_debug_level(int level) {
  static constexpr spdlog::level::level_enum kLevels[] = {
      spdlog::level::off,  spdlog::level::critical, spdlog::level::err,   spdlog::level::info,  spdlog::level::info,
      spdlog::level::debug, spdlog::level::trace,   spdlog::level::trace, spdlog::level::trace, spdlog::level::trace};
  if (level < 0 || level > 9) return;
  g_slurm_debug_level = level;
  spdlog::default_logger()->set_level(kLevels[level]);
}

int slurm_debug_level() { return g_slurm_debug_level; }

void reopen_log_file() {
  if (!g_file_sink) return;
  spdlog::info("reopening the log file {} (SIGUSR2)", g_file_sink->path());
  if (auto error = g_file_sink->reopen(); !error.empty())
    spdlog::error("{}: cannot reopen the log file, going on with the old one: {}", g_file_sink->path(), error);
  else
    spdlog::info("log file {} reopened", g_file_sink->path());
}

}  // namespace cairn
