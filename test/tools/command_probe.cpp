// Drives one job through PAIRS pairs of commands with Controller.control, each sent once the
// previous one was answered, as a fast client would: every answer must be a success (each
// command follows its own acknowledged opposite). Prints the first refusal and exits 1.
// Usage: command_probe unix:PATH JOB PAIRS suspend|hold|release|resume suspend|hold|release|resume
#include <iostream>
#include <map>
#include <string>

#include "capnp/rpc.capnp.h"
#include "common/rpc_client.hpp"

int main(int argc, char** argv) {
  const std::map<std::string, cairn::rpc::ControlVerb> verbs = {
      {"suspend", cairn::rpc::ControlVerb::SUSPEND}, {"resume", cairn::rpc::ControlVerb::RESUME},
      {"hold", cairn::rpc::ControlVerb::HOLD},       {"release", cairn::rpc::ControlVerb::RELEASE}};
  if (argc != 6 || !verbs.contains(argv[4]) || !verbs.contains(argv[5])) {
    std::cerr << "usage: command_probe unix:PATH JOB PAIRS VERB VERB\n";
    return 2;
  }
  try {
    cairn::RpcConnection connection(argv[1]);
    auto controller = connection.get_main<cairn::rpc::Controller>();
    uint64_t job = std::stoull(argv[2]);
    int pairs = std::stoi(argv[3]);
    for (int i = 0; i < pairs * 2; ++i) {
      const char* verb = argv[4 + i % 2];
      auto request = controller.controlRequest();
      request.setVerb(verbs.at(verb));
      request.initJobIds(1).set(0, job);
      auto response = connection.wait(request.send());
      auto result = response.getResults()[0];
      if (!result.getOk()) {
        std::cout << verb << " " << job << " (command " << i + 1 << "): " << result.getError().cStr() << "\n";
        return 1;
      }
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "command_probe: " << error.what() << "\n";
    return 1;
  }
}
