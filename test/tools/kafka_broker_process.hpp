// Apache Kafka's own broker for tests and benchmarks: deploy/kafka/broker.sh starts
// it (KRaft, loopback, its data in a temporary directory) and stops it, by PID,
// when the process that wanted it ends (and, should that process crash, a watcher
// of broker.sh does). One broker per process, started lazily: a JVM takes seconds.
// Each user makes topics of its own on it. Throws std::runtime_error.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "events/log/kafka_admin.hpp"

extern char** environ;

namespace cairn::test {

class KafkaBroker {
 public:
  // Why the broker cannot run here (no Java, no jars), or empty when it can.
  static std::string missing_reason() {
    if (std::system("command -v java >/dev/null 2>&1") != 0) return "no Java on PATH (deploy/kafka/fetch-broker.sh)";
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(libs(), ignored))
      if (entry.path().filename().string().starts_with("kafka_2.13-")) return {};
    return "no Kafka jars in " + libs() + " (deploy/kafka/fetch-broker.sh BUILD)";
  }

  // The process's broker, started at the first call.
  static KafkaBroker& shared() {
    static std::mutex mutex;
    static std::unique_ptr<KafkaBroker> broker;
    std::lock_guard lock(mutex);
    if (!broker) broker.reset(new KafkaBroker(1));
    return *broker;
  }

  explicit KafkaBroker(int brokers) {
    char pattern[] = "/tmp/cairn-kafka-test-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    std::string output = run({"start", "--dir", dir_, "--brokers", std::to_string(brokers), "--watch",
                              std::to_string(::getpid())});
    while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
    if (output.empty()) {
      std::filesystem::remove_all(dir_);
      throw std::runtime_error("deploy/kafka/broker.sh start failed (its error is above)");
    }
    bootstrap_ = output;
  }
  ~KafkaBroker() {
    try {
      run({"stop", "--dir", dir_});
    } catch (...) {
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  KafkaBroker(const KafkaBroker&) = delete;
  KafkaBroker& operator=(const KafkaBroker&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  const std::string& dir() const { return dir_; }
  // The process id of broker `node` (from 1), for its CPU time.
  pid_t pid(int node = 1) const { return static_cast<pid_t>(std::stol(run({"pid", "--dir", dir_, "--node", std::to_string(node)}))); }

  // A new topic with the event log's settings, named uniquely in this process.
  std::string make_topic(uint32_t partitions, uint32_t replicas = 1) {
    static std::atomic<int> counter{0};
    std::string topic = "cairn.test." + std::to_string(::getpid()) + "." + std::to_string(++counter);
    KafkaTopicRequest request;
    request.brokers = bootstrap_;
    request.topic = topic;
    request.partitions = partitions;
    request.replicas = replicas;
    create_kafka_topic(request);
    return topic;
  }

  // broker.sh ARGS... on this broker's directory; its stdout. Throws when it fails.
  std::string run(const std::vector<std::string>& args) const {
    int out[2];  // close-on-exec: the brokers the script starts must not hold its write end
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::string script = std::string(CAIRN_SOURCE_DIR) + "/deploy/kafka/broker.sh";
    std::vector<std::string> words = {"bash", script};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings = {"CAIRN_KAFKA_LIBS=" + libs(), "CAIRN_BIN=" + std::string(CAIRN_BINARY_DIR) + "/bin"};
    std::vector<char*> env;
    for (auto& entry : env_strings) env.push_back(entry.data());
    for (char** e = environ; *e; ++e)
      if (!std::string_view(*e).starts_with("CAIRN_KAFKA_LIBS=") && !std::string_view(*e).starts_with("CAIRN_BIN="))
        env.push_back(*e);
    env.push_back(nullptr);
    pid_t pid = 0;
    int spawned = posix_spawn(&pid, "/bin/bash", &actions, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (spawned != 0) {
      ::close(out[0]);
      throw std::runtime_error("cannot run broker.sh");
    }
    std::string output;
    char buffer[4096];
    for (ssize_t got; (got = ::read(out[0], buffer, sizeof buffer)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) break;
      output.append(buffer, static_cast<size_t>(got));
    }
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw std::runtime_error("deploy/kafka/broker.sh " + args[0] + " failed");
    return output;
  }

 private:
  static std::string libs() {
    const char* set = std::getenv("CAIRN_KAFKA_LIBS");
    return set && *set ? set : std::string(CAIRN_BINARY_DIR) + "/kafka/libs";
  }

  std::string dir_;
  std::string bootstrap_;
};

}  // namespace cairn::test
