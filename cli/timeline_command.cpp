#include "cli/timeline_command.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <ostream>
#include <system_error>

#include "cli/log_access.hpp"
#include "cli/timeline_render.hpp"
#include "common/private_files.hpp"
#include "common/slurm_time.hpp"
#include "events/event_codec.hpp"

namespace cairn {
namespace {

// "2026-11-18T11:06:40[Z]" in UTC, as `cairn log dump` and `audit` print times; else
// Slurm's time grammar (local time, "now-2hours", "today"...), as `--at` takes.
int64_t parse_log_time(std::string_view option, const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end) {
    std::string_view rest(end);
    int64_t micros = 0;
    if (!rest.empty() && rest[0] == '.') {  // fractions, as audit prints them
      size_t digits = 0;
      rest.remove_prefix(1);
      while (!rest.empty() && rest[0] >= '0' && rest[0] <= '9') {
        if (digits++ < 6) micros = micros * 10 + (rest[0] - '0');
        rest.remove_prefix(1);
      }
      for (; digits < 6; ++digits) micros *= 10;
    }
    if (rest.empty() || rest == "Z") return static_cast<int64_t>(timegm(&tm)) * 1'000'000 + micros;
  }
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  if (auto when = parse_begin_time(text, now.count())) return *when * 1'000'000;
  throw UsageError(fmt::format("invalid value for {}: '{}' (YYYY-MM-DDTHH:MM:SS in UTC, or a time as sbatch --begin takes)",
                               option, text));
}

std::set<uint64_t> parse_job_list(const std::vector<std::string>& lists) {
  std::set<uint64_t> jobs;
  for (const auto& list : lists) {
    size_t start = 0;
    while (start <= list.size()) {
      auto comma = list.find(',', start);
      auto item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      jobs.insert(parse_count("--job", item));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return jobs;
}

// Feeds every decodable record to the recorder (cli/log_access.hpp's order). Stops early once
// nothing later can change the window.
void replay_into(const EventLog& log, TimelineRecorder& recorder, std::ostream& err) {
  for_each_event_by_time(
      log,
      [&](const DecodedEvent& decoded) {
        int64_t time_us = decoded.event().getHeader().getTimeUs();
        if (time_us > recorder.filter().to_us && recorder.past_window()) return false;
        recorder.feed(decoded);
        return true;
      },
      [&](uint32_t partition, uint64_t offset, std::string_view why) {
        err << fmt::format("warning: partition {} offset {}: undecodable record: {}\n", partition, offset, why);
        recorder.count_undecodable();
      });
}

// Written beside its final name, then renamed: a reader never sees half a page. 0600:
// like `cairn log audit`, the page shows what only SlurmUser and root may read.
void write_private_file(const std::string& path, std::string_view content) {
  std::filesystem::path target(path);
  std::string temp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kPrivateFileMode);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot write " + path);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      throw std::system_error(error, std::generic_category(), "cannot write " + path);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    throw std::system_error(error, std::generic_category(), "cannot write " + path);
  }
}

std::string absolute(const std::string& path) {
  std::error_code ignored;
  auto full = std::filesystem::absolute(path, ignored);
  return full.empty() ? path : full.lexically_normal().string();
}

}  // namespace

int run_timeline(const EventLog& log, const ParsedArgs& args, std::ostream& out, std::ostream& err) {
  auto html = args.get("html");
  auto svg = args.get("svg");
  if (!html && !svg) throw UsageError("cairn log timeline: --html FILE or --svg FILE is required");
  TimelineFilter filter;
  if (auto from = args.get("from")) filter.from_us = parse_log_time("--from", *from);
  if (auto to = args.get("to")) filter.to_us = parse_log_time("--to", *to);
  if (filter.from_us != std::numeric_limits<int64_t>::min() && filter.to_us != std::numeric_limits<int64_t>::max() &&
      filter.to_us < filter.from_us)
    throw UsageError("cairn log timeline: --to is before --from");
  filter.jobs = parse_job_list(args.all("job"));
  filter.user = args.get_or("user", "");
  filter.partition = args.get_or("partition", "");

  TimelineRecorder recorder(filter);
  replay_into(log, recorder, err);
  auto capture = recorder.finish();
  const auto& model = capture.model;
  for (const auto& notice : timeline_notices(model, filter)) err << "cairn log timeline: " << notice << "\n";
  std::string summary = fmt::format("{} runs of {} jobs on {} nodes, {} events", model.runs.size(), model.jobs.size(),
                                    model.nodes.size(), model.events);
  if (html) {
    write_private_file(*html, timeline_html(capture, filter));
    out << fmt::format("timeline: {} ({})\n", absolute(*html), summary);
  }
  if (svg) {
    write_private_file(*svg, timeline_svg(capture, filter));
    out << fmt::format("timeline: {} ({})\n", absolute(*svg), summary);
  }
  return 0;
}

int run_audit_html(const EventLog& log, uint64_t job_id, const std::string& path, std::ostream& out,
                   std::ostream& err) {
  TimelineFilter filter;
  filter.jobs = {job_id};
  filter.keep_job_states = true;
  TimelineRecorder recorder(filter);
  replay_into(log, recorder, err);
  auto capture = recorder.finish();
  if (!capture.audit.contains(job_id)) {
    err << "cairn log audit: no events for job " << job_id << "\n";
    return 1;
  }
  write_private_file(path, job_story_html(capture, job_id));
  out << fmt::format("audit: {} (job {}, {} events)\n", absolute(path), job_id, capture.audit.at(job_id).size());
  return 0;
}

}  // namespace cairn
