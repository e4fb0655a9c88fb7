// `cairn log dump|audit|stats|verify`: reading the event log directly, read-only.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace cairn {

int run_log_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace cairn
