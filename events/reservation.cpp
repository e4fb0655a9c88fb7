#include "events/reservation.hpp"

#include <algorithm>
#include <cctype>

namespace cairn {
namespace {

constexpr int64_t kHourUs = 3600LL * 1'000'000;
constexpr int64_t kHorizonUs = 8 * 7 * 24 * kHourUs;

// xstrncasecmp(word, name, MAX(len, min)) == 0: the name or, at least min long, a prefix.
bool flag_matches(std::string_view word, std::string_view name, size_t min_length) {
  size_t length = std::max(word.size(), min_length);
  if (length > name.size() || word.size() > name.size()) return false;
  if (word.size() < length) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(word[i])) != std::tolower(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

struct FlagName {
  uint32_t bit;
  const char* name;
  size_t min_length;  // parse_resv_flags()'s abbreviation
};
// Slurm's printing order (reservation_flags_string).
constexpr FlagName kFlags[] = {
    {kResvMaint, "MAINT", 3},          {kResvFlex, "FLEX", 1},          {kResvOverlap, "OVERLAP", 1},
    {kResvIgnoreJobs, "IGNORE_JOBS", 1}, {kResvHourly, "HOURLY", 1},    {kResvDaily, "DAILY", 1},
    {kResvWeekly, "WEEKLY", 1},        {kResvSpecNodes, "SPEC_NODES", 0}, {kResvPartNodes, "PART_NODES", 2},
};

}  // namespace

int64_t reservation_period_us(uint32_t flags) {
  if (flags & kResvHourly) return kHourUs;
  if (flags & kResvDaily) return 24 * kHourUs;
  if (flags & kResvWeekly) return 7 * 24 * kHourUs;
  return 0;
}

ReservationWindow current_window(const Reservation& reservation, int64_t now_us) {
  ReservationWindow window{reservation.start_us, reservation.end_us};
  int64_t period = reservation_period_us(reservation.flags);
  if (period == 0 || window.end_us > now_us) return window;
  int64_t skipped = (now_us - window.end_us) / period + 1;
  window.start_us += skipped * period;
  window.end_us += skipped * period;
  return window;
}

bool reservation_active(const Reservation& reservation, int64_t now_us) {
  ReservationWindow window = current_window(reservation, now_us);
  return window.start_us <= now_us && now_us < window.end_us;
}

bool reservation_overlaps(const Reservation& reservation, int64_t now_us, int64_t from_us, int64_t to_us) {
  ReservationWindow window = current_window(reservation, now_us);
  int64_t period = reservation_period_us(reservation.flags);
  for (;;) {
    if (window.start_us >= to_us) return false;
    if (window.end_us > from_us) return true;
    if (period == 0) return false;
    window.start_us += period;
    window.end_us += period;
  }
}

bool reservations_collide(const Reservation& a, const Reservation& b, int64_t now_us) {
  int64_t horizon = std::max(now_us, std::max(a.start_us, b.start_us)) + kHorizonUs;
  ReservationWindow window = current_window(a, now_us);
  int64_t period = reservation_period_us(a.flags);
  while (window.start_us < horizon) {
    if (reservation_overlaps(b, now_us, window.start_us, window.end_us)) return true;
    if (period == 0) break;
    window.start_us += period;
    window.end_us += period;
  }
  return false;
}

std::string reservation_flags_text(uint32_t flags) {
  std::string text;
  for (const auto& flag : kFlags) {
    if (!(flags & flag.bit)) continue;
    if (!text.empty()) text += ',';
    text += flag.name;
  }
  return text;
}

std::optional<ReservationFlagChange> parse_reservation_flags(std::string_view text) {
  ReservationFlagChange change;
  size_t at = 0;
  while (at < text.size()) {
    bool remove = false;
    if (text[at] == '+' || text[at] == '-') remove = text[at++] == '-';
    size_t end = text.find(',', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(at, end - at);
    const FlagName* found = nullptr;
    for (const auto& flag : kFlags)
      if (flag.bit != kResvSpecNodes && flag_matches(word, flag.name, flag.min_length)) {
        found = &flag;
        break;
      }
    // Slurm's abbreviations: "Maintenance" for MAINT, "Ignore_Jobs" spelt out.
    if (!found && flag_matches(word, "MAINTENANCE", 3)) found = &kFlags[0];
    if (!found || word.empty()) return std::nullopt;
    if (found->bit == kResvOverlap && remove) return std::nullopt;  // Slurm has no -OVERLAP
    (remove ? change.clear : change.set) |= found->bit;
    at = end + 1;
  }
  return change;
}

bool reservation_admits(const Reservation& reservation, std::string_view user, std::string_view account) {
  if (std::find(reservation.users.begin(), reservation.users.end(), user) != reservation.users.end()) return true;
  return !account.empty() &&
         std::find(reservation.accounts.begin(), reservation.accounts.end(), account) != reservation.accounts.end();
}

}  // namespace cairn
