// Licenses: cluster-wide counts (Licenses= in the configuration) that jobs take
// with -L/--licenses while they run, as Slurm's local licenses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// ESLURM_INVALID_LICENSES.
inline constexpr std::string_view kInvalidLicenses = "Invalid license specification";

struct LicenseCount {
  std::string name;
  uint32_t count = 0;
  bool operator==(const LicenseCount&) const = default;
};

// Slurm's _build_license_list: "name[:count]" items separated by ',' or ';', count 1 when
// absent, a name repeated adds up; no blank anywhere. nullopt: invalid. Empty text: none.
std::optional<std::vector<LicenseCount>> parse_licenses(std::string_view text);

// "name:count,..." in the given order: what a job records and scontrol shows.
std::string license_text(const std::vector<LicenseCount>& licenses);

using LicenseTotals = std::map<std::string, uint32_t>;

// Why a job's request can never be met by the cluster's totals (unknown name, more
// than configured, bad text): kInvalidLicenses; empty when it can.
std::string license_request_error(std::string_view request, const LicenseTotals& totals);

// The licenses a job record asks for, nothing when its text no longer parses.
std::vector<LicenseCount> requested_licenses(std::string_view request);

}  // namespace cairn
