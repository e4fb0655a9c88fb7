// `cairn shards` and `scontrol show shards`: each shard of the event log, its writer
// (the controller whose EpochClaimed is the shard's latest), epoch and last offset,
// read from the log itself (read-only), so that they answer with no controller running.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "events/log/event_log.hpp"

namespace cairn {

struct ShardFacts {
  uint32_t shard = 0;
  uint64_t epoch = 0;                   // of the latest claim; 0: never claimed
  std::optional<uint64_t> last_offset;  // none: the shard is empty
  std::string owner;                    // the claimant, "cairnctld@HOST:PID"; empty: never claimed
  int64_t claimed_us = 0;               // when it claimed (its takeover, or its start)
  uint64_t takeovers = 0;               // claims after the shard's first
  std::string address;                  // its owner's socket (pK/ENDPOINT); empty: where the controllers serve
  std::string claimed_endpoint;         // where its claim says the owner serves (tcp:HOST:PORT, unix:PATH)
  // Each running controller's lag on this shard, in records (LOGDIR/readers/NAME), by name.
  std::vector<std::pair<std::string, uint64_t>> reader_lags;
  // KafkaControllerGroup=: the group member that owns it and the group's generation; empty: no group.
  std::string group_member;
  int64_t group_generation = -1;
};

// What the log says of each of its shards (reads every shard to its end).
std::vector<ShardFacts> read_shard_facts(const EventLog& log);

// The owner's host and pid, from "cairnctld@HOST:PID"; nullopt when the name is not of that form.
struct OwnerProcess {
  std::string host;
  int64_t pid = 0;
};
std::optional<OwnerProcess> owner_process(const std::string& owner);

// Whether the owner runs: "running" or "gone" (its host is this one), else "unknown".
using OwnerStateProbe = std::string (*)(const OwnerProcess& process);
std::string probe_owner_state(const OwnerProcess& process);

// Of a file log at `log_dir`: each shard's owner's address (pK/ENDPOINT) and the lag of every
// controller that reads it and still runs (LOGDIR/readers/cairnctld@HOST:PID: "SHARD NEXT"
// lines, the offset its view applied up to, rewritten each second).
void add_file_log_readers(std::vector<ShardFacts>& shards, const std::string& log_dir,
                          OwnerStateProbe probe = probe_owner_state);
// The same for any log: each shard's endpoint file (its first line, the owner's address; beside
// it, FILE.group: "MEMBER GENERATION" of a KafkaControllerGroup= owner) and the readers' files.
void add_shard_readers(std::vector<ShardFacts>& shards, const std::vector<std::string>& endpoint_files,
                       const std::string& readers_dir, OwnerStateProbe probe = probe_owner_state);
// add_shard_readers with the paths of `config` (shard_endpoint_path, shard_readers_dir).
void add_configured_shard_readers(std::vector<ShardFacts>& shards, const ClusterConfig& config);

// Where the controllers serve: "unix:SOCKET[,tcp:ADDR:PORT]".
std::string serving_address(const ClusterConfig& config);

// `cairn shards`: a table, one line per shard. `address`: where the controllers serve.
std::string render_shards_table(const std::vector<ShardFacts>& shards, const std::string& address,
                                OwnerStateProbe probe = probe_owner_state);
// `scontrol show shards`: Slurm's Key=Value records; one_liner as `scontrol -o`.
std::string render_scontrol_show_shards(const std::vector<ShardFacts>& shards, const std::string& address,
                                        bool one_liner, OwnerStateProbe probe = probe_owner_state);

// `cairn shards [--conf FILE] [--log DIR]`.
int run_shards_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace cairn
