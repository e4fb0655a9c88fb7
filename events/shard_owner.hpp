// Who writes a shard, as its latest accepted EpochClaimed says: controllers on several hosts
// find each other, and agents their shard's owner, through the log (docs/decisions.md,
// "Controllers and agents on several hosts").
#pragma once

#include <cstdint>
#include <string>

namespace cairn {

struct ShardOwnerAddress {
  std::string controller;  // "cairnctld@HOST:PID"
  std::string endpoint;    // "tcp:HOST:PORT" or "unix:PATH"; empty: a claim that names none
  std::string host;
  uint32_t pid = 0;
  bool operator==(const ShardOwnerAddress&) const = default;
};

}  // namespace cairn
