// Slurm hostlist expressions: "n[01-10,15]", "a,b,c", "rack[1-2]n[1-2]".
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

class HostlistError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Names separated by commas or whitespace; each bracket group ("[1-3,7]") is
// expanded in place, several groups giving their cartesian product in order.
// A range keeps the width of its low bound ("[08-10]" gives 08 09 10).
// Duplicates are kept, as Slurm does. An expression gives at most max_names names (64K by
// default: Slurm's MAX_RANGE, which Slurm applies to one range). Throws HostlistError on
// malformed input and past max_names.
inline constexpr std::size_t kMaxHostlistNames = 64 * 1024;
std::vector<std::string> expand_hostlist(std::string_view expression, std::size_t max_names = kMaxHostlistNames);

// Slurm's compact form: names sharing a prefix before their trailing number
// are merged into one bracket group, numbers sorted and duplicates dropped;
// groups appear in the order of their first name. {n1,n2,n3,n5} gives "n[1-3,5]".
// What an expression expanded to compresses to an expression that expands again.
std::string compress_hostlist(const std::vector<std::string>& names);

}  // namespace cairn
