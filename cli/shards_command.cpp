#include "cli/shards_command.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>

#include <kj/exception.h>

#include "cli/controller_client.hpp"
#include "cli/log_access.hpp"
#include "common/option_parser.hpp"
#include "common/shard_endpoint.hpp"
#include "common/small_file.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"
#include "events/event_codec.hpp"

namespace cairn {
namespace {

constexpr const char* kUsage =
    "usage: cairn shards [--conf FILE] [--log DIR]\n"
    "Each shard of the event log: its writer (the controller of the shard's latest epoch claim),\n"
    "whether that process still runs, its epoch, the shard's last offset and when it was claimed.\n";

const std::vector<OptionSpec> kOptions = {{0, "conf", true, ""}, {0, "log", true, ""}, {'h', "help", false, ""}};

std::string this_host() {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

std::string serving_address(const ClusterConfig& config) {
  std::string address = "unix:" + config.controller_socket;
  if (config.controller_port != 0) address += "," + controller_endpoint(config, std::nullopt, false);
  return address;
}

std::vector<ShardFacts> read_shard_facts(const EventLog& log) {
  std::vector<ShardFacts> shards;
  for (uint32_t shard = 0; shard < log.partitions(); ++shard) {
    ShardFacts facts;
    facts.shard = shard;
    auto reader = log.read(shard, 0);
    uint64_t offset = 0;
    std::span<const uint8_t> payload;
    uint64_t claims = 0;
    while (reader->next_view(offset, payload)) {
      facts.last_offset = offset;
      try {
        DecodedEvent decoded(offset, payload);
        auto body = decoded.event().getBody();
        if (!body.isEpochClaimed()) continue;
        auto claim = body.getEpochClaimed();
        if (claim.getEpoch() <= facts.epoch) continue;  // a stale claim: readers ignore it
        facts.epoch = claim.getEpoch();
        facts.owner = claim.getController().cStr();
        facts.claimed_endpoint = claim.getEndpoint().cStr();
        facts.claimed_us = decoded.event().getHeader().getTimeUs();
        ++claims;
      } catch (const kj::Exception&) {
        // An undecodable record is `cairn log verify`'s to report; it claims nothing.
      }
    }
    facts.takeovers = claims > 0 ? claims - 1 : 0;
    shards.push_back(std::move(facts));
  }
  return shards;
}

std::optional<OwnerProcess> owner_process(const std::string& owner) {
  auto at = owner.find('@');
  auto colon = owner.rfind(':');
  if (at == std::string::npos || colon == std::string::npos || colon < at) return std::nullopt;
  auto pid = parse_unsigned<uint64_t>(owner.substr(colon + 1));
  if (!pid || *pid == 0) return std::nullopt;
  return OwnerProcess{owner.substr(at + 1, colon - at - 1), static_cast<int64_t>(*pid)};
}

std::string probe_owner_state(const OwnerProcess& process) {
  if (process.host != this_host()) return "unknown";
  return ::kill(static_cast<pid_t>(process.pid), 0) == 0 || errno == EPERM ? "running" : "gone";
}

void add_file_log_readers(std::vector<ShardFacts>& shards, const std::string& log_dir, OwnerStateProbe probe) {
  std::vector<std::string> endpoint_files;
  for (const auto& facts : shards) endpoint_files.push_back(fmt::format("{}/p{}/ENDPOINT", log_dir, facts.shard));
  add_shard_readers(shards, endpoint_files, log_dir + "/readers", probe);
}

void add_configured_shard_readers(std::vector<ShardFacts>& shards, const ClusterConfig& config) {
  std::vector<std::string> endpoint_files;
  for (const auto& facts : shards) endpoint_files.push_back(shard_endpoint_path(config, facts.shard));
  add_shard_readers(shards, endpoint_files, shard_readers_dir(config));
}

void add_shard_readers(std::vector<ShardFacts>& shards, const std::vector<std::string>& endpoint_files,
                       const std::string& readers_dir, OwnerStateProbe probe) {
  for (size_t i = 0; i < shards.size() && i < endpoint_files.size(); ++i) {
    auto& facts = shards[i];
    if (auto line = read_first_line(endpoint_files[i]); !line.empty()) facts.address = line;
    std::ifstream member(endpoint_files[i] + ".group");
    std::string member_id;
    int64_t generation = -1;
    if (member >> member_id >> generation) facts.group_member = member_id, facts.group_generation = generation;
  }
  std::error_code error;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(readers_dir, error))
    if (!entry.path().filename().string().ends_with(".tmp")) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    auto process = owner_process(name);
    if (!process || probe(*process) == "gone") continue;  // a reader that stopped
    std::ifstream file(readers_dir + "/" + name);
    uint32_t shard = 0;
    uint64_t next = 0;
    while (file >> shard >> next) {
      if (shard >= shards.size()) continue;
      uint64_t end = shards[shard].last_offset ? *shards[shard].last_offset + 1 : 0;
      shards[shard].reader_lags.emplace_back(name, end > next ? end - next : 0);
    }
  }
}

namespace {

std::string lags_text(const ShardFacts& facts) {
  std::string text;
  for (const auto& [name, lag] : facts.reader_lags) {
    auto process = owner_process(name);
    text += (text.empty() ? "" : ",") + (process ? std::to_string(process->pid) : name) + ":" + std::to_string(lag);
  }
  return text.empty() ? "-" : text;
}

struct ShardRow {
  std::string owner, pid, state, epoch, last_offset, claimed;
};

// Where the owner serves: what its claim says (every host reads it from the log), else its
// endpoint file (claims before owners named it), else where the controllers serve.
std::string address_of(const ShardFacts& facts, const std::string& serving) {
  if (!facts.claimed_endpoint.empty()) return facts.claimed_endpoint;
  return facts.address.empty() ? serving : facts.address;
}

ShardRow row_of(const ShardFacts& facts, OwnerStateProbe probe) {
  ShardRow row;
  auto process = owner_process(facts.owner);
  row.owner = facts.owner.empty() ? "(none)" : facts.owner;
  row.pid = process ? std::to_string(process->pid) : "-";
  row.state = facts.owner.empty() ? "-" : process ? probe(*process) : "unknown";
  row.epoch = std::to_string(facts.epoch);
  row.last_offset = facts.last_offset ? std::to_string(*facts.last_offset) : "-";
  row.claimed = facts.claimed_us ? format_timestamp(facts.claimed_us / 1'000'000) : "-";
  return row;
}

}  // namespace

std::string render_shards_table(const std::vector<ShardFacts>& shards, const std::string& address,
                                OwnerStateProbe probe) {
  // KafkaControllerGroup=: one more column, the owning member and the group's generation.
  bool grouped = std::any_of(shards.begin(), shards.end(), [](const ShardFacts& f) { return !f.group_member.empty(); });
  std::string out = fmt::format("{:<6} {:<32} {:<8} {:<8} {:<6} {:<12} {:<20} {:<9} {:<24} {}{}\n", "SHARD", "OWNER",
                                "PID", "STATE", "EPOCH", "LAST_OFFSET", "CLAIMED", "TAKEOVERS", "ADDRESS",
                                grouped ? fmt::format("{:<24} ", "READER_LAGS") : "READER_LAGS",
                                grouped ? "GROUP_MEMBER(GENERATION)" : "");
  for (const auto& facts : shards) {
    auto row = row_of(facts, probe);
    std::string lags = lags_text(facts);
    out += fmt::format("{:<6} {:<32} {:<8} {:<8} {:<6} {:<12} {:<20} {:<9} {:<24} {}{}\n", facts.shard, row.owner,
                       row.pid, row.state, row.epoch, row.last_offset, row.claimed, facts.takeovers,
                       address_of(facts, address), grouped ? fmt::format("{:<24} ", lags) : lags,
                       !grouped ? "" : facts.group_member.empty() ? "-"
                                     : fmt::format("{}({})", facts.group_member, facts.group_generation));
  }
  out += "controllers serve on " + address + "\n";
  return out;
}

std::string render_scontrol_show_shards(const std::vector<ShardFacts>& shards, const std::string& address,
                                        bool one_liner, OwnerStateProbe probe) {
  std::string out;
  const char* gap = one_liner ? " " : "\n   ";
  for (const auto& facts : shards) {
    auto row = row_of(facts, probe);
    out += fmt::format("ShardId={} Owner={} OwnerPid={} OwnerState={}{}Address={} Epoch={} LastOffset={}{}"
                       "Claimed={} Takeovers={} ReaderLags={}\n",
                       facts.shard, row.owner, row.pid, row.state, gap,
                       address_of(facts, address), row.epoch, row.last_offset, gap,
                       row.claimed, facts.takeovers, lags_text(facts));
    if (!facts.group_member.empty()) {
      out.pop_back();
      out += fmt::format("{}GroupMember={} GroupGeneration={}\n", gap, facts.group_member, facts.group_generation);
    }
    if (!one_liner) out += "\n";
  }
  return out;
}

int run_shards_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  try {
    auto args = parse_options("cairn shards", kOptions, argv);
    if (args.has("help")) {
      out << kUsage;
      return 0;
    }
    if (!args.positionals.empty()) throw UsageError("cairn shards: unexpected argument '" + args.positionals[0] + "'");
    auto config = load_config(find_config_path(args.get("conf")));
    auto log = args.get("log") ? open_log_read_only(*args.get("log")) : open_log_read_only(config);
    auto facts = read_shard_facts(*log);
    if (args.get("log")) {
      if (!args.get("log")->starts_with("kafka:")) add_file_log_readers(facts, *args.get("log"));
    } else {
      add_configured_shard_readers(facts, config);
    }
    out << render_shards_table(facts, serving_address(config));
    return 0;
  } catch (const UsageError& e) {
    err << e.what() << "\n" << kUsage;
    return 2;
  } catch (const LogAccessDenied& e) {
    err << "cairn shards: " << e.what() << " (the event log is its writer's: run as SlurmUser)\n";
    return 1;
  } catch (const std::exception& e) {
    err << "cairn shards: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cairn
