// Who holds a shard on Kafka (cairnctld --shards): the owner's endpoint file names its socket
// and its mtime is the owner's lease (actors/shard_endpoints.hpp).
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "actors/shard_endpoints.hpp"
#include "common/shard_endpoint.hpp"
#include "log_backends.hpp"

using namespace cairn;
using namespace std::chrono_literals;

namespace {

// A listening Unix socket, closed with the object.
struct Listener {
  int fd = -1;
  std::string path;
  explicit Listener(std::string where) : path(std::move(where)) {
    fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd, 8) == 0);
  }
  ~Listener() { ::close(fd); }
};

void age_file(const std::string& path, int seconds) {
  timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds;
  times[1] = times[0];
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("shard endpoints: a shard is held by a live, answering owner whose lease is fresh") {
  test::TempDir dir;
  std::string file = (dir.path / "shard-endpoints" / "p1").string();
  CHECK(shard_holder(file).empty());  // no owner ever

  Listener owner((dir.path / "owner.sock").string());
  {
    ShardEndpoints published({file}, "unix:" + owner.path, 50ms);
    auto held = shard_holder(file);
    CHECK(held.find("its socket unix:" + owner.path + " answers") != std::string::npos);
    // A stopped owner's lease runs out; a live one renews it.
    age_file(file, 10);
    bool renewed = false;
    for (int i = 0; i < 200 && !renewed; ++i, std::this_thread::sleep_for(10ms)) renewed = !shard_holder(file).empty();
    CHECK(renewed);
  }
  age_file(file, 10);  // no longer renewed: the owner stopped
  CHECK(shard_holder(file).empty());
  CHECK_FALSE(shard_holder(file, 20000ms).empty());  // within a longer lease it still holds

  // A dead owner: its socket refuses connections, whatever the lease says.
  ShardEndpoints dead({file}, "unix:" + (dir.path / "gone.sock").string());
  CHECK(shard_holder(file).empty());
}

TEST_CASE("shard endpoints: an owner renews only the files that still name it") {
  test::TempDir dir;
  std::string file = (dir.path / "p0").string();
  Listener successor((dir.path / "successor.sock").string());
  ShardEndpoints old_owner({file}, "unix:" + (dir.path / "old.sock").string(), 20ms);
  { std::ofstream(file) << "unix:" << successor.path << "\n"; }  // the successor took the shard
  age_file(file, 10);
  std::this_thread::sleep_for(200ms);  // ten of the old owner's renewals
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK(std::time(nullptr) - st.st_mtim.tv_sec >= 9);  // left alone
}

TEST_CASE("shard endpoints: the file log's beside the shard, Kafka's under StateSaveLocation") {
  ClusterConfig config;
  config.state_save_location = "/var/lib/cairn";
  config.event_log = "file:/var/lib/cairn/log";
  CHECK(shard_endpoint_path(config, 2) == "/var/lib/cairn/log/p2/ENDPOINT");
  config.event_log = "kafka:b1:9092/cairn.events";
  CHECK(shard_endpoint_path(config, 2) == "/var/lib/cairn/shard-endpoints/p2");
}
