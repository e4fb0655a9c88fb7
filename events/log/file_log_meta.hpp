// The file log's description of itself (DIR/META) and the judgement of what
// recovery found against it: pure functions, the file I/O is in file_log.cpp.
//
// META says what the log held when it was last written: at each writer open
// (after recovery), at each segment roll and at a clean close, never on the
// append path. A start that finds less than META says refuses (loss), unless
// the operator accepts it; a crash (kill -9) leaves META older than the log,
// never newer, so it is never mistaken for loss.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// What META says about one partition.
struct PartitionHistory {
  uint64_t records = 0;      // offsets 0..records-1 were durable
  uint64_t newest = 0;       // base offset of the newest segment
  uint32_t tail_crc = 0;     // crc32c of the payload of record records-1 (0 when records == 0)
  uint64_t last_job_id = 0;  // the highest job id the writer had issued (EventLog::note_job_id)
  bool operator==(const PartitionHistory&) const = default;
};

struct LogDescription {
  uint32_t partitions = 0;
  // Descriptions written by builds before this one have no history: nothing to check.
  bool has_history = false;
  // Written by a clean close: the counts are exact and nothing was appended after.
  // Otherwise by a writer that was open (at its start or a segment roll): the log may hold more.
  bool closed = false;
  std::vector<PartitionHistory> history;  // one per partition when has_history
  bool operator==(const LogDescription&) const = default;
};

std::string format_log_description(const LogDescription& description);

// nullopt (and `problem` says why) when the text is not a description this build reads.
std::optional<LogDescription> parse_log_description(std::string_view text, std::string& problem);

// What scanning one partition's files found (file_log.cpp fills it in).
struct SegmentFound {
  uint64_t base = 0;
  std::string name;          // "p0/00000000000000000000.seg", for messages
  uint64_t bytes = 0;        // the file's length
  uint64_t records = 0;      // complete, checked records from its start
  uint64_t valid_bytes = 0;  // where they end
};

// The first record of a partition that does not check; scanning stops there.
struct DamageFound {
  size_t segment = 0;      // index in PartitionFound::segments
  uint64_t byte = 0;       // its position in the file
  uint64_t offset = 0;     // the offset it would have
  std::string problem;     // "payload checksum mismatch", ...
  bool at_tail = false;    // only zeros follow it to the end of its file (or nothing)
  bool unused = false;     // it is all zeros to the end of the file: space prepared for appends, not a record
};

struct PartitionFound {
  uint32_t partition = 0;
  bool dir_exists = true;
  std::vector<SegmentFound> segments;  // by base offset; those after a damaged one are not scanned
  std::optional<DamageFound> damage;
  std::optional<uint32_t> checked_crc;  // payload crc of the record META says was last, when it was read
};

enum class LogProblemKind {
  corruption,  // refused, whatever the operator says: data before the tail is damaged or missing
  loss,        // records META says the log held are gone: refused unless the operator accepts it
};

struct LogProblem {
  LogProblemKind kind;
  std::string text;
};

struct PartitionVerdict {
  uint64_t records = 0;  // offsets 0..records-1 are intact
  std::vector<LogProblem> problems;
  // A torn write at the end of the last segment (or, when accepted, damaged records there):
  // its bytes from `torn_byte` on are dropped. Unused (prepared) space is not torn.
  bool torn_tail = false;
  uint64_t torn_byte = 0;
  std::string torn_problem;
};

// Judges what was found against META's history of the partition (nullptr: no history).
PartitionVerdict assess_partition(const PartitionFound& found, const PartitionHistory* history, bool closed);

// "offsets 3..9", "offset 3".
std::string offset_range(uint64_t first, uint64_t end);
// "offsets 3..9 are missing", "offset 3 is missing".
std::string missing_offsets(uint64_t first, uint64_t end);

}  // namespace cairn
