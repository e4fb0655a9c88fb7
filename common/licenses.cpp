#include "common/licenses.hpp"

#include <algorithm>
#include <charconv>

namespace cairn {

std::optional<std::vector<LicenseCount>> parse_licenses(std::string_view text) {
  std::vector<LicenseCount> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of(",;", start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;  // strtok_r skips empty items
    if (item.find_first_of(" \t\n\r\f\v") != std::string_view::npos) return std::nullopt;
    size_t colon = item.find(':');
    std::string_view name = item.substr(0, colon);
    uint32_t count = 1;
    if (colon != std::string_view::npos) {
      std::string_view number = item.substr(colon + 1);
      auto [end_ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), count);
      if (number.empty() || ec != std::errc() || end_ptr != number.data() + number.size() || count > INT32_MAX)
        return std::nullopt;
    }
    if (name.empty()) return std::nullopt;
    auto same = std::find_if(out.begin(), out.end(), [&](const LicenseCount& l) { return l.name == name; });
    if (same == out.end()) {
      out.push_back({std::string(name), count});
    } else {
      uint64_t sum = uint64_t{same->count} + count;
      if (sum > INT32_MAX) return std::nullopt;
      same->count = static_cast<uint32_t>(sum);
    }
  }
  return out;
}

std::string license_text(const std::vector<LicenseCount>& licenses) {
  std::string out;
  for (const auto& license : licenses)
    out += (out.empty() ? "" : ",") + license.name + ":" + std::to_string(license.count);
  return out;
}

std::string license_request_error(std::string_view request, const LicenseTotals& totals) {
  auto parsed = parse_licenses(request);
  if (!parsed) return std::string(kInvalidLicenses);
  for (const auto& license : *parsed) {
    auto total = totals.find(license.name);
    if (total == totals.end() || license.count > total->second) return std::string(kInvalidLicenses);
  }
  return {};
}

std::vector<LicenseCount> requested_licenses(std::string_view request) {
  return parse_licenses(request).value_or(std::vector<LicenseCount>{});
}

}  // namespace cairn
