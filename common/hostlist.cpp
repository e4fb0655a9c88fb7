#include "common/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "common/string_util.hpp"

namespace cairn {
namespace {

// Longer digit runs would overflow uint64_t; such names are treated as plain words.
constexpr size_t kMaxDigits = 18;

[[noreturn]] void fail(std::string_view expression, const std::string& what) {
  throw HostlistError("invalid hostlist \"" + std::string(expression) + "\": " + what);
}

std::string zero_padded(uint64_t value, size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// The names one bracket group stands for, e.g. "01-03,7" gives {01,02,03,7}.
std::vector<std::string> expand_ranges(std::string_view expression, std::string_view ranges, uint64_t max_names) {
  if (ranges.empty()) fail(expression, "empty brackets");
  std::vector<std::string> numbers;
  for (std::string_view range : split(ranges, ',')) {
    size_t dash = range.find('-');
    std::string_view lo_text = range.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    auto lo = lo_text.size() <= kMaxDigits ? parse_unsigned<uint64_t>(lo_text) : std::nullopt;
    auto hi = hi_text.size() <= kMaxDigits ? parse_unsigned<uint64_t>(hi_text) : std::nullopt;
    if (!lo || !hi) fail(expression, "'" + std::string(range) + "' is not a number or a range of numbers");
    if (*lo > *hi) fail(expression, "range '" + std::string(range) + "' is descending");
    if (*hi - *lo >= max_names) fail(expression, "range '" + std::string(range) + "' has too many hosts");
    if (numbers.size() + (*hi - *lo) >= max_names) fail(expression, "too many hosts");
    for (uint64_t n = *lo; n <= *hi; ++n) numbers.push_back(zero_padded(n, lo_text.size()));
  }
  return numbers;
}

// One comma-free item, e.g. "rack[1-2]n[1-2]-ib": literal text and bracket groups.
void expand_item(std::string_view expression, std::string_view item, std::vector<std::string>& out,
                 uint64_t max_names) {
  std::vector<std::string> names{""};
  size_t pos = 0;
  while (pos < item.size()) {
    size_t open = item.find('[', pos);
    std::string_view literal = item.substr(pos, open == std::string_view::npos ? std::string_view::npos : open - pos);
    for (auto& name : names) name += literal;
    if (open == std::string_view::npos) break;
    size_t close = item.find(']', open);
    if (close == std::string_view::npos) fail(expression, "missing ']'");
    auto numbers = expand_ranges(expression, item.substr(open + 1, close - open - 1), max_names);
    if (names.size() * numbers.size() > max_names - out.size()) fail(expression, "too many hosts");
    std::vector<std::string> product;
    product.reserve(names.size() * numbers.size());
    for (const auto& name : names)
      for (const auto& number : numbers) product.push_back(name + number);
    names = std::move(product);
    pos = close + 1;
  }
  out.insert(out.end(), names.begin(), names.end());
}

// A name split before its trailing number: "rack1n07" is ("rack1n", "07").
struct NumberedName {
  std::string_view prefix;
  std::string_view digits;  // empty: the name has no usable trailing number
};

NumberedName split_trailing_number(std::string_view name) {
  size_t start = name.size();
  while (start > 0 && is_digit(name[start - 1])) --start;
  size_t count = name.size() - start;
  if (count == 0 || count > kMaxDigits) return {name, {}};
  return {name.substr(0, start), name.substr(start)};
}

// The numbers of one prefix as Slurm writes them inside brackets: "1-3,5,010".
std::string ranges_text(std::vector<std::string_view> digits) {
  auto value = [](std::string_view d) { return *parse_unsigned<uint64_t>(d); };
  std::sort(digits.begin(), digits.end(), [&](std::string_view a, std::string_view b) {
    return std::pair(value(a), a.size()) < std::pair(value(b), b.size());
  });
  digits.erase(std::unique(digits.begin(), digits.end()), digits.end());

  std::string text;
  size_t i = 0;
  while (i < digits.size()) {
    // A range keeps the width of its first number; the next number joins it if
    // it is consecutive and written with that same padding.
    size_t last = i;
    while (last + 1 < digits.size() && value(digits[last + 1]) == value(digits[last]) + 1 &&
           zero_padded(value(digits[last + 1]), digits[i].size()) == digits[last + 1])
      ++last;
    if (!text.empty()) text += ',';
    text += digits[i];
    if (last > i) text += "-" + std::string(digits[last]);
    i = last + 1;
  }
  return text;
}

}  // namespace

// A bigger expression is almost certainly a typo, and a few bytes of text must not expand to
// gigabytes.
std::vector<std::string> expand_hostlist(std::string_view expression, std::size_t max_names) {
  std::vector<std::string> names;
  size_t item_start = 0;
  bool in_brackets = false;
  for (size_t pos = 0; pos <= expression.size(); ++pos) {
    bool at_end = pos == expression.size();
    char c = at_end ? ',' : expression[pos];
    if (c == '[') {
      if (in_brackets) fail(expression, "nested '['");
      in_brackets = true;
    } else if (c == ']') {
      if (!in_brackets) fail(expression, "']' without '['");
      in_brackets = false;
    } else if ((c == ',' || is_space(c)) && (!in_brackets || at_end)) {
      if (in_brackets) fail(expression, "missing ']'");
      if (pos > item_start) expand_item(expression, expression.substr(item_start, pos - item_start), names, max_names);
      if (names.size() > max_names) fail(expression, "too many hosts");
      item_start = pos + 1;
    } else if (in_brackets && is_space(c)) {
      fail(expression, "space inside brackets");
    }
  }
  return names;
}

std::string compress_hostlist(const std::vector<std::string>& names) {
  // Groups in order of first appearance; names without a number stand alone.
  struct Group {
    std::string_view prefix;
    bool numbered = false;
    std::vector<std::string_view> digits;
  };
  std::vector<Group> groups;
  std::map<std::pair<std::string_view, bool>, size_t> group_index;
  for (const auto& name : names) {
    auto [prefix, digits] = split_trailing_number(name);
    bool numbered = !digits.empty();
    auto [it, inserted] = group_index.try_emplace({prefix, numbered}, groups.size());
    if (inserted) groups.push_back({prefix, numbered, {}});
    if (numbered) groups[it->second].digits.push_back(digits);
  }

  std::string text;
  for (const auto& group : groups) {
    if (!text.empty()) text += ',';
    text += group.prefix;
    if (!group.numbered) continue;
    std::string ranges = ranges_text(group.digits);
    bool single = ranges.find_first_of(",-") == std::string::npos;
    text += single ? ranges : "[" + ranges + "]";
  }
  return text;
}

}  // namespace cairn
