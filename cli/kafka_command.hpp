// `cairn kafka create-topic|probe`: setting up a Kafka cluster for the event log.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace cairn {

int run_kafka_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace cairn
