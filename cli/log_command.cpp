#include "cli/log_command.hpp"

#include <fmt/format.h>
#include <kj/exception.h>

#include <chrono>
#include <limits>
#include <map>
#include <ostream>
#include <set>

#include "cli/controller_client.hpp"
#include "cli/event_format.hpp"
#include "cli/log_access.hpp"
#include "cli/timeline_command.hpp"
#include "cli/timeline_data.hpp"
#include "common/option_parser.hpp"
#include "common/config.hpp"
#include "events/event_codec.hpp"
#include "events/log/event_log.hpp"
#include "events/log/event_log_config.hpp"
#include "events/replay.hpp"
#include "events/schedule_audit.hpp"
#include "events/shard_replay.hpp"

namespace cairn {
namespace {

constexpr std::string_view kUsage =
    "usage: cairn log dump   [--log DIR|--conf FILE] [--job N] [--kind K[,K]] [--from OFFSET|TIME] [--to OFFSET|TIME] [--json]\n"
    "                        [--shard K]   (one shard's events; else every shard's, shard after shard)\n"
    "       cairn log audit  [--log DIR|--conf FILE] --job N [--html FILE]\n"
    "       cairn log stats  [--log DIR|--conf FILE]\n"
    "       cairn log audit-schedule [--log DIR|--conf FILE] [--slack SEC]   (capacities, dependencies, EASY backfill,\n"
    "                                utilisation, wait, bounded slowdown, makespan; exit 1 on a violation)\n"
    "       cairn log verify [--log DIR|--conf FILE]   (segments against META, then two replays)\n"
    "       cairn log replay --verify [--log DIR] [--conf FILE]   (the live controller's state against a replay)\n"
    "       cairn log timeline [--log DIR|--conf FILE] [--from T] [--to T] [--job N[,M...]] [--user U] [--partition P]\n"
    "                          --html FILE | --svg FILE   (the cluster's history as a picture)\n";

const std::vector<OptionSpec> kOptions = {
    {0, "log", true, ""},   {0, "conf", true, ""}, {'j', "job", true, ""}, {0, "kind", true, ""},
    {0, "from", true, ""},  {0, "to", true, ""},   {0, "json", false, ""}, {'h', "help", false, ""},
    {0, "verify", false, ""}, {0, "shard", true, ""},
    {0, "slack", true, ""},
    {0, "html", true, ""},  {0, "svg", true, ""},  {0, "user", true, ""},  {0, "partition", true, ""},
};

// Where the log is: --log (a directory or an EventLog= value), else the configuration's EventLog.
std::unique_ptr<EventLog> open_log(const ParsedArgs& args) {
  if (auto log = args.get("log")) return open_log_read_only(*log);
  return open_log_read_only(load_config(find_config_path(args.get("conf"))));
}

// A bound given as an offset ("42") or an ISO time ("2026-11-22T10:00:00[Z]").
struct Bound {
  std::optional<uint64_t> offset;
  std::optional<int64_t> time_us;
};

Bound parse_bound(std::string_view option, const std::optional<std::string>& text) {
  Bound bound;
  if (!text) return bound;
  if (!text->empty() && text->find_first_not_of("0123456789") == std::string::npos) {
    bound.offset = parse_count(option, *text);
    return bound;
  }
  std::tm tm{};
  const char* end = strptime(text->c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || (*end != '\0' && std::string_view(end) != "Z"))
    throw UsageError(fmt::format("invalid value for {}: '{}' (an offset or YYYY-MM-DDTHH:MM:SS)", option, *text));
  bound.time_us = static_cast<int64_t>(timegm(&tm)) * 1'000'000;
  return bound;
}

struct EventFilter {
  std::optional<uint64_t> job;
  std::set<EventKind> kinds;
  Bound from, to;

  bool matches(uint64_t offset, schema::Event::Reader event) const {
    auto header = event.getHeader();
    if (job && header.getJobId() != *job) return false;
    if (!kinds.empty() && !kinds.contains(event.getBody().which())) return false;
    if (from.offset && offset < *from.offset) return false;
    if (to.offset && offset > *to.offset) return false;
    if (from.time_us && header.getTimeUs() < *from.time_us) return false;
    if (to.time_us && header.getTimeUs() > *to.time_us) return false;
    return true;
  }
};

EventFilter parse_filter(const ParsedArgs& args) {
  EventFilter filter;
  if (auto job = args.get("job")) filter.job = parse_count("--job", *job);
  for (const auto& list : args.all("kind")) {
    size_t start = 0;
    while (start <= list.size()) {
      auto comma = list.find(',', start);
      auto name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      EventKind kind;
      if (!parse_kind(name, kind)) throw UsageError("unknown event kind '" + name + "'");
      filter.kinds.insert(kind);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  filter.from = parse_bound("--from", args.get("from"));
  filter.to = parse_bound("--to", args.get("to"));
  return filter;
}

// Calls visit(decoded) for every decodable record of every partition, in offset order per partition.
template <typename Visit>
void for_each_event(const EventLog& log, std::ostream& err, Visit&& visit) {
  for (uint32_t p = 0; p < log.partitions(); ++p) {
    auto reader = log.read(p, 0);
    while (auto record = reader->next()) {
      try {
        DecodedEvent decoded(record->offset, record->payload);
        visit(p, decoded);
      } catch (const kj::Exception& e) {
        err << fmt::format("warning: shard {} offset {}: undecodable record: {}\n", p, record->offset,
                           e.getDescription().cStr());
      }
    }
  }
}

// Two passes over the log (ScheduleAuditor::learn, then feed); exit 1 on any violation.
int audit_schedule(const EventLog& log, const ParsedArgs& args, std::ostream& out, std::ostream& err) {
  ScheduleAuditSettings settings;
  if (auto slack = args.get("slack")) settings.backfill_slack_us = static_cast<int64_t>(parse_count("--slack", *slack)) * 1'000'000;
  if (auto conf = args.get("conf")) settings.fallback_config_text = read_config_file(*conf);
  ScheduleAuditor auditor(settings);
  auto undecodable = [&](uint32_t shard, uint64_t offset, std::string_view why) {
    err << fmt::format("warning: shard {} offset {}: undecodable record: {}\n", shard, offset, why);
  };
  for_each_event_by_time(log, [&](const DecodedEvent& decoded) { auditor.learn(decoded.event()); return true; },
                         undecodable);
  // The first pass said which records are undecodable.
  for_each_event_by_time(log, [&](const DecodedEvent& decoded) { auditor.feed(decoded.event()); return true; },
                         [](uint32_t, uint64_t, std::string_view) {});
  auto report = auditor.finish();
  out << format_schedule_audit(report);
  return report.violations.empty() ? 0 : 1;
}

int dump(const EventLog& log, const ParsedArgs& args, std::ostream& out, std::ostream& err) {
  auto filter = parse_filter(args);
  bool json = args.has("json");
  std::optional<uint32_t> only_shard;
  if (auto shard = args.get("shard")) {
    uint64_t value = parse_count("--shard", *shard);
    if (value >= log.partitions())
      throw UsageError(fmt::format("cairn log dump: --shard {}: the log has {} shard{} (0 to {})", *shard,
                                   log.partitions(), log.partitions() == 1 ? "" : "s", log.partitions() - 1));
    only_shard = static_cast<uint32_t>(value);
  }
  for_each_event(log, err, [&](uint32_t shard, const DecodedEvent& decoded) {
    if (only_shard && shard != *only_shard) return;
    if (!filter.matches(decoded.offset(), decoded.event())) return;
    out << (json ? format_event_json(decoded.offset(), decoded.event())
                 : format_event_line(decoded.offset(), decoded.event()))
        << '\n';
  });
  return 0;
}

int audit(const EventLog& log, const ParsedArgs& args, std::ostream& out, std::ostream& err) {
  auto job = args.get("job");
  if (!job) throw UsageError("cairn log audit: --job N is required");
  EventFilter filter;
  filter.job = parse_count("--job", *job);
  if (auto html = args.get("html")) return run_audit_html(log, *filter.job, *html, out, err);
  std::vector<std::string> rows;
  for_each_event(log, err, [&](uint32_t, const DecodedEvent& decoded) {
    auto event = decoded.event();
    // A preemption is the victim's event; the preemptor's audit shows it too, naming the victim.
    auto body = event.getBody();
    bool preempted_for_job =
        body.isJobPreempted() && body.getJobPreempted().getPreemptorId() == *filter.job;
    if (!preempted_for_job && !filter.matches(decoded.offset(), event)) return;
    auto parts = audit_row(event);
    if (preempted_for_job)
      parts.details = "jobId=" + std::to_string(body.getJobPreempted().getJobId()) + " " + parts.details;
    auto row = fmt::format("{:<28} {:<20} {:<24} {}", parts.time, parts.event, parts.actor, parts.details);
    row.erase(row.find_last_not_of(' ') + 1);
    rows.push_back(row + "\n");
  });
  if (rows.empty()) {
    err << "cairn log audit: no events for job " << *filter.job << "\n";
    return 1;
  }
  out << fmt::format("{:<28} {:<20} {:<24} {}\n", "TIME", "EVENT", "ACTOR", "DETAILS");
  for (const auto& row : rows) out << row;
  return 0;
}

int stats(const EventLog& log, std::ostream& out, std::ostream& err) {
  std::map<std::string, uint64_t> per_kind, per_slurm_partition;
  std::map<uint32_t, uint64_t> per_shard;
  uint64_t total = 0;
  for_each_event(log, err, [&](uint32_t shard, const DecodedEvent& decoded) {
    auto body = decoded.event().getBody();
    ++total;
    ++per_kind[kind_name(body.which())];
    ++per_shard[shard];
    if (body.isJobSubmitted()) ++per_slurm_partition[body.getJobSubmitted().getSpec().getPartition()];
  });
  out << fmt::format("events {}\n", total);
  out << "by kind:\n";
  for (const auto& [kind, count] : per_kind) out << fmt::format("  {:<22} {}\n", kind, count);
  out << "by log partition (shard):\n";
  for (const auto& [shard, count] : per_shard) out << fmt::format("  {:<22} {}\n", shard, count);
  out << "jobs submitted by Slurm partition:\n";
  for (const auto& [partition, count] : per_slurm_partition)
    out << fmt::format("  {:<22} {}\n", partition.empty() ? "(default)" : partition, count);
  ClusterState state;
  auto start = std::chrono::steady_clock::now();
  auto replayed = replay_all(log, state);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << fmt::format("replay: {} events in {:.3f} s ({:.0f} events/s), {} anomalies\n", replayed.events, seconds,
                     seconds > 0 ? replayed.events / seconds : 0.0, state.anomaly_count);
  return 0;
}

int verify(const EventLog& log, std::ostream& out) {
  // First what the files hold against what the log says it held (a missing segment, records
  // or META): a replay only sees what is there.
  auto integrity = log.check_integrity();
  for (const auto& fact : integrity.facts) out << fact << '\n';
  if (!integrity.problems.empty()) {
    for (const auto& problem : integrity.problems) out << "DAMAGED: " << problem << '\n';
    out << fmt::format("FAILED: the event log is damaged or incomplete ({} problem{}); not replayed\n",
                       integrity.problems.size(), integrity.problems.size() == 1 ? "" : "s");
    return 1;
  }
  ClusterState first, second;
  // Both replays up to the ends as they are now: a live controller may append meanwhile.
  std::vector<uint64_t> ends(log.partitions());
  for (uint32_t partition = 0; partition < log.partitions(); ++partition) ends[partition] = log.end_offset(partition);
  // Several shards fold as their controller folds them: merged in their time order.
  auto replay_whole = [&log, &ends](ClusterState& state) {
    if (log.partitions() == 1) return replay_range(log, 0, 0, ends[0], state);
    std::vector<uint64_t> from(log.partitions(), 0);
    return replay_shards_in_time_order(log, from, state, std::numeric_limits<int64_t>::max(), ends);
  };
  auto replayed = replay_whole(first);
  replay_whole(second);
  uint64_t a = state_digest(first), b = state_digest(second);
  out << fmt::format("events {}, jobs {}, nodes {}, undecodable {}, anomalies {}\n", replayed.events,
                     first.jobs.size(), first.nodes.size(), replayed.undecodable, first.anomaly_count);
  for (const auto& anomaly : first.anomalies)
    out << fmt::format("  anomaly at offset {}: {}\n", anomaly.offset, anomaly.text);
  if (a != b || !(first == second)) {
    out << fmt::format("MISMATCH: replay digests {:016x} and {:016x} differ\n", a, b);
    return 1;
  }
  out << fmt::format("state digest {:016x} (two replays identical)\n", a);
  return 0;
}

// The live controller's state digest against that of a replay of its log up to
// the same offset: the read model and the log tell the same story.
int replay_verify(const EventLog& log, const ParsedArgs& args, std::ostream& out) {
  if (!args.has("verify")) throw UsageError("cairn log replay: only --verify is supported");
  // The live state's position is one shard's offset only with one shard (docs/decisions.md).
  if (log.partitions() > 1)
    throw std::runtime_error(fmt::format("replay --verify compares one shard's log with the live state; this log has "
                                         "{} shards (cairn log verify checks each)",
                                         log.partitions()));
  ControllerClient client(load_cli_config(args.get("conf")));
  StateDigestView live = client.state_digest();
  ClusterState replayed;
  auto stats = replay_range(log, live.partition, 0, live.next_offset, replayed);
  uint64_t digest = state_digest(replayed);
  out << fmt::format("live controller: digest {:016x}, shard {} up to offset {}\n", live.digest, live.partition,
                     live.next_offset);
  out << fmt::format("replay of the log: digest {:016x}, {} events, {} jobs\n", digest, stats.events,
                     replayed.jobs.size());
  if (digest != live.digest || stats.next_offset != live.next_offset) {
    out << "MISMATCH: the live state is not what its log replays to\n";
    return 1;
  }
  out << "identical\n";
  return 0;
}

}  // namespace

int run_log_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  try {
    if (argv.empty() || argv[0] == "-h" || argv[0] == "--help") {
      (argv.empty() ? err : out) << kUsage;
      return argv.empty() ? 2 : 0;
    }
    const std::string& verb = argv[0];
    auto args = parse_options("cairn log " + verb, kOptions, {argv.begin() + 1, argv.end()});
    if (args.has("help")) {
      out << kUsage;
      return 0;
    }
    if (!args.positionals.empty()) throw UsageError("cairn log " + verb + ": unexpected argument '" + args.positionals[0] + "'");
    if (verb != "dump" && verb != "audit" && verb != "stats" && verb != "verify" && verb != "replay" &&
        verb != "timeline" && verb != "audit-schedule")
      throw UsageError("cairn log: unknown command '" + verb + "'\n" + std::string(kUsage));
    auto log = open_log(args);
    if (verb == "dump") return dump(*log, args, out, err);
    if (verb == "audit") return audit(*log, args, out, err);
    if (verb == "audit-schedule") return audit_schedule(*log, args, out, err);
    if (verb == "stats") return stats(*log, out, err);
    if (verb == "replay") return replay_verify(*log, args, out);
    if (verb == "timeline") return run_timeline(*log, args, out, err);
    return verify(*log, out);
  } catch (const UsageError& e) {
    err << e.what() << "\n";
    return 2;
  } catch (const LogAccessDenied& e) {
    err << "cairn log: " << e.what() << "; use squeue/sacct/scontrol\n";
    return 1;
  } catch (const std::exception& e) {
    err << "cairn log: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cairn
