#include "common/size_parse.hpp"

#include <limits>

#include "common/string_util.hpp"

namespace cairn {
namespace {

constexpr char kUnitLetters[] = "KMGTP";  // successive powers of 1024

uint64_t unit_multiplier(size_t letter_index) {
  uint64_t multiplier = 1;
  for (size_t i = 0; i <= letter_index; ++i) multiplier *= kKiB;
  return multiplier;
}

// Bytes per unit for a suffix ("", "B", "K", "KB", "KiB", ...), or nullopt.
std::optional<uint64_t> suffix_multiplier(std::string_view suffix, uint64_t default_unit) {
  if (suffix.empty()) return default_unit;
  if (iequals(suffix, "B")) return 1;
  std::string_view letters(kUnitLetters);
  size_t index = letters.find(to_upper(suffix[0]));
  if (index == std::string_view::npos) return std::nullopt;
  std::string_view rest = suffix.substr(1);
  if (!rest.empty() && !iequals(rest, "B") && !iequals(rest, "iB")) return std::nullopt;
  return unit_multiplier(index);
}

bool multiply(uint64_t a, uint64_t b, uint64_t& out) {
  if (b != 0 && a > std::numeric_limits<uint64_t>::max() / b) return false;
  out = a * b;
  return true;
}

// "<digits>[.<digits>]<suffix>" in bytes, a bare number counting default_unit.
std::optional<uint64_t> parse_scaled(std::string_view text, uint64_t default_unit) {
  size_t number_end = 0;
  while (number_end < text.size() && (is_digit(text[number_end]) || text[number_end] == '.')) ++number_end;
  std::string_view number = text.substr(0, number_end);
  auto multiplier = suffix_multiplier(text.substr(number_end), default_unit);
  size_t dot = number.find('.');
  auto whole = parse_unsigned<uint64_t>(number.substr(0, dot));
  if (!multiplier || !whole) return std::nullopt;

  uint64_t bytes = 0;
  if (!multiply(*whole, *multiplier, bytes)) return std::nullopt;
  if (dot == std::string_view::npos) return bytes;

  // The fraction exactly: ceil(fraction_digits * multiplier / 10^count).
  std::string_view fraction_text = number.substr(dot + 1);
  auto fraction = parse_unsigned<uint64_t>(fraction_text);
  if (!fraction || fraction_text.size() > 18) return std::nullopt;
  uint64_t scale = 1;
  for (size_t i = 0; i < fraction_text.size(); ++i) scale *= 10;
  uint64_t scaled = 0;
  if (!multiply(*fraction, *multiplier, scaled)) return std::nullopt;
  uint64_t fraction_bytes = scaled / scale + (scaled % scale != 0 ? 1 : 0);
  if (bytes > std::numeric_limits<uint64_t>::max() - fraction_bytes) return std::nullopt;
  return bytes + fraction_bytes;
}

}  // namespace

std::optional<uint64_t> parse_size_bytes(std::string_view text) { return parse_scaled(text, 1); }

std::optional<uint64_t> parse_mem_mb(std::string_view text) {
  auto bytes = parse_scaled(text, kMiB);
  if (!bytes) return std::nullopt;
  return *bytes / kMiB + (*bytes % kMiB != 0 ? 1 : 0);
}

std::string format_size(uint64_t bytes) {
  if (bytes == 0) return "0";
  for (size_t index = sizeof(kUnitLetters) - 1; index-- > 0;) {
    uint64_t multiplier = unit_multiplier(index);
    if (bytes % multiplier == 0) return std::to_string(bytes / multiplier) + kUnitLetters[index];
  }
  return std::to_string(bytes);
}

}  // namespace cairn
