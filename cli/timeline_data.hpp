// The data a timeline page is built from: the model as JSON (embedded in the page,
// golden-tested) and each shown job's audit rows (what `cairn log audit --job` prints).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "capnp/events.capnp.h"
#include "events/timeline_model.hpp"

namespace cairn {

// One line of `cairn log audit`: time, event, actor, details.
struct AuditRow {
  int64_t time_us = 0;
  std::string time;  // format_utc_micros
  std::string event;
  std::string actor;
  std::string details;
};

AuditRow audit_row(schema::Event::Reader event);

using AuditRows = std::map<uint64_t, std::vector<AuditRow>>;  // by job id

struct TimelineCapture {
  TimelineModel model;
  AuditRows audit;  // of the model's jobs
};

// Replays events into a timeline (one pass) and keeps the audit rows of the jobs it shows.
class TimelineRecorder {
 public:
  explicit TimelineRecorder(TimelineFilter filter) : builder_(filter), filter_(std::move(filter)) {}
  void feed(const DecodedEvent& event);
  void count_undecodable() { builder_.count_undecodable(); }
  // Nothing later in the log can change what is shown.
  bool past_window() const { return builder_.past_window(); }
  const TimelineFilter& filter() const { return filter_; }
  TimelineCapture finish();

 private:
  TimelineBuilder builder_;
  TimelineFilter filter_;
  AuditRows audit_;
};

// The capture of a list of encoded events (tests, small logs).
TimelineCapture capture_timeline(const std::vector<std::vector<uint8_t>>& records, TimelineFilter filter);

// The state's colour on every drawing (HTML, SVG, a job's story).
std::string_view state_colour(JobState state);

// Greedy lanes for the burst-buffer bars: each stage takes the lowest lane free at its start.
std::vector<uint32_t> stage_lanes(const std::vector<StageSpan>& stages);

// Sentences saying why the drawing is empty or incomplete (an empty log, a window with
// nothing in it, jobs not in the log, events of a newer schema skipped...).
std::vector<std::string> timeline_notices(const TimelineModel& model, const TimelineFilter& filter);

// What the filter asked for, in words ("jobs 1,2; user alice; from ... to ...").
std::string filter_summary(const TimelineFilter& filter);

// The model as one JSON object. Times are milliseconds from the window's start
// ("origin_us", microseconds since the epoch); the format is described in
// docs/decisions.md ("Timeline pages").
std::string timeline_json(const TimelineModel& model, const TimelineFilter& filter);

// The audit rows of the model's jobs, one line per job: "ID<TAB>[[time,event,actor,details],...]",
// the time in microseconds from "#origin_us", event and actor as indexes into the
// "#kinds" and "#actors" lines that come first. The page parses a job's line when it is
// shown, not at load.
std::string audit_lines(const TimelineModel& model, const AuditRows& audit);

// Text for JSON: quoted and escaped; '<' is escaped too, so the text can sit inside a <script>.
std::string json_string(std::string_view text);

}  // namespace cairn
