#include "protocol/auth_payload.hpp"

#include <map>
#include <stdexcept>

#include "common/string_util.hpp"

namespace cairn {
namespace {

constexpr std::string_view kMagic = "cairn-auth/1";

}  // namespace

std::string format_forwarded_identity(ForwardedIdentity identity) {
  return std::to_string(identity.uid) + ":" + std::to_string(identity.gid);
}

std::optional<ForwardedIdentity> parse_forwarded_identity(std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto uid = parse_unsigned<uint32_t>(text.substr(0, colon));
  auto gid = parse_unsigned<uint32_t>(text.substr(colon + 1));
  if (!uid || !gid) return std::nullopt;
  return ForwardedIdentity{*uid, *gid};
}

std::string auth_payload(std::string_view cluster, std::string_view nonce, std::optional<ForwardedIdentity> forwarded) {
  std::string payload = std::string(kMagic) + " cluster=" + std::string(cluster) + " nonce=" + std::string(nonce);
  if (forwarded) payload += " forwarded=" + format_forwarded_identity(*forwarded);
  return payload;
}

std::optional<ForwardedIdentity> auth_payload_forwarded(std::string_view payload) {
  constexpr std::string_view kField = "forwarded=";
  for (auto word : split(payload, ' ')) {
    if (!word.starts_with(kField)) continue;
    auto identity = parse_forwarded_identity(word.substr(kField.size()));
    if (!identity) throw std::invalid_argument("the credential's forwarded identity is malformed");
    return identity;
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
