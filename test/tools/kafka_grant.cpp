// kafka_grant BOOTSTRAP PRINCIPAL TOPIC OPERATION[,OPERATION...] [-X key=value]...: allows
// PRINCIPAL the operations (read, write, describe) on TOPIC (librdkafka's admin API, as
// the -X principal: a super user), for the ACL refusal test. Not an operator tool.
// librdkafka 2.0.2 has no TransactionalId resource type: transactional ids stay refused.
#include <librdkafka/rdkafka.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: kafka_grant BOOTSTRAP PRINCIPAL TOPIC OPERATION[,OPERATION...] [-X key=value]...\n");
    return 2;
  }
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], error, sizeof error);
  for (int i = 5; i + 1 < argc; i += 2) {
    std::string property = argv[i + 1];
    auto eq = property.find('=');
    if (std::string(argv[i]) != "-X" || eq == std::string::npos ||
        rd_kafka_conf_set(conf, property.substr(0, eq).c_str(), property.substr(eq + 1).c_str(), error, sizeof error))
      return std::fprintf(stderr, "kafka_grant: bad property %s %s\n", argv[i], argv[i + 1]), 2;
  }
  const std::map<std::string, rd_kafka_AclOperation_t> operations = {
      {"read", RD_KAFKA_ACL_OPERATION_READ}, {"write", RD_KAFKA_ACL_OPERATION_WRITE}, {"describe", RD_KAFKA_ACL_OPERATION_DESCRIBE}};
  std::vector<rd_kafka_AclBinding_t*> bindings;
  std::stringstream names(argv[4]);
  for (std::string name; std::getline(names, name, ',');) {
    auto operation = operations.find(name);
    if (operation == operations.end()) return std::fprintf(stderr, "kafka_grant: unknown operation %s\n", name.c_str()), 2;
    bindings.push_back(rd_kafka_AclBinding_new(RD_KAFKA_RESOURCE_TOPIC, argv[3], RD_KAFKA_RESOURCE_PATTERN_LITERAL, argv[2],
                                               "*", operation->second, RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW, error,
                                               sizeof error));
    if (!bindings.back()) return std::fprintf(stderr, "kafka_grant: %s\n", error), 2;
  }
  rd_kafka_t* client = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (!client) return std::fprintf(stderr, "kafka_grant: %s\n", error), 1;
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client);
  rd_kafka_CreateAcls(client, bindings.data(), bindings.size(), nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  std::string outcome = !event ? "no answer" : rd_kafka_event_error(event) ? rd_kafka_event_error_string(event) : "";
  if (event && outcome.empty()) {
    size_t count = 0;
    auto** results = rd_kafka_CreateAcls_result_acls(rd_kafka_event_CreateAcls_result(event), &count);
    for (size_t i = 0; i < count && outcome.empty(); ++i)
      if (const rd_kafka_error_t* failed = rd_kafka_acl_result_error(results[i])) outcome = rd_kafka_error_string(failed);
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  for (auto* binding : bindings) rd_kafka_AclBinding_destroy(binding);
  rd_kafka_destroy(client);
  if (!outcome.empty()) return std::fprintf(stderr, "kafka_grant: %s\n", outcome.c_str()), 1;
  return 0;
}
