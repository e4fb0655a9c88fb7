#include <doctest/doctest.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "common/slurm_time.hpp"

using cairn::format_elapsed_compact;
using cairn::format_hms;
using cairn::format_time_limit;
using cairn::format_time_limit_hms;
using cairn::format_timestamp;
using cairn::format_timestamp_or;
using cairn::kUnlimited;
using cairn::parse_begin_time;
using cairn::parse_time_limit;

namespace {

// Sets TZ for one test and restores it, so local-time results are predictable.
class ScopedTimeZone {
 public:
  explicit ScopedTimeZone(const char* zone) {
    if (const char* old = std::getenv("TZ")) saved_ = old;
    setenv("TZ", zone, 1);
    tzset();
  }
  ~ScopedTimeZone() {
    if (saved_)
      setenv("TZ", saved_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  ScopedTimeZone(const ScopedTimeZone&) = delete;
  ScopedTimeZone& operator=(const ScopedTimeZone&) = delete;

 private:
  std::optional<std::string> saved_;
};

int64_t utc(int year, int month, int day, int hour = 0, int minute = 0, int second = 0) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm));
}

}  // namespace

TEST_CASE("parse_time_limit: Slurm's -t forms, in seconds") {
  CHECK(parse_time_limit("10") == 600);
  CHECK(parse_time_limit("0") == 0);
  CHECK(parse_time_limit("10:30") == 630);
  CHECK(parse_time_limit("0:05") == 5);
  CHECK(parse_time_limit("1:02:03") == 3723);
  CHECK(parse_time_limit("90") == 5400);
  CHECK(parse_time_limit("2-0") == 2 * 86400);
  CHECK(parse_time_limit("2-3") == 2 * 86400 + 3 * 3600);
  CHECK(parse_time_limit("2-3:04") == 2 * 86400 + 3 * 3600 + 4 * 60);
  CHECK(parse_time_limit("2-3:04:05") == 2 * 86400 + 3 * 3600 + 4 * 60 + 5);
  CHECK(parse_time_limit("71582788") == 71582788u * 60);
}

TEST_CASE("parse_time_limit: unlimited spellings") {
  for (const char* text : {"UNLIMITED", "unlimited", "Unlimited", "INFINITE", "infinite", "-1"})
    CHECK_MESSAGE(parse_time_limit(text) == kUnlimited, text);
  CHECK(kUnlimited == UINT32_MAX);
}

TEST_CASE("parse_time_limit rejects empty, negative, garbage and overflow") {
  for (const char* bad : {"", "-5", "-1:00", "abc", "10x", "x10", "1:2:3:4", "1-2:3:4:5", "1-", "-", ":", "1::2",
                          " 10", "10 ", "+10", "1.5", "1-2-3", "99999999999", "71582789", "1-:00", "unlimitedx"})
    CHECK_MESSAGE(!parse_time_limit(bad), bad);
}

TEST_CASE("format_elapsed_compact: squeue TIME") {
  CHECK(format_elapsed_compact(0) == "0:00");
  CHECK(format_elapsed_compact(5) == "0:05");
  CHECK(format_elapsed_compact(65) == "1:05");
  CHECK(format_elapsed_compact(3599) == "59:59");
  CHECK(format_elapsed_compact(3600) == "1:00:00");
  CHECK(format_elapsed_compact(86399) == "23:59:59");
  CHECK(format_elapsed_compact(86400) == "1-00:00:00");
  CHECK(format_elapsed_compact(2 * 86400 + 3 * 3600 + 4 * 60 + 5) == "2-03:04:05");
  CHECK(format_elapsed_compact(123 * 86400ull) == "123-00:00:00");
}

TEST_CASE("format_hms: scontrol RunTime and sacct Elapsed") {
  CHECK(format_hms(0) == "00:00:00");
  CHECK(format_hms(5) == "00:00:05");
  CHECK(format_hms(3723) == "01:02:03");
  CHECK(format_hms(86399) == "23:59:59");
  CHECK(format_hms(86400) == "1-00:00:00");
  CHECK(format_hms(2 * 86400 + 3 * 3600 + 4 * 60 + 5) == "2-03:04:05");
}

TEST_CASE("format_time_limit and format_time_limit_hms") {
  CHECK(format_time_limit(60) == "1:00");
  CHECK(format_time_limit(5) == "0:05");
  CHECK(format_time_limit(3600) == "1:00:00");
  CHECK(format_time_limit(kUnlimited) == "UNLIMITED");
  CHECK(format_time_limit_hms(60) == "00:01:00");
  CHECK(format_time_limit_hms(86400) == "1-00:00:00");
  CHECK(format_time_limit_hms(kUnlimited) == "UNLIMITED");
}

TEST_CASE("format_timestamp: ISO local time, Unknown for 0") {
  int64_t t = utc(2026, 11, 22, 10, 0, 0);
  {
    ScopedTimeZone zone("UTC0");
    CHECK(format_timestamp(t) == "2026-11-22T10:00:00");
    CHECK(format_timestamp(t + 3723) == "2026-11-22T11:02:03");
    CHECK(format_timestamp(0) == "Unknown");
    CHECK(format_timestamp_or(0, "None") == "None");
    CHECK(format_timestamp_or(t, "None") == "2026-11-22T10:00:00");
  }
  ScopedTimeZone zone("CET-1");
  CHECK(format_timestamp(t) == "2026-11-22T11:00:00");
}

TEST_CASE("parse_begin_time: now and offsets") {
  ScopedTimeZone zone("UTC0");
  const int64_t now = utc(2026, 11, 22, 10, 0, 0);
  CHECK(parse_begin_time("now", now) == now);
  CHECK(parse_begin_time("NOW", now) == now);
  CHECK(parse_begin_time("now+60", now) == now + 60);
  CHECK(parse_begin_time("now+60seconds", now) == now + 60);
  CHECK(parse_begin_time("now+1second", now) == now + 1);
  CHECK(parse_begin_time("now+5minutes", now) == now + 300);
  CHECK(parse_begin_time("now+1minute", now) == now + 60);
  CHECK(parse_begin_time("now+1hour", now) == now + 3600);
  CHECK(parse_begin_time("now+3hours", now) == now + 3 * 3600);
  CHECK(parse_begin_time("now+2days", now) == now + 2 * 86400);
  CHECK(parse_begin_time("now+1day", now) == now + 86400);
  CHECK(parse_begin_time("now+1week", now) == now + 7 * 86400);
  CHECK(parse_begin_time("now+2weeks", now) == now + 14 * 86400);
  CHECK(parse_begin_time("Now+1Hour", now) == now + 3600);
  CHECK(parse_begin_time("now + 60", now) == now + 60);
  CHECK(parse_begin_time("now-1day", now) == now - 86400);
  // Found by fuzz_sbatch: microseconds of a time this far off do not fit in 64 bits.
  CHECK(!parse_begin_time("now+20000000weeks", now));
  CHECK(!parse_begin_time("now-20000000weeks", now));
  CHECK(parse_begin_time("9999-12-31T23:59:59", now) == 253402300799);
}

TEST_CASE("parse_begin_time: times of day are today if still ahead, else tomorrow") {
  ScopedTimeZone zone("UTC0");
  const int64_t now = utc(2026, 11, 22, 10, 0, 0);
  CHECK(parse_begin_time("11:00", now) == utc(2026, 11, 22, 11, 0));
  CHECK(parse_begin_time("10:00:30", now) == utc(2026, 11, 22, 10, 0, 30));
  CHECK(parse_begin_time("10:00", now) == utc(2026, 11, 23, 10, 0));
  CHECK(parse_begin_time("09:00", now) == utc(2026, 11, 23, 9, 0));
  CHECK(parse_begin_time("9:15:30", now) == utc(2026, 11, 23, 9, 15, 30));
  CHECK(parse_begin_time("midnight", now) == utc(2026, 11, 23));
  CHECK(parse_begin_time("noon", now) == utc(2026, 11, 22, 12, 0));
  CHECK(parse_begin_time("NOON", now) == utc(2026, 11, 22, 12, 0));
  CHECK(parse_begin_time("elevenses", now) == utc(2026, 11, 22, 11, 0));
  CHECK(parse_begin_time("fika", now) == utc(2026, 11, 22, 15, 0));
  CHECK(parse_begin_time("teatime", now) == utc(2026, 11, 22, 16, 0));
  CHECK(parse_begin_time("4:00pm", now) == utc(2026, 11, 22, 16, 0));
  CHECK(parse_begin_time("4:00 PM", now) == utc(2026, 11, 22, 16, 0));
  CHECK(parse_begin_time("12:00am", now) == utc(2026, 11, 23, 0, 0));
  CHECK(parse_begin_time("12:30pm", now) == utc(2026, 11, 22, 12, 30));
  CHECK(parse_begin_time("9:00am", now) == utc(2026, 11, 23, 9, 0));
  // Month end: tomorrow is the 1st.
  CHECK(parse_begin_time("09:00", utc(2026, 11, 30, 10, 0)) == utc(2026, 12, 1, 9, 0));
}

TEST_CASE("parse_begin_time: dates") {
  ScopedTimeZone zone("UTC0");
  const int64_t now = utc(2026, 11, 22, 10, 0, 0);
  CHECK(parse_begin_time("2026-12-01", now) == utc(2026, 12, 1));
  CHECK(parse_begin_time("2026-12-01T12:34", now) == utc(2026, 12, 1, 12, 34));
  CHECK(parse_begin_time("2026-12-01T12:34:56", now) == utc(2026, 12, 1, 12, 34, 56));
  CHECK(parse_begin_time("2026-12-01 12:34", now) == utc(2026, 12, 1, 12, 34));
  CHECK(parse_begin_time("2020-01-01", now) == utc(2020, 1, 1));  // past dates are kept (sacct -S)
  CHECK(parse_begin_time("today", now) == utc(2026, 11, 22));
  CHECK(parse_begin_time("tomorrow", now) == utc(2026, 11, 23));
  CHECK(parse_begin_time("Tomorrow", now) == utc(2026, 11, 23));
  CHECK(parse_begin_time("tomorrow noon", now) == utc(2026, 11, 23, 12, 0));
  CHECK(parse_begin_time("todayT16:00", now) == utc(2026, 11, 22, 16, 0));
  CHECK(parse_begin_time("12/25", now) == utc(2026, 12, 25));
  CHECK(parse_begin_time("01/05", now) == utc(2027, 1, 5));  // already past this year
  CHECK(parse_begin_time("11/22", now) == utc(2027, 11, 22));  // today's 00:00 is past
  CHECK(parse_begin_time("11/22T11:00", now) == utc(2026, 11, 22, 11, 0));
  CHECK(parse_begin_time("12/25/27", now) == utc(2027, 12, 25));
  CHECK(parse_begin_time("12/25/2027", now) == utc(2027, 12, 25));
  CHECK(parse_begin_time("122527", now) == utc(2027, 12, 25));
  CHECK(parse_begin_time(" 2026-12-01 ", now) == utc(2026, 12, 1));
}

TEST_CASE("parse_begin_time rejects anything else") {
  ScopedTimeZone zone("UTC0");
  const int64_t now = utc(2026, 11, 22, 10, 0, 0);
  for (const char* bad : {"", "later", "now+", "now+5min", "now*5", "now+5 minutes later", "nowish", "25:00",
                          "10:60", "10:00:60", "2026-13-01", "2026-12-32", "2026-00-10", "13:00pm", "10:00xyz",
                          "2026-12-01T", "12/25/2", "noon noon", "today tomorrow", "10", "1225", "26-12-01",
                          "2026-12", "123:00", "noonx", "10:00 11:00", "2026-12-01X10:00", "13/01"})
    CHECK_MESSAGE(!parse_begin_time(bad, now), bad);
}
