// Where the shards a controller writes are served (shard_endpoint_path: the owner's socket),
// and, on Kafka, which controller holds them. Kafka has no lock beside a shard (the file log
// has OWNER and FENCE): there the file's mtime is the owner's lease, renewed every
// kLeaseRenewal, and a controller of some shards (cairnctld --shards) takes a shard only when
// no live controller holds it. docs/decisions.md, "Shards on Kafka".
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace cairn {

inline constexpr std::chrono::milliseconds kShardLeaseTimeout{5000};
inline constexpr std::chrono::milliseconds kShardLeaseRenewal{500};

// The live controller that holds the shard whose endpoint file this is, described ("its
// socket unix:PATH answers, lease renewed 0.4 s ago"), or empty when the shard is free to
// take: no file, a socket that refuses connections (its controller died), or a lease older
// than `lease_timeout` (its controller is stopped or hung).
std::string shard_holder(const std::string& endpoint_file, std::chrono::milliseconds lease_timeout = kShardLeaseTimeout);

class ShardEndpoints {
 public:
  // Writes `endpoint` into each file (a temporary file renamed into place). With
  // `renew_every` above zero a thread touches each file at that period for as long as it
  // still names `endpoint` (a successor's is left alone). Throws std::runtime_error.
  ShardEndpoints(std::vector<std::string> files, std::string endpoint,
                 std::chrono::milliseconds renew_every = std::chrono::milliseconds(0));
  ~ShardEndpoints();
  ShardEndpoints(const ShardEndpoints&) = delete;
  ShardEndpoints& operator=(const ShardEndpoints&) = delete;

 private:
  void renew(std::chrono::milliseconds every);

  std::vector<std::string> files_;
  std::string endpoint_;
  std::atomic<bool> stopping_{false};
  std::thread renewer_;
};

}  // namespace cairn
