#include "cli/kafka_handoff.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "events/log/event_log.hpp"

namespace cairn {

namespace {

std::vector<std::string> g_command_line;

}  // namespace

void remember_command_line(int argc, char** argv) { g_command_line.assign(argv, argv + argc); }

// The lean binary's definition of the Kafka backend's entry point: exec `cairn <front-end> ARGS`.
std::unique_ptr<EventLog> open_kafka_log(const std::string& spec, const KafkaLogOptions&) {
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || g_command_line.empty())
    throw LogError("EventLog=" + spec + ": this front-end has no Kafka client; use `cairn " +
                   (g_command_line.empty() ? std::string("<command>") : g_command_line[0]) + " ...`");
  std::string full = (self.parent_path() / "cairn").string();
  std::vector<std::string> args{"cairn", std::filesystem::path(g_command_line[0]).filename().string()};
  args.insert(args.end(), g_command_line.begin() + 1, g_command_line.end());
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execv(full.c_str(), argv.data());
  throw LogError("EventLog=" + spec + ": cannot run " + full + " to read it: " + std::strerror(errno));
}

}  // namespace cairn
