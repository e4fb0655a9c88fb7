// Starts the cairn-kafka-mock fixture (a librdkafka mock cluster in its own
// process, with one topic of N partitions) and stops it, by PID, when done.
// Shared by the unit tests and the benchmarks; throws std::runtime_error.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace cairn::test {

class KafkaMock {
 public:
  explicit KafkaMock(uint32_t partitions, std::string topic = "cairn.test") : topic_(std::move(topic)) {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::string count = std::to_string(partitions);
    std::vector<const char*> argv = {CAIRN_KAFKA_MOCK, "--topic", topic_.c_str(), "--partitions", count.c_str(), nullptr};
    int spawned = posix_spawn(&pid_, CAIRN_KAFKA_MOCK, &actions, nullptr, const_cast<char**>(argv.data()), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (spawned != 0) {
      ::close(out[0]);
      throw std::runtime_error("cannot start " CAIRN_KAFKA_MOCK);
    }
    FILE* stream = ::fdopen(out[0], "r");
    char line[1024] = {};
    bool got = std::fgets(line, sizeof line, stream) != nullptr;
    std::fclose(stream);
    if (!got) {  // the destructor does not run for a constructor that throws
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      throw std::runtime_error("the Kafka mock printed no bootstrap string");
    }
    bootstrap_ = line;
    while (!bootstrap_.empty() && (bootstrap_.back() == '\n' || bootstrap_.back() == '\r')) bootstrap_.pop_back();
  }
  ~KafkaMock() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  KafkaMock(const KafkaMock&) = delete;
  KafkaMock& operator=(const KafkaMock&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  const std::string& topic() const { return topic_; }
  std::string spec() const { return "kafka:" + bootstrap_ + "/" + topic_; }

 private:
  std::string topic_;
  std::string bootstrap_;
  pid_t pid_ = -1;
};

}  // namespace cairn::test
