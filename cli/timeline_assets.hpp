// The timeline page's stylesheet and script (cli/timeline/), compiled in so that a
// page needs nothing but itself: no network, no files beside it.
#pragma once

#include <string_view>

namespace cairn {

std::string_view timeline_css();
std::string_view timeline_js();

}  // namespace cairn
