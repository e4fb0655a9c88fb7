// Slurm's --constraint expressions over node features (Feature= on NodeName=
// lines): names joined by '&' (and; ',' too) and '|' (or), '&' binding tighter,
// with '(...)' and '[...]' grouping (a matching OR "[a|b]" is read as a plain OR).
// Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// Whether the expression is well formed: names of letters, digits, '_', '-', '.', ':'.
bool valid_feature_expression(std::string_view expression);

// Whether a node with these features satisfies the expression. An empty
// expression is satisfied by every node; a malformed one by none.
bool features_satisfy(std::string_view expression, const std::vector<std::string>& features);

}  // namespace cairn
