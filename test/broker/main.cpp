// cairn_kafka_broker_tests: the EventLog contract and the Kafka-only cases against
// Apache Kafka's own broker, started once for the whole run (deploy/kafka/broker.sh).
// Where Java or the broker's jars are missing it says SKIP and exits 77, except under
// CI=true, where these tests must run.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "test/tools/kafka_broker_process.hpp"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing |= std::string(argv[i]).starts_with("--list") || std::string(argv[i]).starts_with("-l");
  if (!listing) {
    std::string missing = cairn::test::KafkaBroker::missing_reason();
    if (!missing.empty()) {
      const char* ci = std::getenv("CI");
      if (ci && std::string(ci) == "true") {
        std::cout << "FAIL: CI=true, and Apache Kafka's broker cannot run: " << missing << "\n";
        return 1;
      }
      std::cout << "SKIP: the real-broker tests need Apache Kafka's broker: " << missing << "\n";
      return 77;
    }
  }
  return context.run();
}
