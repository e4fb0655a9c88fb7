// Slurm's time grammars and renderings: time limits (-t), durations, timestamps, --begin.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cairn {

// The latest time Cairn accepts, 9999-12-31T23:59:59Z: later ones are no date anyone means,
// and their microseconds (what events carry) would no longer fit in 64 bits.
inline constexpr int64_t kLatestUnixSecond = 253'402'300'799;

// Slurm's INFINITE: no time limit (also "no node limit" in partition configs).
inline constexpr uint32_t kUnlimited = UINT32_MAX;

// sbatch -t/--time, in seconds: "minutes", "minutes:seconds", "hours:minutes:seconds",
// "days-hours", "days-hours:minutes", "days-hours:minutes:seconds"; "UNLIMITED",
// "INFINITE" (any case) and "-1" give kUnlimited. Unlike Slurm, seconds are kept
// rather than rounded up to minutes ("0:05" is 5). "0" gives 0, which sbatch(1)
// defines as "no time limit". nullopt on anything else or on overflow.
std::optional<uint32_t> parse_time_limit(std::string_view text);

// squeue TIME (%M): "0:05", "59:59", "1:00:00", "2-03:04:05".
std::string format_elapsed_compact(uint64_t seconds);
// scontrol RunTime= and sacct Elapsed: "00:00:05", "01:02:03", "1-00:00:00".
std::string format_hms(uint64_t seconds);
// squeue TIME_LIMIT (%l): "UNLIMITED" for kUnlimited, else as format_elapsed_compact.
std::string format_time_limit(uint32_t seconds);
// scontrol TimeLimit=: "UNLIMITED" for kUnlimited, else as format_hms.
std::string format_time_limit_hms(uint32_t seconds);

// Local time as Slurm prints it: "2026-11-22T10:00:00"; if_zero for 0 (an unset time).
std::string format_timestamp_or(int64_t unix_seconds, std::string_view if_zero);
// As format_timestamp_or with "Unknown", scontrol's word for an unset time.
std::string format_timestamp(int64_t unix_seconds);

// sbatch --begin, sacct -S/-E (local time), Unix seconds:
//   now, now+N, now-N with an optional unit (seconds, minutes, hours, days, weeks;
//   singular or plural), e.g. "now+5minutes";
//   HH:MM[:SS][AM|PM] or midnight, noon, elevenses, fika (15:00), teatime (16:00):
//   today if still ahead of now, else tomorrow;
//   YYYY-MM-DD, MM/DD[/YY], MMDDYY, today, tomorrow: at 00:00 unless a time follows
//   (after 'T' or a blank), e.g. "2026-01-20T12:34:00"; MM/DD without a year means
//   the next such day not yet past.
// Keywords are case-insensitive. nullopt on anything else, and for times past year 9999.
std::optional<int64_t> parse_begin_time(std::string_view text, int64_t now_unix);

}  // namespace cairn
