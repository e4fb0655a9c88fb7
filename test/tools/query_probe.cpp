// Asks the controller for every job with scripts and environments, as a hostile client
// would, and prints the whole answer in Cap'n Proto's text form: what a user could read
// off the socket. Usage: query_probe unix:PATH|tcp:HOST:PORT [history]
#include <iostream>
#include <string>

#include <kj/string.h>

#include "capnp/rpc.capnp.h"
#include "protocol/rpc_client.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::string(argv[2]) != "history")) {
    std::cerr << "usage: query_probe unix:PATH|tcp:HOST:PORT [history]\n";
    return 2;
  }
  try {
    cairn::RpcConnection connection(argv[1]);
    auto controller = connection.get_main<cairn::rpc::Controller>();
    auto ask = [](auto query) {
      query.setIncludeFinished(true);
      query.setWithScript(true);
      query.setWithEnvironment(true);
      query.setForAccounting(true);
      query.setPageSize(10000);
    };
    if (argc == 3) {
      auto request = controller.queryHistoryRequest();
      ask(request.initQuery());
      std::cout << kj::str(connection.wait(request.send())).cStr() << "\n";
    } else {
      auto request = controller.queryJobsRequest();
      ask(request.initQuery());
      std::cout << kj::str(connection.wait(request.send())).cStr() << "\n";
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "query_probe: " << error.what() << "\n";
    return 1;
  }
}
