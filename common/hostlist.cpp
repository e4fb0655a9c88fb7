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

namespace {

// Slurm's hostrange_t: prefix[lo-hi] at a zero-padded width, or one name without a number.
struct HostRange {
  std::string prefix;
  uint64_t lo = 0;
  uint64_t hi = 0;
  int width = 0;
  bool single = false;
};

int zero_padding(uint64_t number, int width) {
  int digits = 1;
  while (number /= 10) ++digits;
  return width > digits ? width - digits : 0;
}

// _width_equiv(): whether two widths print both numbers alike; adjusts one to the other if so.
bool widths_combine(HostRange& a, HostRange& b) {
  if (a.width == b.width) return true;
  int a_own = zero_padding(a.lo, a.width), a_other = zero_padding(a.lo, b.width);
  int b_own = zero_padding(b.lo, b.width), b_other = zero_padding(b.lo, a.width);
  if (a_own != a_other && b_own != b_other) return false;
  if (a_own != a_other)
    b.width = a.width;
  else
    a.width = b.width;
  return true;
}

// strnatcmp's order for prefixes: digit runs compare as numbers.
int natural_compare(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      size_t i_end = i, j_end = j;
      while (i_end < a.size() && is_digit(a[i_end])) ++i_end;
      while (j_end < b.size() && is_digit(b[j_end])) ++j_end;
      auto x = a.substr(i, i_end - i), y = b.substr(j, j_end - j);
      while (x.size() > 1 && x.front() == '0') x.remove_prefix(1);
      while (y.size() > 1 && y.front() == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
      if (int c = x.compare(y); c != 0) return c < 0 ? -1 : 1;
      i = i_end;
      j = j_end;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    ++i;
    ++j;
  }
  return (i < a.size()) - (j < b.size());
}

int prefix_compare(const HostRange& a, const HostRange& b) {
  int order = natural_compare(a.prefix, b.prefix);
  return order == 0 ? static_cast<int>(b.single) - static_cast<int>(a.single) : order;
}

bool same_bracket(const HostRange& a, const HostRange& b) { return prefix_compare(a, b) == 0 && !a.single && !b.single; }

// Slurm's hostlist_push_range(): a range that continues the last one extends it.
void push_range(std::vector<HostRange>& ranges, HostRange range) {
  if (!ranges.empty()) {
    HostRange& tail = ranges.back();
    if (!tail.single && !range.single && tail.hi + 1 == range.lo && prefix_compare(tail, range) == 0 &&
        widths_combine(tail, range)) {
      tail.hi = range.hi;
      return;
    }
  }
  ranges.push_back(std::move(range));
}

HostRange range_of(std::string_view name) {
  auto [prefix, digits] = split_trailing_number(name);
  if (digits.empty()) return {std::string(name), 0, 0, 0, true};
  uint64_t number = *parse_unsigned<uint64_t>(digits);
  return {std::string(prefix), number, number, static_cast<int>(digits.size()), false};
}

// hostlist_sort(): qsort by hostrange_cmp, then hostlist_coalesce() and hostlist_collapse().
void sort_ranges(std::vector<HostRange>& ranges) {
  std::stable_sort(ranges.begin(), ranges.end(), [](HostRange a, HostRange b) {
    int order = prefix_compare(a, b);
    if (order == 0) order = widths_combine(a, b) ? (a.lo < b.lo ? -1 : a.lo > b.lo) : a.width - b.width;
    return order < 0;
  });
  for (size_t i = ranges.size(); i-- > 1;) {
    HostRange& prev = ranges[i - 1];
    HostRange& next = ranges[i];
    if (prev.single || next.single || !(prev.hi > next.lo) || prefix_compare(prev, next) != 0 ||
        !widths_combine(prev, next))
      continue;
    HostRange common = prev;  // hostrange_intersect()
    common.lo = next.lo;
    common.hi = std::min(next.hi, prev.hi);
    if (common.hi < prev.hi) next.hi = prev.hi;
    prev.hi = common.lo;
    next.lo = common.hi;
    size_t at = i;
    for (uint64_t n = common.lo; n <= common.hi; ++n) {
      HostRange one = common;
      one.lo = one.hi = n;
      if (n > ranges[i - 1].hi) ranges.insert(ranges.begin() + static_cast<long>(at++), one);
      if (n < ranges[at].lo) ranges.insert(ranges.begin() + static_cast<long>(at++), one);
    }
    i = ranges.size();
  }
  for (size_t i = ranges.size(); i-- > 1;) {
    HostRange& prev = ranges[i - 1];
    HostRange& next = ranges[i];
    if (!prev.single && !next.single && prev.hi + 1 == next.lo && prefix_compare(prev, next) == 0 &&
        widths_combine(prev, next)) {
      prev.hi = next.hi;
      ranges.erase(ranges.begin() + static_cast<long>(i));
    }
  }
}

std::string number_text(uint64_t number, int width) {
  std::string digits = std::to_string(number);
  return std::string(static_cast<size_t>(std::max(0, width - static_cast<int>(digits.size()))), '0') + digits;
}

}  // namespace

std::string slurm_ranged_hostlist(const std::vector<std::string>& names, bool sorted) {
  std::vector<HostRange> ranges;
  for (const auto& name : names) push_range(ranges, range_of(name));
  if (sorted) sort_ranges(ranges);
  std::string text;
  for (size_t i = 0; i < ranges.size();) {
    if (!text.empty()) text += ',';
    text += ranges[i].prefix;
    if (ranges[i].single) {
      ++i;
      continue;
    }
    bool brackets = ranges[i].hi > ranges[i].lo || (i + 1 < ranges.size() && same_bracket(ranges[i], ranges[i + 1]));
    if (brackets) text += '[';
    size_t first = i;
    do {
      if (i > first) text += ',';
      text += number_text(ranges[i].lo, ranges[i].width);
      if (ranges[i].hi > ranges[i].lo) text += '-' + number_text(ranges[i].hi, ranges[i].width);
    } while (++i < ranges.size() && same_bracket(ranges[i], ranges[i - 1]));
    if (brackets) text += ']';
  }
  return text;
}

}  // namespace cairn
