#include "events/log/file_log_meta.hpp"

#include <fmt/format.h>

#include <charconv>

namespace cairn {
namespace {

constexpr uint32_t kFormatVersion = 1;  // the segment format; META's history lines are additions old readers skip

std::string segment_name(uint32_t partition, uint64_t base) { return fmt::format("p{}/{:020}.seg", partition, base); }

template <typename Number>
bool parse_number(std::string_view text, Number& value, int base = 10) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  return error == std::errc() && end == text.data() + text.size();
}

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  size_t start = 0;
  while (start < line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    if (end > start) words.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

// "p3 records 120 newest 100 tail_crc 1a2b3c4d last_job_id 7"
bool parse_history(std::string_view line, uint32_t partition, PartitionHistory& history) {
  auto words = words_of(line);
  if (words.size() != 9 || words[0] != fmt::format("p{}", partition) || words[1] != "records" ||
      words[3] != "newest" || words[5] != "tail_crc" || words[7] != "last_job_id")
    return false;
  return parse_number(words[2], history.records) && parse_number(words[4], history.newest) &&
         parse_number(words[6], history.tail_crc, 16) && parse_number(words[8], history.last_job_id);
}

std::string when_described(bool closed) {
  return closed ? "when it was closed cleanly" : "when its writer last started or rolled to a new segment";
}

}  // namespace

std::string offset_range(uint64_t first, uint64_t end) {
  if (end == first + 1) return fmt::format("offset {}", first);
  return fmt::format("offsets {}..{}", first, end - 1);
}

std::string missing_offsets(uint64_t first, uint64_t end) {
  return offset_range(first, end) + (end == first + 1 ? " is missing" : " are missing");
}

std::string format_log_description(const LogDescription& description) {
  std::string text = fmt::format("cairn event log\nversion {}\npartitions {}\n", kFormatVersion, description.partitions);
  if (!description.has_history) return text;
  text += fmt::format("writer {}\n", description.closed ? "closed" : "open");
  for (size_t p = 0; p < description.history.size(); ++p) {
    const auto& h = description.history[p];
    text += fmt::format("p{} records {} newest {} tail_crc {:08x} last_job_id {}\n", p, h.records, h.newest, h.tail_crc,
                        h.last_job_id);
  }
  return text;
}

std::optional<LogDescription> parse_log_description(std::string_view text, std::string& problem) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  LogDescription description;
  uint32_t version = 0;
  auto value_of = [&](size_t index, std::string_view key, uint32_t& value) {
    if (index >= lines.size() || !lines[index].starts_with(key)) return false;
    return parse_number(lines[index].substr(key.size()), value);
  };
  if (lines.empty() || lines[0] != "cairn event log" || !value_of(1, "version ", version) ||
      !value_of(2, "partitions ", description.partitions) || description.partitions == 0) {
    problem = "not a Cairn event log description";
    return std::nullopt;
  }
  if (version != kFormatVersion) {
    problem = fmt::format("event log format version {} is not supported (this build reads {})", version, kFormatVersion);
    return std::nullopt;
  }
  if (lines.size() <= 3 || lines[3].empty()) return description;  // written before META kept a history
  if (lines[3] != "writer open" && lines[3] != "writer closed") {
    problem = fmt::format("unreadable line '{}'", lines[3]);
    return std::nullopt;
  }
  description.closed = lines[3] == "writer closed";
  description.history.resize(description.partitions);
  for (uint32_t p = 0; p < description.partitions; ++p) {
    if (4 + p >= lines.size() || !parse_history(lines[4 + p], p, description.history[p])) {
      problem = fmt::format("the history of partition {} is missing or unreadable", p);
      return std::nullopt;
    }
  }
  description.has_history = true;
  return description;
}

PartitionVerdict assess_partition(const PartitionFound& found, const PartitionHistory* history, bool closed) {
  PartitionVerdict verdict;
  const uint32_t p = found.partition;
  const uint64_t expected = history ? history->records : 0;
  auto problem = [&](LogProblemKind kind, std::string text) { verdict.problems.push_back({kind, std::move(text)}); };
  auto held = [&] {
    return fmt::format("META says the log held {} {}", offset_range(0, expected), when_described(closed));
  };

  if (found.segments.empty()) {
    if (expected > 0)
      problem(LogProblemKind::loss, fmt::format("p{}: {}: {}", p,
                                                found.dir_exists ? "no segment file is left" : "its directory is missing",
                                                held()));
    return verdict;
  }

  uint64_t running = 0;  // offsets 0..running-1 are intact
  bool counted_loss = false;
  for (size_t i = 0; i < found.segments.size(); ++i) {
    const auto& segment = found.segments[i];
    if (segment.base != running) {
      if (i == 0)
        problem(LogProblemKind::corruption,
                fmt::format("p{}: {}: the oldest segment left is {}, which starts at offset {} (restore the missing "
                            "segment file; the beginning of a log cannot be given up)",
                            p, missing_offsets(0, segment.base), segment.name, segment.base));
      else if (segment.base > running)
        problem(LogProblemKind::corruption,
                fmt::format("p{}: {}: {} starts at offset {} but the previous segment ends at offset {}", p,
                            missing_offsets(running, segment.base), segment.name, segment.base, running));
      else
        problem(LogProblemKind::corruption,
                fmt::format("p{}: {} starts at offset {} but the previous segment ends at offset {}", p, segment.name,
                            segment.base, running));
      verdict.records = running;
      return verdict;
    }
    running += segment.records;
    if (!found.damage || found.damage->segment != i) continue;
    const auto& damage = *found.damage;
    bool last = i + 1 == found.segments.size();
    std::string where = fmt::format("{} at byte {}: {} (record {})", segment.name, damage.byte, damage.problem,
                                    damage.offset);
    if (!last) {
      // Segments are synced before the next one exists: only the last one can hold an unfinished write.
      problem(LogProblemKind::corruption,
              damage.at_tail ? where + " at the end of a segment that is not the last, which a crash cannot damage"
                             : where);
    } else if (!damage.at_tail) {
      problem(LogProblemKind::corruption, where);
    } else if (damage.unused) {
      // Space prepared for appends: not a record.
    } else if (history && damage.offset < expected) {
      // The record was durable when META was written: damage, not a write cut short.
      problem(LogProblemKind::loss, fmt::format("{}; {}, so this is damage to acknowledged records, not a write "
                                                "cut short: {} would be lost",
                                                where, held(), offset_range(damage.offset, expected)));
      counted_loss = true;
      verdict.torn_tail = true;
    } else {
      verdict.torn_tail = true;
    }
    if (verdict.torn_tail) {
      verdict.torn_byte = damage.byte;
      verdict.torn_problem = damage.problem;
    }
    break;
  }
  verdict.records = running;
  if (!verdict.problems.empty() && verdict.problems.back().kind == LogProblemKind::corruption) return verdict;
  if (!history) return verdict;

  const auto& newest = found.segments.back();
  if (running < expected && !counted_loss)
    problem(LogProblemKind::loss,
            fmt::format("p{}: {}: {}, but its segments hold {} (the newest is {}, {} bytes)", p,
                        missing_offsets(running, expected), held(),
                        running == 0 ? std::string("no record") : offset_range(0, running), newest.name, newest.bytes));
  if (!closed) {
    // A writer that did not close cleanly: META is older than the log and the newest
    // segment it names must still be there and hold its records or the zeros prepared for them.
    const SegmentFound* named = nullptr;
    for (const auto& segment : found.segments)
      if (segment.base == history->newest) named = &segment;
    if (!named)
      problem(LogProblemKind::loss, fmt::format("p{}: {}, the newest segment {}, is missing", p,
                                                segment_name(p, history->newest), when_described(false)));
    else if (named->bytes == 0)
      problem(LogProblemKind::loss,
              fmt::format("p{}: {}, the newest segment {}, is empty: a segment in use always holds its records or "
                          "the zeros prepared for them, so its records were removed",
                          p, named->name, when_described(false)));
  }
  if (expected > 0 && running >= expected && found.checked_crc && *found.checked_crc != history->tail_crc)
    problem(LogProblemKind::loss,
            fmt::format("p{}: record {} is not the one META describes (payload checksum {:08x}, META says {:08x}): "
                        "the segment files were replaced or rewritten",
                        p, expected - 1, *found.checked_crc, history->tail_crc));
  return verdict;
}

}  // namespace cairn
