#include "cli/kafka_command.hpp"

#include <fmt/format.h>

#include <ostream>

#include "events/event_log.hpp"
#include "events/kafka_admin.hpp"
#include "events/kafka_spec.hpp"

namespace cairn {
namespace {

constexpr const char* kUsage =
    "usage: cairn kafka create-topic BOOTSTRAP [TOPIC] [PARTITIONS] [REPLICAS] [-X key=value]... [--timeout S]\n"
    "         the event log's topic, with the settings of deploy/kafka/create-topic.sh\n"
    "         (TOPIC cairn.events, 1 partition, 3 replicas; min.insync.replicas=REPLICAS-1)\n"
    "       cairn kafka probe BOOTSTRAP [--replicas N] [-X key=value]... [--timeout S]\n"
    "         writes a record to the topic cairn.probe and reads it back\n"
    "  -X key=value: a librdkafka property (TLS, SASL), as kafka.key=value in cairn.conf\n";

uint32_t count_of(const std::string& name, const std::string& text) {
  try {
    size_t used = 0;
    unsigned long value = std::stoul(text, &used);
    if (used == text.size() && value >= 1 && value <= 100000) return static_cast<uint32_t>(value);
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("cairn kafka: {} must be a positive number, not '{}'", name, text));
}

}  // namespace

int run_kafka_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.empty() || args[0] == "-h" || args[0] == "--help") {
      (args.empty() ? err : out) << kUsage;
      return args.empty() ? 2 : 0;
    }
    KafkaTopicRequest request;
    std::vector<std::string> positional;
    for (size_t i = 1; i < args.size(); ++i) {
      const std::string& arg = args[i];
      bool has_value = i + 1 < args.size();
      if (arg == "-X" && has_value) {
        auto eq = args[i + 1].find('=');
        if (eq == std::string::npos || eq == 0) throw std::invalid_argument("cairn kafka: -X takes key=value");
        request.properties[args[i + 1].substr(0, eq)] = args[i + 1].substr(eq + 1);
        ++i;
      } else if (arg == "--timeout" && has_value) {
        request.timeout_ms = static_cast<int>(count_of("--timeout", args[++i])) * 1000;
      } else if (arg == "--replicas" && has_value) {
        request.replicas = count_of("--replicas", args[++i]);
      } else if (arg.starts_with("-")) {
        throw std::invalid_argument(fmt::format("cairn kafka: unexpected option '{}'\n{}", arg, kUsage));
      } else {
        positional.push_back(arg);
      }
    }
    if (positional.empty()) throw std::invalid_argument(fmt::format("cairn kafka: BOOTSTRAP is required\n{}", kUsage));
    request.brokers = positional[0];
    if (args[0] == "create-topic") {
      if (positional.size() > 4) throw std::invalid_argument(fmt::format("cairn kafka: too many arguments\n{}", kUsage));
      request.topic = positional.size() > 1 ? positional[1] : std::string(kDefaultKafkaTopic);
      parse_kafka_spec("kafka:" + request.brokers + "/" + request.topic);  // checks both
      request.partitions = positional.size() > 2 ? count_of("PARTITIONS", positional[2]) : 1;
      request.replicas = positional.size() > 3 ? count_of("REPLICAS", positional[3]) : 3;
      create_kafka_topic(request);
      out << fmt::format("topic {} on {}: {} partition(s), {} replica(s), min.insync.replicas={}\n", request.topic,
                         request.brokers, request.partitions, request.replicas,
                         audit_topic_config(request.replicas).at("min.insync.replicas"));
      return 0;
    }
    if (args[0] == "probe") {
      if (positional.size() > 1) throw std::invalid_argument(fmt::format("cairn kafka: too many arguments\n{}", kUsage));
      request.topic = "cairn.probe";
      int64_t offset = probe_kafka(request);
      out << fmt::format("{}: wrote and read back record {} of cairn.probe\n", request.brokers, offset);
      return 0;
    }
    throw std::invalid_argument(fmt::format("cairn kafka: unknown command '{}'\n{}", args[0], kUsage));
  } catch (const std::invalid_argument& e) {
    err << e.what() << (std::string(e.what()).ends_with("\n") ? "" : "\n");
    return 2;
  } catch (const LogError& e) {
    err << "cairn kafka: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cairn
