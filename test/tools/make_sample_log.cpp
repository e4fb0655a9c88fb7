// Writes the fixed sample history (test/unit/event_fixtures.hpp) into a file
// log, so integration tests can drive the real `cairn log` binary on it.
#include <iostream>

#include "events/event_log.hpp"
#include "test/unit/event_fixtures.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_sample_log DIR\n";
    return 2;
  }
  auto history = cairn::test::sample_history();
  auto log = cairn::open_file_log(argv[1]);
  for (auto& record : history.records) log->append_sync(0, record);
  std::cout << history.records.size() << " events written\n";
  return 0;
}
