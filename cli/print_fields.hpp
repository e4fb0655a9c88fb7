// Slurm's print_fields (sacct, sacctmgr): a value in a column of fixed width,
// right-justified for a positive width, left-justified for a negative one,
// followed by the blank Slurm prints after every column.
#pragma once

#include <cstdlib>
#include <string>

namespace cairn {

// What a value longer than its column becomes, as Slurm's print_fields_* do it.
enum class Overflow {
  plus,  // strings: cut, the last kept character replaced by '+'
  cut,   // dates and titles: cut
  keep,  // numbers and durations: shown whole, widening the line
};

inline std::string fixed_cell(std::string text, int width, Overflow overflow) {
  auto span = static_cast<size_t>(std::abs(width));
  if (text.size() > span && overflow != Overflow::keep) {
    text.resize(span);
    if (overflow == Overflow::plus && span > 0) text.back() = '+';
  }
  if (text.size() < span) {
    std::string padding(span - text.size(), ' ');
    text = width > 0 ? padding + text : text + padding;
  }
  return text + " ";
}

}  // namespace cairn
