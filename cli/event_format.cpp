#include "cli/event_format.hpp"

#include <capnp/compat/json.h>
#include <capnp/dynamic.h>
#include <fmt/format.h>

#include <ctime>
#include <iterator>

#include "common/size_parse.hpp"
#include "events/event_codec.hpp"

namespace cairn {
namespace {

bool needs_quotes(std::string_view text) {
  if (text.empty()) return true;
  for (char c : text)
    if (c == ' ' || c == '"' || c == '=' || c == '\n' || c == '\t' || c == '\\') return true;
  return false;
}

std::string quoted(std::string_view text) {
  if (!needs_quotes(text)) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// Fields that are long or private are shown by size only.
bool summarised(std::string_view field) { return field == "script" || field == "environment"; }

std::string render(capnp::DynamicValue::Reader value);

std::string render_struct(capnp::DynamicStruct::Reader record, bool nested) {
  std::string out;
  for (auto field : record.getSchema().getFields()) {
    if (!record.has(field, capnp::HasMode::NON_DEFAULT)) continue;
    std::string name = field.getProto().getName();
    if (!nested && name == "jobId") continue;  // already in the line's key
    std::string text;
    auto raw = record.get(field);
    bool empty = (raw.getType() == capnp::DynamicValue::TEXT && raw.as<capnp::Text>().size() == 0) ||
                 (raw.getType() == capnp::DynamicValue::LIST && raw.as<capnp::DynamicList>().size() == 0);
    if (empty) continue;
    if (summarised(name)) {
      auto value = record.get(field);
      text = value.getType() == capnp::DynamicValue::TEXT
                 ? fmt::format("<{} bytes>", value.as<capnp::Text>().size())
                 : fmt::format("<{} entries>", value.as<capnp::DynamicList>().size());
    } else {
      text = render(raw);
      if (text == "()") continue;  // a nested struct with nothing set
    }
    if (!out.empty()) out += nested ? "," : " ";
    out += name + "=" + text;
  }
  return nested ? "(" + out + ")" : out;
}

std::string render(capnp::DynamicValue::Reader value) {
  switch (value.getType()) {
    case capnp::DynamicValue::BOOL: return value.as<bool>() ? "true" : "false";
    case capnp::DynamicValue::INT: return std::to_string(value.as<int64_t>());
    case capnp::DynamicValue::UINT: return std::to_string(value.as<uint64_t>());
    case capnp::DynamicValue::FLOAT: return fmt::format("{}", value.as<double>());
    case capnp::DynamicValue::TEXT: return quoted(value.as<capnp::Text>().cStr());
    case capnp::DynamicValue::ENUM: {
      auto enumerant = value.as<capnp::DynamicEnum>().getEnumerant();
      KJ_IF_MAYBE(e, enumerant) { return e->getProto().getName(); }
      return std::to_string(value.as<capnp::DynamicEnum>().getRaw());
    }
    case capnp::DynamicValue::STRUCT: return render_struct(value.as<capnp::DynamicStruct>(), true);
    case capnp::DynamicValue::LIST: {
      std::string out;
      for (auto element : value.as<capnp::DynamicList>()) {
        if (!out.empty()) out += ",";
        out += render(element);
      }
      return "[" + out + "]";
    }
    default: return "?";
  }
}

}  // namespace

std::string format_utc_micros(int64_t time_us) {
  time_t seconds = static_cast<time_t>(time_us / 1'000'000);
  int64_t micros = time_us % 1'000'000;
  if (micros < 0) micros += 1'000'000, --seconds;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
}

std::string format_actor(schema::Actor::Reader actor) {
  std::string kind = "system";
  switch (actor.getKind()) {
    case schema::ActorKind::USER: kind = "user"; break;
    case schema::ActorKind::OPERATOR: kind = "operator"; break;
    case schema::ActorKind::AGENT: kind = "agent"; break;
    case schema::ActorKind::SYSTEM: kind = "system"; break;
  }
  std::string name = actor.getUserName();
  return fmt::format("{}({})/{}", name.empty() ? "?" : name, actor.getUid(), kind);
}

std::string format_details(schema::Event::Reader event) {
  auto body = event.getBody();
  if (!is_known_kind(body.which())) return "";
  capnp::DynamicStruct::Reader dynamic_body = body;
  KJ_IF_MAYBE(field, dynamic_body.which()) {
    auto value = dynamic_body.get(*field);
    if (value.getType() == capnp::DynamicValue::STRUCT) return render_struct(value.as<capnp::DynamicStruct>(), false);
  }
  return "";
}

namespace {

// One decimal in the largest unit reached: "300.0M", "1.5G", "512B".
std::string rounded_size(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"K", "M", "G", "T"};
  if (bytes < 1024) return fmt::format("{}B", bytes);
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) value /= 1024, ++unit;
  return fmt::format("{:.1f}{}", value, kUnits[unit]);
}

}  // namespace

std::string format_audit_details(schema::Event::Reader event) {
  auto body = event.getBody();
  if (body.which() != schema::Event::Body::OOM_DETECTED) return format_details(event);
  auto oom = body.getOomDetected();
  return fmt::format("out of memory on node={} peak={} limit={} oom_kills={}", oom.getNode().cStr(),
                     oom.getPeakBytes() > 0 ? rounded_size(oom.getPeakBytes()) : "unknown",
                     oom.getLimitBytes() > 0 ? format_size(oom.getLimitBytes()) : "none", oom.getOomKillCount());
}

std::string format_event_line(uint64_t offset, schema::Event::Reader event) {
  auto header = event.getHeader();
  std::string line = fmt::format("@{} {} {}", offset, format_utc_micros(header.getTimeUs()),
                                 kind_name(event.getBody().which()));
  if (header.getJobId() != 0) line += fmt::format(" job={}", header.getJobId());
  if (header.getNodeName().size() > 0) line += " node=" + quoted(header.getNodeName().cStr());
  line += " actor=" + format_actor(header.getActor());
  if (header.getCommandId().size() > 0) line += " cmd=" + quoted(header.getCommandId().cStr());
  auto details = format_details(event);
  if (!details.empty()) line += " " + details;
  return line;
}

std::string format_event_json(uint64_t offset, schema::Event::Reader event) {
  capnp::JsonCodec codec;
  auto json = codec.encode(event);
  return fmt::format("{{\"offset\":{},\"kind\":\"{}\",\"event\":{}}}", offset, kind_name(event.getBody().which()),
                     json.cStr());
}

}  // namespace cairn
