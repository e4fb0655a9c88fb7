// sacct --json: Slurm 22.05's answer (sacct's dump_data() through openapi/dbv0.0.38 and
// serializer/json): {"meta", "errors", "jobs"} with each job's fields in the parser's
// order, printed as json-c prints with JSON_C_TO_STRING_PRETTY | SPACED (two-space
// indent, "key": value, '/' escaped as "\/", no newline at the end). Fields Cairn knows
// nothing of get what slurmdbd gives a job without them (0, null, empty lists).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/slurm_views.hpp"
#include "events/job_model.hpp"

namespace cairn {

// The names of user and group ids (nullopt: unknown, printed null); the system's by default.
struct IdNames {
  std::function<std::optional<std::string>(uint32_t uid)> user;
  std::function<std::optional<std::string>(uint32_t gid)> group;
};
IdNames system_id_names();

std::string render_sacct_json(const std::vector<const JobRecord*>& jobs, const FormatContext& context,
                              const IdNames& names = system_id_names());
// sacct --yaml: the same answer through 22.05's serializer/yaml (libyaml, explicit tags).
std::string render_sacct_yaml(const std::vector<const JobRecord*>& jobs, const FormatContext& context,
                              const IdNames& names = system_id_names());

}  // namespace cairn
