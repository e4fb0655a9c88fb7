// The job history: the final records of finished jobs, written just before the
// controller drops them from its state MinJobAge after their end (JobsPurged), and
// read by sacct. Like a snapshot it is derived from the log: a record written but
// never purged (a crash in between) is a duplicate that readers resolve by job id.
//
// Files <dir>/history-NNNNNN (0600 in a 0700 directory), each a sequence of blocks:
//   header (56 bytes): magic, entry count, id range, earliest submit, latest end,
//                      payload length, CRC32C of the payload
//   payload: per entry, its length (4 bytes) and 4 bytes of padding, then an
//            records::JobView message as flat-array words
// A block is one append, made durable (fdatasync) before append() returns. Only the
// headers are read at open; a reader skips blocks whose ranges miss its window.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/config.hpp"

namespace cairn {

// <StateSaveLocation>/history
std::string job_history_dir(const ClusterConfig& config);

struct HistoryEntry {
  uint64_t job_id = 0;
  int64_t submit_us = 0;
  int64_t end_us = 0;
  std::vector<uint8_t> view;  // an encoded records::JobView message (flat-array words)
};

// Where a scan goes on: a block of a file, and an entry in it.
struct HistoryCursor {
  uint32_t file = 0;
  uint64_t block_offset = 0;
  uint32_t entry = 0;
  bool operator==(const HistoryCursor&) const = default;
};

// What a scan may skip whole blocks for (0 and empty: no limit).
struct HistoryWindow {
  int64_t ended_after_us = 0;
  int64_t submitted_before_us = 0;
  std::vector<uint64_t> job_ids;
};

class JobHistory {
 public:
  // Opens the directory (creating it 0700), reads the block headers and cuts a torn
  // last block (an append a crash interrupted: its jobs were never purged).
  explicit JobHistory(std::string dir, uint64_t roll_bytes = 64u << 20);
  ~JobHistory();
  JobHistory(const JobHistory&) = delete;
  JobHistory& operator=(const JobHistory&) = delete;

  // One block, durable on return. Throws std::runtime_error on I/O errors. Several writers
  // (controllers of different shards) may share the directory: an append holds DIR/LOCK
  // exclusively and first reads what the others appended, so it writes at the true end.
  void append(const std::vector<HistoryEntry>& entries);
  // Reads what other writers appended since (under DIR/LOCK, shared): a scan then sees it.
  void refresh();

  // Visits entries from `from` in blocks the window may match until `visit` returns false
  // (that entry is not consumed). Returns where to go on, or nullopt once all were seen.
  // A block whose checksum fails is skipped with a warning.
  std::optional<HistoryCursor> scan(HistoryCursor from, const HistoryWindow& window,
                                    const std::function<bool(std::span<const uint8_t> view)>& visit) const;

  uint64_t entry_count() const { return entries_; }
  const std::string& dir() const { return dir_; }

 private:
  struct Block {
    uint64_t offset = 0;
    uint32_t count = 0;
    uint64_t min_id = 0, max_id = 0;
    int64_t min_submit_us = 0, max_end_us = 0;
    uint64_t payload_bytes = 0;
    uint32_t crc = 0;
  };
  struct File {
    std::string path;
    uint64_t size = 0;
    std::vector<Block> blocks;
  };
  void load_blocks(File& file, bool newest, bool cut);
  void catch_up(bool exclusive);
  void catch_up_locked(bool exclusive);
  bool may_match(const Block& block, const HistoryWindow& window) const;

  std::string dir_;
  uint64_t roll_bytes_;
  std::vector<File> files_;
  uint64_t entries_ = 0;
  int lock_fd_ = -1;  // DIR/LOCK: appends exclusive, refreshes shared
};

}  // namespace cairn
