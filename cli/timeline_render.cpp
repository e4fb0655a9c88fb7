#include "cli/timeline_render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <map>

#include "cli/event_format.hpp"
#include "cli/timeline_assets.hpp"
#include "common/size_parse.hpp"

namespace cairn {
namespace {

constexpr double kWidth = 1400;
constexpr double kLeft = 150;  // node names
constexpr double kRight = 24;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kRowPadding = 3;
constexpr double kStageLane = 12;
constexpr double kUtilisationHeight = 150;
constexpr double kQueueHeight = 110;
constexpr double kBinPixels = 2;  // aggregated occupancy: one column per 2 px
constexpr size_t kOccupancyLevels = 8;
constexpr size_t kMaxStaticMarkers = 2000;

constexpr std::string_view kStageInColour = "#1f9bb4";
constexpr std::string_view kStageOutColour = "#7b5bc4";
constexpr std::string_view kAggregateColour = "#3b7dd8";
constexpr std::string_view kCategoryColours[kQueueCategories] = {"#e6a23c", "#9b59b6", "#5dade2", "#1f9bb4",
                                                                 "#95a5a6"};
constexpr std::string_view kSeriesColours[] = {"#222222", "#3b7dd8", "#e08a1e", "#3c9a5f", "#a0306e",
                                               "#7b5bc4", "#2a9d9d", "#b08d2a"};

std::string esc(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double value) {
  if (std::abs(value - std::round(value)) < 0.005) return std::to_string(static_cast<int64_t>(std::round(value)));
  return fmt::format("{:.2f}", value);
}

// "1 h 02 min", "39 s", "450 ms".
std::string duration_text(int64_t micros) {
  if (micros < 1'000'000) return fmt::format("{} ms", micros / 1000);
  int64_t seconds = micros / 1'000'000;
  if (seconds < 120) return fmt::format("{} s", seconds);
  if (seconds < 7200) return fmt::format("{} min {:02} s", seconds / 60, seconds % 60);
  if (seconds < 172800) return fmt::format("{} h {:02} min", seconds / 3600, seconds % 3600 / 60);
  return fmt::format("{} d {:02} h", seconds / 86400, seconds % 86400 / 3600);
}

std::string short_time(int64_t time_us) {
  std::string full = format_utc_micros(time_us);  // 2026-11-18T11:06:40.000000Z
  return full.substr(0, 19) + "Z";
}

struct Tick {
  int64_t time_us;
  std::string label;
};

// Round instants of UTC about every 110 px.
std::vector<Tick> time_ticks(int64_t from_us, int64_t to_us, double width) {
  static constexpr int64_t kSteps[] = {1'000,         2'000,          5'000,          10'000,        20'000,
                                       50'000,        100'000,        200'000,        500'000,       1'000'000,
                                       2'000'000,     5'000'000,      10'000'000,     15'000'000,    30'000'000,
                                       60'000'000,    120'000'000,    300'000'000,    600'000'000,   900'000'000,
                                       1'800'000'000, 3'600'000'000,  7'200'000'000,  10'800'000'000, 21'600'000'000,
                                       43'200'000'000, 86'400'000'000, 172'800'000'000, 604'800'000'000};
  int64_t span = std::max<int64_t>(1, to_us - from_us);
  double wanted = static_cast<double>(span) / std::max(1.0, width / 110);
  int64_t step = kSteps[std::size(kSteps) - 1];
  for (int64_t candidate : kSteps)
    if (candidate >= wanted) {
      step = candidate;
      break;
    }
  while (static_cast<double>(step) < wanted) step *= 2;
  std::vector<Tick> ticks;
  int64_t first = from_us >= 0 ? (from_us + step - 1) / step * step : from_us / step * step;
  for (int64_t t = first; t <= to_us; t += step) {
    std::string full = format_utc_micros(t);
    std::string label;
    if (step >= 86'400'000'000)
      label = full.substr(5, 5);
    else if (span > 86'400'000'000)
      label = full.substr(5, 5) + " " + full.substr(11, 5);
    else if (step >= 60'000'000)
      label = full.substr(11, 5);
    else if (step >= 1'000'000)
      label = full.substr(11, 8);
    else
      label = full.substr(11, 12);
    ticks.push_back({t, std::move(label)});
  }
  return ticks;
}

double slot_height(uint32_t lanes) { return std::clamp(64.0 / std::max<uint32_t>(lanes, 1), 0.5, 10.0); }
double row_height(uint32_t lanes) { return std::max<uint32_t>(lanes, 1) * slot_height(lanes) + 2 * kRowPadding; }

std::string run_title(const TimelineRun& run, const TimelineJob* job) {
  std::string where;
  for (const auto& p : run.placements)
    where += fmt::format("{}{} CPU{} {}", where.empty() ? "" : ", ", p.node, p.cpus == 1 ? "" : "s",
                         p.cpus == 1 ? std::to_string(p.slot) : fmt::format("{}-{}", p.slot, p.slot + p.cpus - 1));
  std::string text = fmt::format("Job {}{} run {}", run.job_id, job ? " (" + job->name + ")" : "", run.restart);
  if (job) text += " · " + job->user;
  text += fmt::format(" · {}{} · {} → {}{} ({})", state_name(run.state),
                      run.open ? "" : " " + fmt::format("{}:{}", run.exit_code, run.exit_signal),
                      short_time(run.start_us), short_time(run.end_us), run.open ? " (open at the log's end)" : "",
                      duration_text(run.end_us - run.start_us));
  text += " · " + where;
  for (const auto& span : run.suspended)
    text += fmt::format(" · suspended {} → {}", short_time(span.start_us), short_time(span.end_us));
  return text;
}

std::string marker_title(const RunMarker& marker, uint64_t job) {
  switch (marker.kind) {
    case MarkerKind::oom:
      return fmt::format("Job {}: out of memory on {} at {} (peak {}, limit {})", job, marker.node,
                         short_time(marker.time_us), marker.peak_bytes ? format_size(marker.peak_bytes) : "unknown",
                         marker.limit_bytes ? format_size(marker.limit_bytes) : "none");
    case MarkerKind::step_oom:
      return fmt::format("Job {} step {}: out of memory on {} at {}", job, marker.step_id, marker.node,
                         short_time(marker.time_us));
    case MarkerKind::node_fail:
      return fmt::format("Job {}: node {} failed at {}", job, marker.node, short_time(marker.time_us));
  }
  return "";
}

std::string stage_title(const StageSpan& stage) {
  std::string text = fmt::format("Job {}: stage-{} on {} · {} → {} ({})", stage.job_id,
                                 stage.direction == schema::StageDirection::STAGE_IN ? "in" : "out",
                                 stage.node.empty() ? "?" : stage.node, short_time(stage.start_us),
                                 short_time(stage.end_us), duration_text(stage.end_us - stage.start_us));
  switch (stage.outcome) {
    case StageSpanOutcome::done:
      text += fmt::format(" · {} copied in {}", format_size(stage.bytes), duration_text(stage.duration_us));
      break;
    case StageSpanOutcome::failed: text += " · FAILED: " + stage.message; break;
    case StageSpanOutcome::aborted: text += " · cut short by the job's end"; break;
    case StageSpanOutcome::open: text += " · still staging at the log's end"; break;
  }
  return text;
}

constexpr std::string_view kSvgDefs =
    "<defs>"
    "<pattern id=\"hatch\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" patternTransform=\"rotate(45)\">"
    "<rect width=\"6\" height=\"6\" fill=\"#ffffff\" fill-opacity=\"0.55\"/>"
    "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#333\" stroke-width=\"2.2\"/></pattern>"
    "<marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"7\" markerHeight=\"7\" "
    "orient=\"auto-start-reverse\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#2a9d9d\"/></marker>"
    "</defs>";

constexpr std::string_view kSvgStyle =
    "<style>"
    ".run{stroke:#fff;stroke-width:.6}.suspend{pointer-events:none}"
    ".oom{fill:#a0306e;stroke:#fff;stroke-width:1}.node-fail{fill:#111;stroke:#fff;stroke-width:1}"
    ".requeue-link{fill:none;stroke:#2a9d9d;stroke-width:1.5;stroke-dasharray:4 3}"
    ".node-down{fill:#f6d5d5}.row-sep{stroke:#e3e3e3}.grid{stroke:#ececec}"
    ".label{fill:#333}.muted{fill:#777}.title{font-size:16px;font-weight:600}"
    ".stage{stroke:#fff;stroke-width:.6}.stage.failed{stroke:#d64541;stroke-width:1.5;stroke-dasharray:3 2}"
    ".empty-message{font-size:15px;fill:#555}"
    "</style>";

// The static drawing, built top to bottom.
class StaticTimeline {
 public:
  StaticTimeline(const TimelineCapture& capture, const TimelineFilter& filter)
      : model_(capture.model), filter_(filter) {
    for (const auto& job : model_.jobs) jobs_[job.id] = &job;
    double y = 0;
    for (size_t i = 0; i < model_.nodes.size(); ++i) {
      node_index_[model_.nodes[i].name] = i;
      row_y_.push_back(y);
      y += row_height(model_.nodes[i].lanes);
    }
    rows_height_ = y;
  }

  std::string render() {
    double y = header(16);
    if (model_.emptiness != TimelineEmptiness::not_empty) {
      out_ += fmt::format("<text class=\"empty-message\" x=\"{}\" y=\"{}\">{}</text>", num(kLeft), num(y + 40),
                          esc(timeline_notices(model_, filter_).front()));
      y += 70;
    }
    y = axis(y + 8);
    y = gantt(y);
    y = stages(y + 10);
    y = utilisation(y + 16);
    y = queue(y + 16);
    y = legend(y + 14);
    return fmt::format(
               "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"cairn-timeline\" width=\"{}\" height=\"{}\" "
               "viewBox=\"0 0 {} {}\" font-family=\"system-ui, sans-serif\" font-size=\"11\">",
               num(kWidth), num(y + 10), num(kWidth), num(y + 10)) +
           std::string(kSvgDefs) + std::string(kSvgStyle) +
           fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>", num(kWidth), num(y + 10)) + out_ + "</svg>\n";
  }

 private:
  double x(int64_t t) const {
    int64_t clamped = std::clamp(t, model_.from_us, model_.to_us);
    double span = static_cast<double>(std::max<int64_t>(1, model_.to_us - model_.from_us));
    return kLeft + static_cast<double>(clamped - model_.from_us) / span * kPlotWidth;
  }

  const TimelineJob* job(uint64_t id) const {
    auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : it->second;
  }

  std::optional<size_t> row(const std::string& node) const {
    auto it = node_index_.find(node);
    if (it == node_index_.end()) return std::nullopt;
    return it->second;
  }

  double header(double y) {
    out_ += fmt::format("<text class=\"title\" x=\"10\" y=\"{}\">Cairn cluster timeline</text>", num(y + 6));
    y += 24;
    std::string meta =
        model_.events == 0
            ? std::string("empty log")
            : fmt::format("{} → {} (UTC) · {} run{} of {} job{} on {} node{}", short_time(model_.from_us),
                          short_time(model_.to_us), model_.runs.size(), model_.runs.size() == 1 ? "" : "s",
                          model_.jobs.size(), model_.jobs.size() == 1 ? "" : "s", model_.nodes.size(),
                          model_.nodes.size() == 1 ? "" : "s");
    auto summary = filter_summary(filter_);
    if (!summary.empty()) meta += " · " + summary;
    out_ += fmt::format("<text class=\"muted\" x=\"10\" y=\"{}\">{}</text>", num(y), esc(meta));
    for (const auto& notice : timeline_notices(model_, filter_)) {
      y += 16;
      out_ += fmt::format("<text class=\"notice\" x=\"10\" y=\"{}\" fill=\"#a15c00\">{}</text>", num(y), esc(notice));
    }
    return y + 8;
  }

  double axis(double y) {
    axis_ticks_ = time_ticks(model_.from_us, model_.to_us, kPlotWidth);
    for (const auto& tick : axis_ticks_)
      out_ += fmt::format("<text class=\"muted\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(x(tick.time_us)),
                          num(y + 10), esc(tick.label));
    return y + 16;
  }

  void grid(double top, double bottom) {
    for (const auto& tick : axis_ticks_)
      out_ += fmt::format("<line class=\"grid\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>", num(x(tick.time_us)),
                          num(top), num(bottom));
  }

  size_t visible_bars() const {
    size_t bars = 0;
    for (const auto& run : model_.runs) bars += run.placements.size();
    return bars;
  }

  double gantt(double top) {
    grid(top, top + rows_height_);
    for (size_t i = 0; i < model_.nodes.size(); ++i) {
      const auto& node = model_.nodes[i];
      double y = top + row_y_[i], h = row_height(node.lanes);
      for (const auto& down : node.down) {
        double x0 = x(down.span.start_us), x1 = x(down.span.end_us);
        out_ += fmt::format(
            "<rect class=\"node-down\" data-node=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{} down "
            "{} → {}: {}</title></rect>",
            esc(node.name), num(x0), num(y), num(std::max(1.0, x1 - x0)), num(h), esc(node.name),
            short_time(down.span.start_us), down.open ? "the end of the drawing (still down)" : short_time(down.span.end_us),
            esc(down.reason));
      }
      out_ += fmt::format("<line class=\"row-sep\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>", num(kLeft),
                          num(kLeft + kPlotWidth), num(y + h), num(y + h));
      out_ += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} <tspan class=\"muted\">{} "
                          "CPU{}</tspan></text>",
                          num(kLeft - 8), num(y + h / 2 + 4), esc(node.name), node.cpus, node.cpus == 1 ? "" : "s");
    }
    if (visible_bars() > kMaxStaticBars)
      occupancy(top);
    else
      bars(top);
    markers(top);
    return top + rows_height_;
  }

  // Where a placement's slots are drawn.
  struct Box {
    double y, h;
  };
  Box box(double top, size_t row_index, uint32_t slot, uint32_t cpus) const {
    double slot_h = slot_height(model_.nodes[row_index].lanes);
    double gap = slot_h >= 4 ? 0.6 : 0;
    return {top + row_y_[row_index] + kRowPadding + slot * slot_h, std::max(0.5, cpus * slot_h - gap)};
  }

  void bars(double top) {
    std::map<uint64_t, const TimelineRun*> previous;  // a job's run before this one
    for (const auto& run : model_.runs) {
      const auto* owner = job(run.job_id);
      auto title = esc(run_title(run, owner));
      double x0 = x(run.start_us), x1 = x(run.end_us);
      for (const auto& placement : run.placements) {
        auto r = row(placement.node);
        if (!r) continue;
        Box b = box(top, *r, placement.slot, placement.cpus);
        out_ += fmt::format(
            "<rect class=\"run\" data-job=\"{}\" data-run=\"{}\" data-state=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" "
            "height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
            run.job_id, run.restart, state_name(run.state), num(x0), num(b.y), num(std::max(0.8, x1 - x0)), num(b.h),
            state_colour(run.state), title);
        for (const auto& span : run.suspended) {
          double s0 = x(span.start_us), s1 = x(span.end_us);
          out_ += fmt::format(
              "<rect class=\"suspend\" data-job=\"{}\" data-run=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
              "fill=\"url(#hatch)\"/>",
              run.job_id, run.restart, num(s0), num(b.y), num(std::max(0.8, s1 - s0)), num(b.h));
        }
        if (run.open && run.end_us >= model_.to_us)
          out_ += fmt::format("<path class=\"open-end\" d=\"M{},{} l5,{} l-5,{} z\" fill=\"{}\"/>", num(x1), num(b.y),
                              num(b.h / 2), num(b.h / 2), state_colour(run.state));
      }
      auto before = previous.find(run.job_id);
      if (before != previous.end() && before->second->next != RunSuccession::none) link(top, *before->second, run);
      previous[run.job_id] = &run;
    }
  }

  void link(double top, const TimelineRun& from, const TimelineRun& to) {
    if (from.placements.empty() || to.placements.empty()) return;
    auto r0 = row(from.placements.front().node), r1 = row(to.placements.front().node);
    if (!r0 || !r1) return;
    Box b0 = box(top, *r0, from.placements.front().slot, from.placements.front().cpus);
    Box b1 = box(top, *r1, to.placements.front().slot, to.placements.front().cpus);
    double x0 = x(from.end_us), y0 = b0.y + b0.h / 2, x1 = x(to.start_us), y1 = b1.y + b1.h / 2;
    double bend = std::max(12.0, (x1 - x0) / 3);
    out_ += fmt::format(
        "<path class=\"requeue-link\" data-job=\"{}\" data-from-run=\"{}\" data-to-run=\"{}\" d=\"M{},{} C{},{} {},{} "
        "{},{}\" marker-end=\"url(#arrow)\"><title>Job {}: {} at {}, run {} → run {}</title></path>",
        from.job_id, from.restart, to.restart, num(x0), num(y0), num(x0 + bend), num(y0 - 14), num(x1 - bend),
        num(y1 - 14), num(x1), num(y1), from.job_id,
        from.next == RunSuccession::resubmit         ? "resubmitted"
        : from.next == RunSuccession::node_fail_requeue ? "requeued after a node failure"
                                                        : "requeued",
        short_time(from.requeued_us), from.restart, to.restart);
  }

  // CPU occupancy per row and column when there are too many bars to draw one by one.
  void occupancy(double top) {
    size_t columns = static_cast<size_t>(kPlotWidth / kBinPixels) + 1;
    double span = static_cast<double>(std::max<int64_t>(1, model_.to_us - model_.from_us));
    double column_us = span / static_cast<double>(columns);
    std::vector<std::vector<double>> busy(model_.nodes.size(), std::vector<double>(columns + 1, 0));
    for (const auto& run : model_.runs) {
      double a = static_cast<double>(std::max(run.start_us, model_.from_us) - model_.from_us) / column_us;
      double b = static_cast<double>(std::min(run.end_us, model_.to_us) - model_.from_us) / column_us;
      if (b < a) continue;
      for (const auto& placement : run.placements) {
        auto r = row(placement.node);
        if (!r) continue;
        auto& cells = busy[*r];
        for (auto c = static_cast<size_t>(a); c <= static_cast<size_t>(b) && c < columns; ++c) {
          double overlap = std::min(b, c + 1.0) - std::max(a, static_cast<double>(c));
          cells[c] += std::max(0.0, overlap) * placement.cpus;
        }
      }
    }
    size_t drawn_runs = model_.runs.size();
    // One path per level of occupancy, each column a rectangle of it: few elements, few bytes.
    std::array<std::string, kOccupancyLevels + 1> paths;
    for (size_t r = 0; r < model_.nodes.size(); ++r) {
      double lanes = std::max<uint32_t>(model_.nodes[r].lanes, 1);
      Box b = box(top, r, 0, model_.nodes[r].lanes);
      auto level_of = [&](size_t c) {
        return static_cast<size_t>(std::ceil(std::min(1.0, busy[r][c] / lanes) * kOccupancyLevels));
      };
      for (size_t c = 0; c < columns;) {
        size_t level = level_of(c), end = c + 1;
        while (end < columns && level_of(end) == level) ++end;
        if (level > 0)
          paths[level] += fmt::format("M{},{}h{}v{}h-{}z", num(kLeft + c * kBinPixels), num(b.y),
                                      num((end - c) * kBinPixels), num(b.h), num((end - c) * kBinPixels));
        c = end;
      }
    }
    for (size_t level = 1; level <= kOccupancyLevels; ++level)
      if (!paths[level].empty())
        out_ += fmt::format("<path class=\"agg\" d=\"{}\" fill=\"{}\" fill-opacity=\"{}\"/>", paths[level],
                            kAggregateColour, num(static_cast<double>(level) / kOccupancyLevels));
    out_ += fmt::format(
        "<text class=\"muted\" x=\"{}\" y=\"{}\">{} runs drawn as CPU occupancy per node (darker: busier); the HTML "
        "page shows each run when zoomed in</text>",
        num(kLeft), num(top - 4), drawn_runs);
  }

  void markers(double top) {
    size_t drawn = 0;
    for (const auto& run : model_.runs) {
      for (const auto& marker : run.markers) {
        if (drawn >= kMaxStaticMarkers) return;
        if (marker.time_us < model_.from_us || marker.time_us > model_.to_us) continue;
        auto r = row(marker.node);
        if (!r && !run.placements.empty()) r = row(run.placements.front().node);
        if (!r) continue;
        uint32_t slot = 0, cpus = 1;
        for (const auto& placement : run.placements)
          if (placement.node == model_.nodes[*r].name) {
            slot = placement.slot;
            cpus = placement.cpus;
            break;
          }
        Box b = box(top, *r, slot, cpus);
        double mx = x(marker.time_us), my = b.y + b.h / 2;
        std::string title = esc(marker_title(marker, run.job_id));
        if (marker.kind == MarkerKind::node_fail)
          out_ += fmt::format(
              "<path class=\"node-fail\" data-job=\"{}\" data-run=\"{}\" d=\"M{},{} l6,6 l-6,6 l-6,-6 z\"><title>{}</title></path>",
              run.job_id, run.restart, num(mx), num(my - 6), title);
        else
          out_ += fmt::format(
              "<path class=\"oom{}\" data-job=\"{}\" data-run=\"{}\" d=\"M{},{} l6,-10 l-12,0 z\"><title>{}</title></path>",
              marker.kind == MarkerKind::step_oom ? " step" : "", run.job_id, run.restart, num(mx), num(my + 4), title);
        ++drawn;
      }
    }
  }

  double stages(double top) {
    if (model_.stages.empty()) return top;
    auto lanes = stage_lanes(model_.stages);
    uint32_t count = 0;
    for (uint32_t lane : lanes) count = std::max(count, lane + 1);
    double height = count * kStageLane + 4;
    out_ += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">burst buffer</text>",
                        num(kLeft - 8), num(top + std::min(height, 24.0) / 2 + 4));
    grid(top, top + height);
    size_t drawn = 0;
    for (size_t i = 0; i < model_.stages.size() && drawn < kMaxStaticBars; ++i, ++drawn) {
      const auto& stage = model_.stages[i];
      double x0 = x(stage.start_us), x1 = x(stage.end_us);
      bool in = stage.direction == schema::StageDirection::STAGE_IN;
      out_ += fmt::format(
          "<rect class=\"stage{}\" data-job=\"{}\" data-direction=\"{}\" data-outcome=\"{}\" x=\"{}\" y=\"{}\" "
          "width=\"{}\" height=\"{}\" fill=\"{}\"{}><title>{}</title></rect>",
          stage.outcome == StageSpanOutcome::failed ? " failed" : "", stage.job_id, in ? "in" : "out",
          stage.outcome == StageSpanOutcome::done     ? "done"
          : stage.outcome == StageSpanOutcome::failed ? "failed"
          : stage.outcome == StageSpanOutcome::aborted ? "aborted"
                                                   : "open",
          num(x0), num(top + 2 + lanes[i] * kStageLane), num(std::max(0.8, x1 - x0)), num(kStageLane - 2),
          in ? kStageInColour : kStageOutColour, stage.outcome == StageSpanOutcome::aborted ? " fill-opacity=\"0.4\"" : "",
          esc(stage_title(stage)));
    }
    return top + height;
  }

  // The points of a step series worth drawing: at most one per pixel column (the one
  // with the largest value there, so that peaks stay visible).
  std::vector<size_t> column_points(const std::vector<int64_t>& times, const std::vector<double>& values) const {
    std::vector<size_t> kept;
    long column = -1;
    for (size_t i = 0; i < times.size(); ++i) {
      auto px = static_cast<long>(std::floor(x(times[i])));
      if (px == column && !kept.empty()) {
        if (values[i] > values[kept.back()]) kept.back() = i;
        continue;
      }
      column = px;
      kept.push_back(i);
    }
    return kept;
  }

  // A step function as an SVG path: horizontal, then vertical to each new value.
  std::string step_path(const std::vector<int64_t>& times, const std::vector<double>& values, double base,
                        double scale) const {
    std::string d;
    for (size_t i : column_points(times, values)) {
      double px = x(times[i]), py = base - values[i] * scale;
      d += d.empty() ? fmt::format("M{},{}", num(px), num(py)) : fmt::format(" H{} V{}", num(px), num(py));
    }
    return d;
  }

  double utilisation(double top) {
    double max_total = 1;
    for (const auto& series : model_.utilisation)
      for (const auto& point : series.points) max_total = std::max<double>(max_total, std::max(point.total, point.allocated));
    double base = top + kUtilisationHeight;
    chart_frame(top, kUtilisationHeight, "CPUs allocated", max_total);
    size_t colour = 0;
    double legend_x = kLeft;
    std::string lines;  // the cluster's drawn last, on top of partitions that may equal it
    for (const auto& series : model_.utilisation) {
      std::vector<int64_t> times;
      std::vector<double> allocated, total;
      for (const auto& point : series.points) {
        times.push_back(point.time_us);
        allocated.push_back(point.allocated);
        total.push_back(point.total);
      }
      if (times.empty()) continue;
      auto hue = kSeriesColours[colour++ % std::size(kSeriesColours)];
      std::string name = series.partition.empty() ? "cluster" : series.partition;
      double scale = kUtilisationHeight / max_total;
      auto drawn = fmt::format(
          "<path class=\"utilisation-total\" data-partition=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" "
          "stroke-width=\"1\" stroke-dasharray=\"4 3\"/>",
          esc(name), step_path(times, total, base, scale), hue);
      drawn += fmt::format(
          "<path class=\"utilisation\" data-partition=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"/>",
          esc(name), step_path(times, allocated, base, scale), hue, series.partition.empty() ? "2" : "1.4");
      lines = series.partition.empty() ? lines + drawn : drawn + lines;
      out_ += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"3\" fill=\"{}\"/><text class=\"label\" x=\"{}\" "
          "y=\"{}\">{}</text>",
          num(legend_x), num(base + 14), hue, num(legend_x + 14), num(base + 18), esc(name));
      legend_x += 24 + 7 * name.size();
    }
    out_ += lines;
    out_ += fmt::format("<text class=\"muted\" x=\"{}\" y=\"{}\">solid: allocated · dashed: total of the nodes up</text>",
                        num(legend_x + 10), num(base + 18));
    return base + 24;
  }

  void chart_frame(double top, double height, std::string_view title, double max_value) {
    grid(top, top + height);
    out_ += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#999\"/>", num(kLeft),
                        num(kLeft + kPlotWidth), num(top + height));
    out_ += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(kLeft - 8),
                        num(top + 10), esc(title));
    out_ += fmt::format("<text class=\"muted\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(kLeft - 8),
                        num(top + 24), num(max_value));
    out_ += fmt::format("<text class=\"muted\" x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text>", num(kLeft - 8),
                        num(top + height));
  }

  double queue(double top) {
    std::vector<int64_t> times;
    std::vector<double> totals;
    for (const auto& point : model_.queue) {
      uint32_t sum = 0;
      for (uint32_t n : point.pending) sum += n;
      times.push_back(point.time_us);
      totals.push_back(sum);
    }
    double max_total = std::max(1.0, totals.empty() ? 0.0 : *std::max_element(totals.begin(), totals.end()));
    double base = top + kQueueHeight;
    chart_frame(top, kQueueHeight, "jobs pending", max_total);
    double scale = kQueueHeight / max_total;
    auto kept = column_points(times, totals);
    // Stacked: each category's band lies on the ones before it.
    std::vector<double> below(kept.size(), 0);
    double legend_x = kLeft;
    for (size_t c = 0; c < kQueueCategories; ++c) {
      auto name = queue_category_name(static_cast<QueueCategory>(c));
      if (!kept.empty()) {
        std::string d;
        for (size_t k = 0; k < kept.size(); ++k) {
          double px = x(times[kept[k]]), y_top = base - (below[k] + model_.queue[kept[k]].pending[c]) * scale;
          d += k == 0 ? fmt::format("M{},{}", num(px), num(y_top)) : fmt::format(" H{} V{}", num(px), num(y_top));
        }
        for (size_t k = kept.size(); k-- > 0;)
          d += fmt::format(" V{} H{}", num(base - below[k] * scale), num(x(times[kept[k]])));
        out_ += fmt::format("<path class=\"queue\" data-category=\"{}\" d=\"{} Z\" fill=\"{}\" fill-opacity=\"0.85\"/>",
                            name, d, kCategoryColours[c]);
        for (size_t k = 0; k < kept.size(); ++k) below[k] += model_.queue[kept[k]].pending[c];
      }
      out_ += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text class=\"label\" x=\"{}\" "
          "y=\"{}\">{}</text>",
          num(legend_x), num(base + 9), kCategoryColours[c], num(legend_x + 14), num(base + 18), name);
      legend_x += 24 + 7 * name.size();
    }
    out_ += fmt::format(
        "<text class=\"muted\" x=\"{}\" y=\"{}\">waiting: resources or priority (the scheduler's reasons are not "
        "logged)</text>",
        num(legend_x + 10), num(base + 18));
    return base + 24;
  }

  double legend(double top) {
    std::set<JobState> states;
    for (const auto& run : model_.runs) states.insert(run.state);
    double lx = kLeft;
    for (JobState state : states) {
      auto name = state_name(state);
      out_ += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{}\"/><text class=\"label\" x=\"{}\" "
          "y=\"{}\">{}</text>",
          num(lx), num(top), state_colour(state), num(lx + 16), num(top + 9), name);
      lx += 26 + 7 * name.size();
    }
    out_ += fmt::format(
        "<rect x=\"{0}\" y=\"{1}\" width=\"14\" height=\"10\" fill=\"#3b7dd8\"/><rect x=\"{0}\" y=\"{1}\" width=\"14\" "
        "height=\"10\" fill=\"url(#hatch)\"/><text class=\"label\" x=\"{2}\" y=\"{3}\">suspended</text>",
        num(lx), num(top), num(lx + 18), num(top + 9));
    lx += 90;
    out_ += fmt::format(
        "<path class=\"oom legend\" d=\"M{},{} l6,-10 l-12,0 z\"/><text class=\"label\" x=\"{}\" y=\"{}\">out of memory</text>",
        num(lx + 6), num(top + 10), num(lx + 16), num(top + 9));
    lx += 110;
    out_ += fmt::format(
        "<path class=\"node-fail legend\" d=\"M{},{} l6,6 l-6,6 l-6,-6 z\"/><text class=\"label\" x=\"{}\" y=\"{}\">node "
        "failure</text>",
        num(lx + 6), num(top - 1), num(lx + 16), num(top + 9));
    lx += 100;
    out_ += fmt::format(
        "<path class=\"requeue-link legend\" d=\"M{},{} h24\" marker-end=\"url(#arrow)\"/><text class=\"label\" x=\"{}\" "
        "y=\"{}\">requeue</text>",
        num(lx), num(top + 5), num(lx + 30), num(top + 9));
    lx += 90;
    out_ += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{}\"/><text class=\"label\" x=\"{}\" y=\"{}\">stage-in</text>",
        num(lx), num(top), kStageInColour, num(lx + 16), num(top + 9));
    lx += 70;
    out_ += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{}\"/><text class=\"label\" x=\"{}\" y=\"{}\">stage-out</text>",
        num(lx), num(top), kStageOutColour, num(lx + 16), num(top + 9));
    return top + 16;
  }

  const TimelineModel& model_;
  const TimelineFilter& filter_;
  std::map<uint64_t, const TimelineJob*> jobs_;
  std::map<std::string, size_t, std::less<>> node_index_;
  std::vector<double> row_y_;
  double rows_height_ = 0;
  std::vector<Tick> axis_ticks_;
  std::string out_;
};

std::string page_head(std::string_view title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
      "content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>\n{}</style>\n</head>\n",
      esc(title), timeline_css());
}

}  // namespace

std::string timeline_svg(const TimelineCapture& capture, const TimelineFilter& filter) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + StaticTimeline(capture, filter).render();
}

std::string timeline_html(const TimelineCapture& capture, const TimelineFilter& filter) {
  const auto& model = capture.model;
  std::string out = page_head("Cairn timeline");
  out += "<body class=\"timeline-page\">\n<header>\n<h1>Cairn cluster timeline</h1>\n";
  out += fmt::format("<p class=\"meta\">{}</p>\n",
                     model.events == 0 ? std::string("empty log")
                                       : esc(fmt::format("{} → {} (UTC) · {} runs of {} jobs on {} nodes{}",
                                                         short_time(model.from_us), short_time(model.to_us),
                                                         model.runs.size(), model.jobs.size(), model.nodes.size(),
                                                         filter_summary(filter).empty() ? "" : " · " + filter_summary(filter))));
  auto notices = timeline_notices(model, filter);
  if (!notices.empty()) {
    out += "<ul class=\"notices\">\n";
    for (const auto& notice : notices) out += "<li>" + esc(notice) + "</li>\n";
    out += "</ul>\n";
  }
  out += "</header>\n";
  out += "<div id=\"toolbar\" hidden><button id=\"zoom-in\" title=\"zoom in\">+</button><button id=\"zoom-out\" "
         "title=\"zoom out\">−</button><button id=\"zoom-reset\">whole window</button><span id=\"view-range\"></span>"
         "<span class=\"hint\">wheel: zoom · drag: pan · click a bar: the job's audit</span></div>\n";
  out += "<main id=\"timeline\"></main>\n<aside id=\"panel\" hidden></aside>\n<div id=\"tooltip\" hidden></div>\n";
  out += "<noscript><div class=\"static\">\n";
  out += StaticTimeline(capture, filter).render();
  out += "</div></noscript>\n";
  out += "<script type=\"application/json\" id=\"cairn-data\">";
  out += timeline_json(model, filter);
  out += "</script>\n<script type=\"text/plain\" id=\"cairn-audit\">\n";
  out += audit_lines(model, capture.audit);
  out += "</script>\n<script>\n";
  out += timeline_js();
  out += "</script>\n</body>\n</html>\n";
  return out;
}

std::string job_story_html(const TimelineCapture& capture, uint64_t job_id) {
  const auto& model = capture.model;
  const TimelineJob* job = nullptr;
  for (const auto& candidate : model.jobs)
    if (candidate.id == job_id) job = &candidate;
  std::vector<const TimelineRun*> runs;
  for (const auto& run : model.runs)
    if (run.job_id == job_id) runs.push_back(&run);
  std::vector<const StageSpan*> stages;
  for (const auto& stage : model.stages)
    if (stage.job_id == job_id) stages.push_back(&stage);
  auto rows_it = capture.audit.find(job_id);
  static const std::vector<AuditRow> kNoRows;
  const auto& rows = rows_it == capture.audit.end() ? kNoRows : rows_it->second;

  // The story's window: from its submission to its end (or the log's), with a margin.
  int64_t start = job ? job->submit_us : model.from_us;
  int64_t end = job && job->end_us ? job->end_us : model.last_event_us;
  for (const auto* run : runs) end = std::max(end, run->end_us);
  for (const auto* stage : stages) end = std::max(end, stage->end_us);
  int64_t margin = std::max<int64_t>(500'000, (end - start) / 40);
  int64_t from = start - margin, to = end + margin;
  double width = 1200, left = 130, plot = width - left - 120;  // room for the runs' end states
  auto x = [&](int64_t t) {
    return left + static_cast<double>(std::clamp(t, from, to) - from) / static_cast<double>(std::max<int64_t>(1, to - from)) * plot;
  };

  std::string svg;
  double y = 10;
  auto ticks = time_ticks(from, to, plot);
  for (const auto& tick : ticks)
    svg += fmt::format("<text class=\"muted\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", num(x(tick.time_us)),
                       num(y + 10), esc(tick.label));
  y += 18;
  double grid_top = y;
  auto lane_label = [&](std::string_view text, double lane_y, double h) {
    svg += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(left - 8),
                       num(lane_y + h / 2 + 4), esc(text));
  };
  // States over time.
  if (job) {
    lane_label("state", y, 18);
    for (size_t i = 0; i < job->states.size(); ++i) {
      const auto& change = job->states[i];
      int64_t until = i + 1 < job->states.size() ? job->states[i + 1].time_us : (job->end_us ? job->end_us : end);
      if (is_final(change.state)) until = std::max(until, change.time_us) + margin / 2;
      double x0 = x(change.time_us), x1 = x(until);
      svg += fmt::format(
          "<rect class=\"state\" data-state=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"18\" fill=\"{}\"{}><title>{} "
          "from {}{}</title></rect>",
          state_name(change.state), num(x0), num(y), num(std::max(1.0, x1 - x0)), state_colour(change.state),
          change.state == JobState::SUSPENDED ? "" : "", state_name(change.state), short_time(change.time_us),
          change.reason == Reason::none ? "" : " (Reason=" + std::string(reason_name(change.reason)) + ")");
      if (change.state == JobState::SUSPENDED)
        svg += fmt::format("<rect class=\"suspend\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"18\" fill=\"url(#hatch)\"/>",
                           num(x0), num(y), num(std::max(1.0, x1 - x0)));
      if (x1 - x0 > 60)
        svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#fff\" font-size=\"10\">{}</text>", num(x0 + 3), num(y + 13),
                           state_name(change.state));
    }
    y += 26;
  }
  // Runs, each with its suspensions and markers.
  for (const auto* run : runs) {
    std::string nodes;
    for (const auto& p : run->placements) nodes += (nodes.empty() ? "" : ",") + p.node;
    lane_label(fmt::format("run {} · {}", run->restart, nodes), y, 18);
    double x0 = x(run->start_us), x1 = x(run->end_us);
    svg += fmt::format(
        "<rect class=\"run\" data-job=\"{}\" data-run=\"{}\" data-state=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" "
        "height=\"18\" fill=\"{}\"><title>{}</title></rect>",
        job_id, run->restart, state_name(run->state), num(x0), num(y), num(std::max(1.0, x1 - x0)),
        state_colour(run->state), esc(run_title(*run, job)));
    for (const auto& span : run->suspended)
      svg += fmt::format(
          "<rect class=\"suspend\" data-job=\"{}\" data-run=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"18\" "
          "fill=\"url(#hatch)\"><title>suspended {} → {}</title></rect>",
          job_id, run->restart, num(x(span.start_us)), num(y), num(std::max(1.0, x(span.end_us) - x(span.start_us))),
          short_time(span.start_us), short_time(span.end_us));
    for (const auto& marker : run->markers) {
      double mx = x(marker.time_us);
      if (marker.kind == MarkerKind::node_fail)
        svg += fmt::format("<path class=\"node-fail\" data-job=\"{}\" d=\"M{},{} l6,6 l-6,6 l-6,-6 z\"><title>{}</title></path>",
                           job_id, num(mx), num(y + 3), esc(marker_title(marker, job_id)));
      else
        svg += fmt::format("<path class=\"oom\" data-job=\"{}\" d=\"M{},{} l6,-10 l-12,0 z\"><title>{}</title></path>",
                           job_id, num(mx), num(y + 14), esc(marker_title(marker, job_id)));
    }
    svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"label\">{}</text>", num(x1 + 4), num(y + 13),
                       esc(std::string(state_name(run->state)) + (run->open ? " (open)" : "")));
    y += 24;
  }
  // Steps.
  if (job)
    for (const auto& step : job->steps) {
      lane_label(fmt::format("step {}.{} {}", job_id, step.step_id, step.name), y, 12);
      double x0 = x(step.start_us), x1 = x(step.end_us);
      svg += fmt::format(
          "<rect class=\"step\" data-step=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" fill=\"{}\"><title>step "
          "{} ({}) of run {} · {} · {} → {}{}</title></rect>",
          step.step_id, num(x0), num(y), num(std::max(1.0, x1 - x0)), state_colour(step.state), step.step_id,
          esc(step.name), step.restart, state_name(step.state), short_time(step.start_us), short_time(step.end_us),
          step.oom_kills ? fmt::format(" · {} OOM kill(s)", step.oom_kills) : "");
      y += 18;
    }
  // Staging.
  for (const auto* stage : stages) {
    bool in = stage->direction == schema::StageDirection::STAGE_IN;
    lane_label(in ? "stage-in" : "stage-out", y, 12);
    double x0 = x(stage->start_us), x1 = x(stage->end_us);
    svg += fmt::format(
        "<rect class=\"stage\" data-direction=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" fill=\"{}\"><title>{}</title></rect>",
        in ? "in" : "out", num(x0), num(y), num(std::max(1.0, x1 - x0)), in ? kStageInColour : kStageOutColour,
        esc(stage_title(*stage)));
    y += 18;
  }
  // Who did what: one mark per event, coloured by the kind of actor.
  lane_label("events", y, 16);
  for (const auto& row : rows) {
    int64_t t = row.time_us;
    std::string_view kind = row.actor.substr(row.actor.rfind('/') + 1);
    std::string_view colour = kind == "user" ? "#3b7dd8" : kind == "operator" ? "#e08a1e" : kind == "agent" ? "#3c9a5f" : "#777";
    svg += fmt::format("<circle class=\"event\" data-actor=\"{}\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"><title>{} {} by {}{}</title></circle>",
                       esc(kind), num(x(t)), num(y + 8), colour, esc(row.time), esc(row.event), esc(row.actor),
                       row.details.empty() ? "" : ": " + esc(row.details));
  }
  y += 22;
  std::string grid;
  for (const auto& tick : ticks)
    grid += fmt::format("<line class=\"grid\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>", num(x(tick.time_us)),
                        num(grid_top), num(y));
  svg = fmt::format(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"job-story\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} "
            "{}\" font-family=\"system-ui, sans-serif\" font-size=\"11\">",
            num(width), num(y + 6), num(width), num(y + 6)) +
        std::string(kSvgDefs) + std::string(kSvgStyle) + grid + svg + "</svg>\n";

  std::string title = job ? fmt::format("Job {} ({})", job_id, job->name) : fmt::format("Job {}", job_id);
  std::string out = page_head(title + " — Cairn audit");
  out += "<body class=\"story-page\">\n<header>\n<h1>" + esc(title) + "</h1>\n";
  if (job)
    out += "<p class=\"meta\">" +
           esc(fmt::format("user {} · partition {} · {} CPU{} · submitted {} · {}{} · {} run{}", job->user,
                           job->partition.empty() ? "(default)" : job->partition, job->cpus, job->cpus == 1 ? "" : "s",
                           short_time(job->submit_us), state_name(job->state),
                           job->end_us ? " at " + short_time(job->end_us) : "", runs.size(), runs.size() == 1 ? "" : "s")) +
           "</p>\n";
  out += "<p class=\"legend\"><span class=\"dot user\"></span>user <span class=\"dot operator\"></span>operator "
         "<span class=\"dot agent\"></span>agent <span class=\"dot system\"></span>system</p>\n";
  out += "</header>\n<div class=\"story\">\n" + svg + "</div>\n";
  out += "<table class=\"audit\">\n<thead><tr><th>TIME</th><th>EVENT</th><th>ACTOR</th><th>DETAILS</th></tr></thead>\n<tbody>\n";
  for (const auto& row : rows)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(row.time), esc(row.event),
                       esc(row.actor), esc(row.details));
  out += "</tbody>\n</table>\n</body>\n</html>\n";
  return out;
}

}  // namespace cairn
