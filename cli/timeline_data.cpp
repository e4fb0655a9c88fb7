#include "cli/timeline_data.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cli/event_format.hpp"
#include "events/event_codec.hpp"
#include "events/log/event_log.hpp"

namespace cairn {
namespace {

constexpr int64_t kUnsetFrom = std::numeric_limits<int64_t>::min();
constexpr int64_t kUnsetTo = std::numeric_limits<int64_t>::max();

// Milliseconds from the origin, rounded down (runs may begin before the window).
int64_t rel_ms(int64_t time_us, int64_t origin_us) {
  int64_t delta = time_us - origin_us;
  return delta >= 0 ? delta / 1000 : -((-delta + 999) / 1000);
}

std::string_view direction_name(schema::StageDirection direction) {
  return direction == schema::StageDirection::STAGE_IN ? "in" : "out";
}

std::string_view outcome_name(StageSpanOutcome outcome) {
  switch (outcome) {
    case StageSpanOutcome::open: return "open";
    case StageSpanOutcome::done: return "done";
    case StageSpanOutcome::failed: return "failed";
    case StageSpanOutcome::aborted: return "aborted";
  }
  return "open";
}

std::string_view succession_name(RunSuccession succession) {
  switch (succession) {
    case RunSuccession::none: return "";
    case RunSuccession::requeue: return "requeue";
    case RunSuccession::resubmit: return "resubmit";
    case RunSuccession::node_fail_requeue: return "node_fail_requeue";
  }
  return "";
}

std::string_view marker_name(MarkerKind kind) {
  switch (kind) {
    case MarkerKind::oom: return "oom";
    case MarkerKind::step_oom: return "step_oom";
    case MarkerKind::node_fail: return "node_fail";
  }
  return "oom";
}

std::string exit_text(int32_t code, int32_t signal) { return fmt::format("{}:{}", code, signal); }

std::string job_list(const std::vector<uint64_t>& ids) {
  std::string out;
  for (uint64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

// Appends `"key":` and a value; the writer keeps the commas right.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}
  JsonWriter& key(std::string_view name) {
    comma();
    out_ += json_string(name);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  JsonWriter& open(char bracket) {
    comma();
    out_ += bracket;
    first_ = true;
    return *this;
  }
  JsonWriter& close(char bracket) {
    out_ += bracket;
    first_ = false;
    return *this;
  }
  JsonWriter& raw(std::string_view text) {
    comma();
    out_ += text;
    return *this;
  }
  JsonWriter& text(std::string_view value) { return raw(json_string(value)); }
  JsonWriter& number(int64_t value) { return raw(std::to_string(value)); }
  JsonWriter& unsigned_number(uint64_t value) { return raw(std::to_string(value)); }
  JsonWriter& boolean(bool value) { return raw(value ? "true" : "false"); }
  JsonWriter& newline() {
    out_ += '\n';
    return *this;
  }

 private:
  void comma() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_) out_ += ',';
    first_ = false;
  }
  std::string& out_;
  bool first_ = true;
  bool after_key_ = false;
};

}  // namespace

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '<': out += "\\u003c"; break;
      default:
        if (c < 0x20)
          out += fmt::format("\\u{:04x}", c);
        else
          out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

AuditRow audit_row(schema::Event::Reader event) {
  int64_t time_us = event.getHeader().getTimeUs();
  return {time_us, format_utc_micros(time_us), kind_name(event.getBody().which()),
          format_actor(event.getHeader().getActor()), format_audit_details(event)};
}

void TimelineRecorder::feed(const DecodedEvent& decoded) {
  builder_.feed(decoded);
  auto event = decoded.event();
  uint64_t job = event.getHeader().getJobId();
  if (job != 0 && (builder_.shows_job(job) || filter_.jobs.contains(job))) audit_[job].push_back(audit_row(event));
}

TimelineCapture TimelineRecorder::finish() {
  TimelineCapture capture{builder_.finish(), {}};
  std::set<uint64_t> kept(filter_.jobs.begin(), filter_.jobs.end());  // asked for by id: even if never submitted
  for (const auto& job : capture.model.jobs) kept.insert(job.id);
  for (uint64_t id : kept) {
    auto rows = audit_.find(id);
    if (rows != audit_.end()) capture.audit.emplace(id, std::move(rows->second));
  }
  return capture;
}

TimelineCapture capture_timeline(const std::vector<std::vector<uint8_t>>& records, TimelineFilter filter) {
  TimelineRecorder recorder(std::move(filter));
  for (size_t i = 0; i < records.size(); ++i) {
    try {
      recorder.feed(DecodedEvent(i, records[i]));
    } catch (const kj::Exception&) {
      recorder.count_undecodable();
    } catch (const LogError&) {
      recorder.count_undecodable();
    }
  }
  return recorder.finish();
}

std::string_view state_colour(JobState state) {
  switch (state) {
    case JobState::COMPLETED: return "#3c9a5f";
    case JobState::RUNNING: return "#3b7dd8";
    case JobState::SUSPENDED: return "#7fa7e0";
    case JobState::COMPLETING: return "#5d93dd";
    case JobState::CONFIGURING: return "#5d93dd";
    case JobState::STAGE_OUT: return "#5d93dd";
    case JobState::PENDING: return "#c9c9c9";
    case JobState::CANCELLED: return "#8d8d8d";
    case JobState::FAILED: return "#d64541";
    case JobState::TIMEOUT: return "#e08a1e";
    case JobState::OUT_OF_MEMORY: return "#a0306e";
    case JobState::NODE_FAIL: return "#5b4636";
    case JobState::BOOT_FAIL: return "#5b4636";
    case JobState::REQUEUED: return "#2a9d9d";
    case JobState::PREEMPTED: return "#b08d2a";
    case JobState::DEADLINE: return "#e08a1e";
    case JobState::REVOKED: return "#8d8d8d";
    case JobState::SPECIAL_EXIT: return "#d64541";
  }
  return "#8d8d8d";
}

std::vector<uint32_t> stage_lanes(const std::vector<StageSpan>& stages) {
  std::vector<int64_t> lane_end;  // when each lane is free again
  std::vector<uint32_t> lanes;
  lanes.reserve(stages.size());
  for (const auto& stage : stages) {
    uint32_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > stage.start_us) ++lane;
    if (lane == lane_end.size()) lane_end.push_back(0);
    lane_end[lane] = std::max(stage.end_us, stage.start_us + 1);
    lanes.push_back(lane);
  }
  return lanes;
}

std::string filter_summary(const TimelineFilter& filter) {
  std::vector<std::string> parts;
  if (!filter.jobs.empty()) parts.push_back(fmt::format("job{} {}", filter.jobs.size() == 1 ? "" : "s",
                                                        job_list({filter.jobs.begin(), filter.jobs.end()})));
  if (!filter.user.empty()) parts.push_back("user " + filter.user);
  if (!filter.partition.empty()) parts.push_back("partition " + filter.partition);
  if (filter.from_us != kUnsetFrom) parts.push_back("from " + format_utc_micros(filter.from_us));
  if (filter.to_us != kUnsetTo) parts.push_back("to " + format_utc_micros(filter.to_us));
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out;
}

std::vector<std::string> timeline_notices(const TimelineModel& model, const TimelineFilter& filter) {
  std::vector<std::string> notices;
  switch (model.emptiness) {
    case TimelineEmptiness::empty_log:
      notices.push_back("The log holds no events: nothing has happened on this cluster yet.");
      break;
    case TimelineEmptiness::nothing_matches:
      // Only jobs that are not in the log asked for: the sentence below says so.
      if (model.unknown_jobs.size() != filter.jobs.size() || !filter.user.empty() || !filter.partition.empty())
        notices.push_back("No job in the log matches " + filter_summary(filter) + ".");
      break;
    case TimelineEmptiness::empty_window:
      // Where the log lies, when the window misses it (the reader stops past a window
      // that lies within it, so its last event is known only then).
      notices.push_back(fmt::format(
          "No job was queued or ran between {} and {}{}.", format_utc_micros(model.from_us),
          format_utc_micros(model.to_us),
          model.last_event_us < model.from_us   ? "; the log ends at " + format_utc_micros(model.last_event_us)
          : model.first_event_us > model.to_us ? "; the log begins at " + format_utc_micros(model.first_event_us)
                                               : ""));
      break;
    case TimelineEmptiness::not_empty: break;
  }
  if (!model.unknown_jobs.empty())
    notices.push_back(fmt::format("{} {} {} not in the log.", model.unknown_jobs.size() == 1 ? "Job" : "Jobs",
                                  job_list(model.unknown_jobs), model.unknown_jobs.size() == 1 ? "is" : "are"));
  if (model.skipped_newer > 0)
    notices.push_back(fmt::format(
        "{} event{} of a newer schema (kinds this cairn does not know) {} skipped: the drawing may miss what they "
        "changed; a newer cairn shows them.",
        model.skipped_newer, model.skipped_newer == 1 ? "" : "s", model.skipped_newer == 1 ? "was" : "were"));
  if (model.undecodable > 0)
    notices.push_back(fmt::format("{} record{} could not be decoded and {} skipped.", model.undecodable,
                                  model.undecodable == 1 ? "" : "s", model.undecodable == 1 ? "was" : "were"));
  if (model.anomalies > 0)
    notices.push_back(fmt::format("{} event{} refused by the replay (`cairn log verify` lists them).",
                                  model.anomalies, model.anomalies == 1 ? " was" : "s were"));
  return notices;
}

std::string timeline_json(const TimelineModel& model, const TimelineFilter& filter) {
  const int64_t origin = model.from_us;
  auto ms = [&](int64_t t) { return rel_ms(t, origin); };
  std::map<std::string_view, size_t> node_index;
  for (size_t i = 0; i < model.nodes.size(); ++i) node_index[model.nodes[i].name] = i;
  auto node_ref = [&](const std::string& name) -> int64_t {
    auto it = node_index.find(name);
    return it == node_index.end() ? -1 : static_cast<int64_t>(it->second);
  };

  std::string out;
  out.reserve(256 + model.runs.size() * 120 + model.jobs.size() * 160);
  JsonWriter w(out);
  w.open('{');
  w.key("format").number(1);
  w.key("origin_us").number(origin);
  w.key("origin").text(format_utc_micros(origin));
  w.key("from").number(0);
  w.key("to").number(ms(model.to_us));
  w.newline();
  w.key("log").open('{');
  w.key("events").unsigned_number(model.events);
  w.key("first").text(model.events ? format_utc_micros(model.first_event_us) : "");
  w.key("last").text(model.events ? format_utc_micros(model.last_event_us) : "");
  w.key("skipped_newer").unsigned_number(model.skipped_newer);
  w.key("undecodable").unsigned_number(model.undecodable);
  w.key("anomalies").unsigned_number(model.anomalies);
  w.close('}');
  w.newline();
  w.key("filter").text(filter_summary(filter));
  w.key("empty").text(model.emptiness == TimelineEmptiness::not_empty ? "" : timeline_notices(model, filter).front());
  w.newline();
  w.key("notices").open('[');
  for (const auto& notice : timeline_notices(model, filter)) w.text(notice);
  w.close(']');
  w.newline();
  w.key("colours").open('{');
  for (int s = 0; s <= static_cast<int>(JobState::SPECIAL_EXIT); ++s) {
    auto state = static_cast<JobState>(s);
    w.key(state_name(state)).text(state_colour(state));
  }
  w.close('}');
  w.newline();
  w.key("categories").open('[');
  for (size_t c = 0; c < kQueueCategories; ++c) w.text(queue_category_name(static_cast<QueueCategory>(c)));
  w.close(']');
  w.newline();

  w.key("nodes").open('[');
  for (const auto& node : model.nodes) {
    w.newline().open('{');
    w.key("name").text(node.name);
    w.key("cpus").number(node.cpus);
    w.key("lanes").number(node.lanes);
    w.key("partitions").open('[');
    for (const auto& partition : node.partitions) w.text(partition);
    w.close(']');
    if (!node.down.empty()) {
      w.key("down").open('[');
      for (const auto& down : node.down) {
        w.open('{').key("start").number(ms(down.span.start_us)).key("end").number(ms(down.span.end_us));
        if (down.open) w.key("open").boolean(true);
        w.key("reason").text(down.reason).close('}');
      }
      w.close(']');
    }
    w.close('}');
  }
  w.close(']');
  w.newline();

  w.key("jobs").open('[');
  for (const auto& job : model.jobs) {
    w.newline().open('{');
    w.key("id").unsigned_number(job.id);
    w.key("name").text(job.name);
    w.key("user").text(job.user);
    w.key("partition").text(job.partition);
    if (!job.account.empty()) w.key("account").text(job.account);
    if (job.array_job_id != 0)
      w.key("array").text(job.array_task_id == kNoArrayTaskId
                              ? fmt::format("{}_[...]", job.array_job_id)
                              : fmt::format("{}_{}", job.array_job_id, job.array_task_id));
    w.key("cpus").number(job.cpus);
    w.key("submit").number(ms(job.submit_us));
    if (job.end_us != 0) w.key("end").number(ms(job.end_us));
    w.key("state").text(state_name(job.state));
    if (job.reason != Reason::none) w.key("reason").text(reason_name(job.reason));
    if (job.restarts) w.key("restarts").number(job.restarts);
    if (!job.steps.empty()) {
      w.key("steps").open('[');
      for (const auto& step : job.steps) {
        std::string nodes;
        for (const auto& share : step.nodes) nodes += (nodes.empty() ? "" : ",") + share.node;
        w.open('{');
        w.key("run").number(step.restart).key("id").number(step.step_id).key("name").text(step.name);
        w.key("nodes").text(nodes).key("start").number(ms(step.start_us)).key("end").number(ms(step.end_us));
        if (step.open) w.key("open").boolean(true);
        w.key("state").text(state_name(step.state));
        if (step.oom_kills) w.key("oom_kills").unsigned_number(step.oom_kills);
        w.close('}');
      }
      w.close(']');
    }
    if (!job.states.empty()) {
      w.key("states").open('[');
      for (const auto& change : job.states)
        w.open('[').number(ms(change.time_us)).text(state_name(change.state)).text(reason_name(change.reason)).close(']');
      w.close(']');
    }
    w.close('}');
  }
  w.close(']');
  w.newline();

  w.key("runs").open('[');
  for (const auto& run : model.runs) {
    w.newline().open('{');
    w.key("job").unsigned_number(run.job_id);
    w.key("run").number(run.restart);
    w.key("start").number(ms(run.start_us));
    w.key("end").number(ms(run.end_us));
    if (run.open) w.key("open").boolean(true);
    w.key("state").text(state_name(run.state));
    if (run.exit_code != 0 || run.exit_signal != 0) w.key("exit").text(exit_text(run.exit_code, run.exit_signal));
    w.key("slots").open('[');
    for (const auto& placement : run.placements)
      w.open('[').number(node_ref(placement.node)).number(placement.slot).number(placement.cpus).close(']');
    w.close(']');
    if (!run.suspended.empty()) {
      w.key("suspended").open('[');
      for (const auto& span : run.suspended) w.open('[').number(ms(span.start_us)).number(ms(span.end_us)).close(']');
      w.close(']');
    }
    if (!run.markers.empty()) {
      w.key("markers").open('[');
      for (const auto& marker : run.markers) {
        w.open('{').key("kind").text(marker_name(marker.kind)).key("t").number(ms(marker.time_us));
        w.key("node").number(node_ref(marker.node));
        if (marker.kind == MarkerKind::oom) {
          w.key("peak").unsigned_number(marker.peak_bytes).key("limit").unsigned_number(marker.limit_bytes);
        }
        if (marker.kind == MarkerKind::step_oom) w.key("step").number(marker.step_id);
        w.close('}');
      }
      w.close(']');
    }
    if (run.next != RunSuccession::none)
      w.key("next").text(succession_name(run.next)).key("requeued").number(ms(run.requeued_us));
    w.close('}');
  }
  w.close(']');
  w.newline();

  auto lanes = stage_lanes(model.stages);
  w.key("stages").open('[');
  for (size_t i = 0; i < model.stages.size(); ++i) {
    const auto& stage = model.stages[i];
    w.newline().open('{');
    w.key("job").unsigned_number(stage.job_id);
    w.key("direction").text(direction_name(stage.direction));
    w.key("node").number(node_ref(stage.node));
    w.key("start").number(ms(stage.start_us));
    w.key("end").number(ms(stage.end_us));
    w.key("outcome").text(outcome_name(stage.outcome));
    if (stage.bytes) w.key("bytes").unsigned_number(stage.bytes);
    if (stage.duration_us) w.key("copy_ms").unsigned_number(stage.duration_us / 1000);
    if (!stage.message.empty()) w.key("message").text(stage.message);
    w.key("lane").number(lanes[i]);
    w.close('}');
  }
  w.close(']');
  w.newline();

  w.key("utilisation").open('[');
  for (const auto& series : model.utilisation) {
    w.newline().open('{');
    w.key("partition").text(series.partition);
    w.key("t").open('[');
    for (const auto& point : series.points) w.number(ms(point.time_us));
    w.close(']');
    w.key("allocated").open('[');
    for (const auto& point : series.points) w.number(point.allocated);
    w.close(']');
    w.key("total").open('[');
    for (const auto& point : series.points) w.number(point.total);
    w.close(']');
    w.close('}');
  }
  w.close(']');
  w.newline();

  w.key("queue").open('{');
  w.key("t").open('[');
  for (const auto& point : model.queue) w.number(ms(point.time_us));
  w.close(']');
  for (size_t c = 0; c < kQueueCategories; ++c) {
    w.newline();
    w.key(queue_category_name(static_cast<QueueCategory>(c))).open('[');
    for (const auto& point : model.queue) w.number(point.pending[c]);
    w.close(']');
  }
  w.close('}');
  w.newline();
  w.close('}');
  out += '\n';
  return out;
}

std::string audit_lines(const TimelineModel& model, const AuditRows& audit) {
  // Event kinds and actors repeat on every line: each is named once, in the tables of
  // the first lines, and rows refer to it by its index.
  std::map<std::string, size_t> kinds, actors;
  std::vector<const std::string*> kind_names, actor_names;
  auto index_of = [](std::map<std::string, size_t>& table, std::vector<const std::string*>& names,
                     const std::string& name) {
    auto [it, added] = table.try_emplace(name, names.size());
    if (added) names.push_back(&it->first);
    return it->second;
  };
  std::string body;
  for (const auto& job : model.jobs) {
    auto rows = audit.find(job.id);
    if (rows == audit.end()) continue;
    body += std::to_string(job.id);
    body += "\t[";
    bool first = true;
    for (const auto& row : rows->second) {
      if (!first) body += ',';
      first = false;
      body += fmt::format("[{},{},{},{}]", row.time_us - model.from_us, index_of(kinds, kind_names, row.event),
                          index_of(actors, actor_names, row.actor), json_string(row.details));
    }
    body += "]\n";
  }
  auto table = [](std::string_view name, const std::vector<const std::string*>& names) {
    std::string line = std::string(name) + "\t[";
    for (size_t i = 0; i < names.size(); ++i) line += (i ? "," : "") + json_string(*names[i]);
    return line + "]\n";
  };
  // Row times are microseconds from the origin (exact: the audit shows microseconds).
  return fmt::format("#origin_us\t{}\n", model.from_us) + table("#kinds", kind_names) +
         table("#actors", actor_names) + body;
}

}  // namespace cairn
