#include "common/slurm_time.hpp"

#include <array>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <utility>
#include <vector>

#include "common/string_util.hpp"

namespace cairn {
namespace {

constexpr uint64_t kMinute = 60;
constexpr uint64_t kHour = 60 * kMinute;
constexpr uint64_t kDay = 24 * kHour;
constexpr uint64_t kWeek = 7 * kDay;

// Seconds of "[hours:]minutes[:seconds]"-style fields given their units, largest first.
std::optional<uint64_t> sum_fields(const std::vector<std::string_view>& fields, const uint64_t* units) {
  uint64_t total = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    // Any single field above UINT32_MAX already exceeds every representable limit.
    auto value = parse_unsigned<uint32_t>(fields[i]);
    if (!value) return std::nullopt;
    total += *value * units[i];
  }
  return total;
}

struct Clock {
  uint64_t days, hours, minutes, seconds;
};

Clock split_seconds(uint64_t seconds) {
  return {seconds / kDay, seconds / kHour % 24, seconds / kMinute % 60, seconds % 60};
}

// `value` in decimal, zero-padded to `width` digits (printf's "%02llu" for 2); squeue prints
// a few of these for each of 100,000 lines: no printf.
void append_digits(std::string& out, uint64_t value, size_t width) {
  std::array<char, 20> buffer;
  auto end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value).ptr;
  size_t digits = static_cast<size_t>(end - buffer.data());
  if (digits < width) out.append(width - digits, '0');
  out.append(buffer.data(), digits);
}

// "[days-]hours:minutes:seconds"; hours `hours_width` digits at least when there are no days.
std::string clock_text(uint64_t days, uint64_t hours, uint64_t minutes, uint64_t seconds, size_t hours_width) {
  std::string text;
  if (days > 0) {
    append_digits(text, days, 1);
    text += '-';
  }
  append_digits(text, hours, days > 0 ? 2 : hours_width);
  text += ':';
  append_digits(text, minutes, 2);
  text += ':';
  append_digits(text, seconds, 2);
  return text;
}

std::tm local_tm(int64_t unix_seconds) {
  std::time_t time = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&time, &tm);
  return tm;
}

// Sequential reader of parse_begin_time's grammar over lower-cased text.
class BeginTimeParser {
 public:
  BeginTimeParser(std::string_view text, int64_t now) : text_(to_lower(trim(text))), now_(now) {}

  std::optional<int64_t> parse() {
    if (text_.starts_with("now")) return parse_now();
    while (!done()) {
      if (!parse_token()) return std::nullopt;
      skip_blanks();
    }
    if (!date_ && !time_) return std::nullopt;
    return resolve();
  }

 private:
  struct Date {
    std::optional<int> year;  // years since 1900; unset: the next such day not yet past
    int month = 0;  // 0-11
    int day = 1;
  };
  struct TimeOfDay {
    int hour = 0, minute = 0, second = 0;
  };

  bool done() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void skip_blanks() {
    while (!done() && is_space(peek())) ++pos_;
  }
  bool at_token_end() const { return done() || is_space(peek()) || peek() == 't'; }

  bool take(std::string_view word) {
    if (std::string_view(text_).substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  std::string_view take_digits() {
    size_t start = pos_;
    while (!done() && is_digit(peek())) ++pos_;
    return std::string_view(text_).substr(start, pos_ - start);
  }

  // "now", "now+N[unit]", "now-N[unit]"; blanks allowed around the sign, as in Slurm.
  std::optional<int64_t> parse_now() {
    pos_ = 3;
    skip_blanks();
    if (done()) return now_;
    char sign = peek();
    if (sign != '+' && sign != '-') return std::nullopt;
    ++pos_;
    skip_blanks();
    auto count = parse_unsigned<uint32_t>(take_digits());
    if (!count) return std::nullopt;
    skip_blanks();
    static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
        {"", 1},         {"seconds", 1},   {"second", 1}, {"minutes", kMinute}, {"minute", kMinute},
        {"hours", kHour}, {"hour", kHour}, {"days", kDay}, {"day", kDay},       {"weeks", kWeek},
        {"week", kWeek}};
    std::string_view unit = trim(std::string_view(text_).substr(pos_));
    for (const auto& [name, multiplier] : kUnits) {
      if (unit != name) continue;
      auto delta = static_cast<int64_t>(*count * multiplier);
      return sign == '+' ? now_ + delta : now_ - delta;
    }
    return std::nullopt;
  }

  bool parse_token() {
    static constexpr std::pair<std::string_view, TimeOfDay> kNamedTimes[] = {
        {"midnight", {0, 0, 0}}, {"noon", {12, 0, 0}}, {"elevenses", {11, 0, 0}},
        {"fika", {15, 0, 0}},    {"teatime", {16, 0, 0}}};
    for (const auto& [name, time] : kNamedTimes)
      if (take(name)) return set_time(time) && at_token_end();
    if (take("today")) return set_date_from(now_) && at_token_end();
    if (take("tomorrow")) return set_date_from(now_ + static_cast<int64_t>(kDay)) && at_token_end();
    // 'T' joins a date to its time: "2026-01-20T12:34".
    if (peek() == 't' && date_ && !time_ && is_digit(peek(1))) {
      ++pos_;
      return true;
    }
    size_t start = pos_;
    std::string_view first = take_digits();
    if (first.empty()) return false;
    switch (peek()) {
      case ':': return parse_clock(first);
      case '-': return parse_iso_date(first);
      case '/': return parse_slash_date(first);
      default: pos_ = start; return parse_mmddyy();
    }
  }

  bool set_time(TimeOfDay time) {
    if (time_) return false;
    time_ = time;
    return true;
  }

  bool set_date(Date date) {
    if (date_ || date.month < 0 || date.month > 11 || date.day < 1 || date.day > 31) return false;
    date_ = date;
    return at_token_end();
  }

  bool set_date_from(int64_t unix_seconds) {
    std::tm tm = local_tm(unix_seconds);
    if (date_) return false;
    date_ = Date{tm.tm_year, tm.tm_mon, tm.tm_mday};
    return true;
  }

  // HH:MM[:SS] with an optional AM/PM suffix.
  bool parse_clock(std::string_view hour_text) {
    std::vector<std::string_view> fields{hour_text};
    while (fields.size() < 3 && peek() == ':') {
      ++pos_;
      fields.push_back(take_digits());
    }
    std::array<int, 3> values{0, 0, 0};
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].size() > 2) return false;
      auto value = parse_unsigned<unsigned>(fields[i]);
      if (!value) return false;
      values[i] = static_cast<int>(*value);
    }
    auto [hour, minute, second] = values;
    size_t before_suffix = pos_;
    skip_blanks();
    bool am = take("am"), pm = !am && take("pm");
    if (am || pm) {
      // Slurm: 12AM is midnight, 12PM noon, nothing above 12 with a suffix.
      if (hour > 12) return false;
      if (am && hour == 12) hour = 0;
      if (pm && hour < 12) hour += 12;
    } else {
      pos_ = before_suffix;
    }
    if (hour > 23 || minute > 59 || second > 59) return false;
    return set_time({hour, minute, second}) && at_token_end();
  }

  // YYYY-MM-DD
  bool parse_iso_date(std::string_view year_text) {
    if (year_text.size() != 4) return false;
    ++pos_;
    auto month = parse_unsigned<unsigned>(take_digits());
    if (!month || !take("-")) return false;
    auto day = parse_unsigned<unsigned>(take_digits());
    if (!day || *month > 12 || *day > 31) return false;
    return set_date({static_cast<int>(*parse_unsigned<unsigned>(year_text)) - 1900, static_cast<int>(*month) - 1,
                     static_cast<int>(*day)});
  }

  // MM/DD or MM/DD/YY or MM/DD/YYYY
  bool parse_slash_date(std::string_view month_text) {
    ++pos_;
    auto month = parse_unsigned<unsigned>(month_text);
    auto day = parse_unsigned<unsigned>(take_digits());
    if (!month || !day || *month > 12 || *day > 31) return false;
    Date date{std::nullopt, static_cast<int>(*month) - 1, static_cast<int>(*day)};
    if (take("/")) {
      std::string_view year_text = take_digits();
      if (year_text.size() != 2 && year_text.size() != 4) return false;
      int year = static_cast<int>(*parse_unsigned<unsigned>(year_text));
      date.year = year_text.size() == 2 ? year + 100 : year - 1900;
    }
    return set_date(date);
  }

  // MMDDYY
  bool parse_mmddyy() {
    std::string_view digits = take_digits();
    if (digits.size() != 6) return false;
    auto number = [&](size_t at) { return static_cast<int>(*parse_unsigned<unsigned>(digits.substr(at, 2))); };
    return set_date({number(4) + 100, number(0) - 1, number(2)});
  }

  int64_t local_seconds(const Date& date, const TimeOfDay& time) const {
    std::tm tm{};
    tm.tm_year = *date.year;
    tm.tm_mon = date.month;
    tm.tm_mday = date.day;
    tm.tm_hour = time.hour;
    tm.tm_min = time.minute;
    tm.tm_sec = time.second;
    tm.tm_isdst = -1;
    return static_cast<int64_t>(std::mktime(&tm));
  }

  // Fills what was left out as Slurm does: a date alone means its 00:00; a time
  // alone the next such moment; a date without a year the next such day.
  int64_t resolve() const {
    TimeOfDay time = time_.value_or(TimeOfDay{});
    if (!date_) {
      std::tm today = local_tm(now_);
      Date date{today.tm_year, today.tm_mon, today.tm_mday};
      int64_t candidate = local_seconds(date, time);
      if (candidate > now_) return candidate;
      ++date.day;  // mktime normalises the month end
      return local_seconds(date, time);
    }
    Date date = *date_;
    if (date.year) return local_seconds(date, time);
    date.year = local_tm(now_).tm_year;
    int64_t candidate = local_seconds(date, time);
    if (candidate > now_) return candidate;
    ++*date.year;
    return local_seconds(date, time);
  }

  std::string text_;
  int64_t now_;
  size_t pos_ = 0;
  std::optional<Date> date_;
  std::optional<TimeOfDay> time_;
};

}  // namespace

std::optional<uint32_t> parse_time_limit(std::string_view text) {
  if (text == "-1" || iequals(text, "unlimited") || iequals(text, "infinite")) return kUnlimited;
  static constexpr uint64_t kMinutesSeconds[] = {kMinute, 1};
  static constexpr uint64_t kHoursMinutesSeconds[] = {kHour, kMinute, 1};
  static constexpr uint64_t kDaysHoursMinutesSeconds[] = {kDay, kHour, kMinute, 1};

  std::vector<std::string_view> fields;
  const uint64_t* units = nullptr;
  size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    fields = split(text.substr(dash + 1), ':');
    fields.insert(fields.begin(), text.substr(0, dash));
    units = kDaysHoursMinutesSeconds;
  } else {
    fields = split(text, ':');
    units = fields.size() == 3 ? kHoursMinutesSeconds : kMinutesSeconds;
  }
  if (fields.size() > (dash != std::string_view::npos ? 4u : 3u)) return std::nullopt;
  auto total = sum_fields(fields, units);
  if (!total || *total >= kUnlimited) return std::nullopt;
  return static_cast<uint32_t>(*total);
}

std::string format_elapsed_compact(uint64_t seconds) {
  auto [d, h, m, s] = split_seconds(seconds);
  if (d > 0 || h > 0) return clock_text(d, h, m, s, 1);
  std::string text;  // "m:ss"
  append_digits(text, m, 1);
  text += ':';
  append_digits(text, s, 2);
  return text;
}

std::string format_hms(uint64_t seconds) {
  auto [d, h, m, s] = split_seconds(seconds);
  return clock_text(d, h, m, s, 2);
}

std::string format_time_limit(uint32_t seconds) {
  return seconds == kUnlimited ? "UNLIMITED" : format_elapsed_compact(seconds);
}

std::string format_time_limit_hms(uint32_t seconds) {
  return seconds == kUnlimited ? "UNLIMITED" : format_hms(seconds);
}

std::string format_timestamp_or(int64_t unix_seconds, std::string_view if_zero) {
  if (unix_seconds == 0) return std::string(if_zero);
  std::tm tm = local_tm(unix_seconds);
  std::array<char, 32> buffer{};
  std::strftime(buffer.data(), buffer.size(), "%Y-%m-%dT%H:%M:%S", &tm);
  return buffer.data();
}

std::string format_timestamp(int64_t unix_seconds) { return format_timestamp_or(unix_seconds, "Unknown"); }

std::optional<int64_t> parse_begin_time(std::string_view text, int64_t now_unix) {
  // Found by fuzz_sbatch: --begin=now+20000000weeks.
  auto parsed = BeginTimeParser(text, now_unix).parse();
  if (parsed && (*parsed > kLatestUnixSecond || *parsed < -kLatestUnixSecond)) return std::nullopt;
  return parsed;
}

}  // namespace cairn
