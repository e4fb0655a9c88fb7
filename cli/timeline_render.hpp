// Drawing a timeline: the static SVG (`cairn log timeline --svg`, and the page's picture
// when JavaScript is off), the interactive HTML page, and one job's story
// (`cairn log audit --job N --html`). Self-contained: inline styles and scripts only.
#pragma once

#include <cstdint>
#include <string>

#include "cli/timeline_data.hpp"

namespace cairn {

// More bars than this in the static drawing are aggregated into CPU occupancy per
// node row and column of pixels.
inline constexpr size_t kMaxStaticBars = 5000;

// A standalone SVG document (with the XML namespace): the Gantt chart, the burst-buffer
// stages, utilisation and queue length, a legend; each bar's <title> is its tooltip.
std::string timeline_svg(const TimelineCapture& capture, const TimelineFilter& filter);

// The interactive page: zoom and pan, a job's audit on click, the static SVG for
// browsers without JavaScript.
std::string timeline_html(const TimelineCapture& capture, const TimelineFilter& filter);

// One job's story: its states over time, runs, steps, suspensions, OOM kills, staging,
// and who did what (the audit rows). Needs a capture made with keep_job_states.
std::string job_story_html(const TimelineCapture& capture, uint64_t job_id);

}  // namespace cairn
