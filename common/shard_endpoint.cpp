#include "common/shard_endpoint.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include "common/small_file.hpp"

namespace cairn {

std::string shard_endpoint_path(const ClusterConfig& config, uint32_t shard) {
  if (config.event_log.starts_with("file:")) return fmt::format("{}/p{}/ENDPOINT", config.event_log.substr(5), shard);
  return fmt::format("{}/shard-endpoints/p{}", config.state_save_location, shard);
}

std::string shard_group_member_path(const ClusterConfig& config, uint32_t shard) {
  return shard_endpoint_path(config, shard) + ".group";
}

std::string shard_readers_dir(const ClusterConfig& config) {
  if (config.event_log.starts_with("file:")) return config.event_log.substr(5) + "/readers";
  return config.state_save_location + "/shard-readers";
}

bool is_local_socket(const std::string& endpoint) {
  if (!endpoint.starts_with("unix:")) return false;
  struct stat st {};
  return ::stat(endpoint.c_str() + 5, &st) == 0 && S_ISSOCK(st.st_mode);
}

std::string local_socket_in(const std::string& endpoint_file) {
  if (endpoint_file.empty()) return {};
  std::string endpoint = read_first_line(endpoint_file);
  return is_local_socket(endpoint) ? endpoint : std::string();
}

std::string network_address(const std::string& endpoint) {
  return endpoint.starts_with("tcp:") ? endpoint.substr(4) : endpoint;
}

}  // namespace cairn
