#include "protocol/auth_payload.hpp"

#include <map>
#include <stdexcept>

#include "common/string_util.hpp"

namespace cairn {
namespace {

constexpr std::string_view kMagic = "cairn-auth/1";

}  // namespace

std::string auth_payload(std::string_view cluster, std::string_view nonce, std::optional<ForwardedIdentity> forwarded) {
  std::string payload = std::string(kMagic) + " cluster=" + std::string(cluster) + " nonce=" + std::string(nonce);
  if (forwarded) payload += " forwarded=" + std::to_string(forwarded->uid) + ":" + std::to_string(forwarded->gid);
  return payload;
}

std::optional<ForwardedIdentity> auth_payload_forwarded(std::string_view payload) {
  constexpr std::string_view kField = "forwarded=";
  for (auto word : split(payload, ' ')) {
    if (!word.starts_with(kField)) continue;
    auto value = word.substr(kField.size());
    auto colon = value.find(':');
    auto uid = colon == std::string_view::npos ? std::nullopt : parse_unsigned<uint32_t>(value.substr(0, colon));
    auto gid = colon == std::string_view::npos ? std::nullopt : parse_unsigned<uint32_t>(value.substr(colon + 1));
    if (!uid || !gid) throw std::invalid_argument("the credential's forwarded identity is malformed");
    return ForwardedIdentity{*uid, *gid};
  }
  return std::nullopt;
}

std::optional<std::string> auth_payload_mismatch(std::string_view payload, std::string_view cluster,
                                                 std::string_view nonce) {
  auto words = split(payload, ' ');
  if (words.empty() || words.front() != kMagic) return "the credential is not a Cairn credential";
  std::map<std::string_view, std::string_view> fields;
  for (size_t i = 1; i < words.size(); ++i) {
    auto eq = words[i].find('=');
    if (eq == std::string_view::npos) return "the credential's payload is malformed";
    fields[words[i].substr(0, eq)] = words[i].substr(eq + 1);
  }
  auto got_cluster = fields.find("cluster");
  if (got_cluster == fields.end()) return "the credential names no cluster";
  if (got_cluster->second != cluster)
    return "the credential is for cluster '" + std::string(got_cluster->second) + "', not '" + std::string(cluster) + "'";
  auto got_nonce = fields.find("nonce");
  if (got_nonce == fields.end() || got_nonce->second != nonce || nonce.empty())
    return "the credential was made for another connection";
  return std::nullopt;
}

}  // namespace cairn
