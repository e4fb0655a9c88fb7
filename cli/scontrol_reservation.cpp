#include "cli/scontrol_reservation.hpp"

#include <algorithm>
#include <ctime>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/scontrol_grammar.hpp"
#include "common/hostlist.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

constexpr int64_t kMicros = 1'000'000;

UpdateRefusal error_line(const std::string& text) { return {"scontrol: error: " + text + "\n"}; }

std::string joined(const std::vector<std::string>& items) {
  if (items.empty()) return "(null)";
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ",") + item;
  return text;
}

std::string or_null(const std::string& text) { return text.empty() ? "(null)" : text; }

// _parse_res_options(): each word's key, Slurm's abbreviations, its texts. `msg` ends each error.
std::variant<ReservationRequest, UpdateRefusal> parse_words(const std::vector<std::string>& words, const char* msg,
                                                            int64_t now_unix) {
  ReservationRequest request;
  const std::string tail = std::string("  ") + msg;
  for (const auto& word : words) {
    size_t equals = word.find('=');
    if (equals == std::string::npos) {
      if (slurm_keyword_matches(word.substr(0, std::min<size_t>(word.size(), 3)), "res", 3)) continue;
      return error_line("Misformatted parameter '" + word + "', most options have a parameter after '='." + tail);
    }
    std::string tag = word.substr(0, equals);
    std::string value = word.substr(equals + 1);
    char plus_minus = 0;
    if (!tag.empty() && (tag.back() == '+' || tag.back() == '-')) {
      plus_minus = tag.back();
      tag.pop_back();
    }
    auto is = [&](const char* key, size_t min) { return slurm_keyword_matches(tag, key, min); };
    auto twice = [&]() { return error_line("Parameter " + word + " specified more than once"); };
    auto unsupported = [&]() { return error_line(tag + "= is not supported by Cairn." + tail); };
    if (is("Accounts", 1)) {
      if (request.accounts) return twice();
      if (plus_minus) return unsupported();
      request.accounts = value;
    } else if (is("Flags", 2)) {
      std::string text = value;
      if (plus_minus) {  // Flags+=A,B: +A,+B; Flags-=A,B: -A,-B
        text.clear();
        for (auto piece : split(value, ',')) text += (text.empty() ? "" : ",") + std::string(1, plus_minus) + std::string(piece);
        plus_minus = 0;
      }
      auto flags = parse_reservation_flags(text);
      if (!flags) return error_line("Error parsing flags " + text + "." + tail);
      request.flags.set |= flags->set;
      request.flags.clear |= flags->clear;
    } else if (is("Users", 1)) {
      if (request.users) return twice();
      if (plus_minus) return unsupported();
      request.users = value;
    } else if (is("ReservationName", 1)) {
      request.name = value;
    } else if (is("StartTime", 2)) {
      auto time = parse_begin_time(value, now_unix);
      if (!time) return error_line("Invalid start time " + word + "." + tail);
      request.start_us = *time * kMicros;
    } else if (is("EndTime", 1)) {
      auto time = parse_begin_time(value, now_unix);
      if (!time) return error_line("Invalid end time " + word + "." + tail);
      request.end_us = *time * kMicros;
    } else if (is("Duration", 1)) {
      if (plus_minus) return unsupported();
      auto seconds = parse_time_limit(value);
      if (!seconds) return error_line("Invalid duration " + word + "." + tail);
      request.duration_sec = *seconds;
    } else if (is("NodeCnt", 5) || is("NodeCount", 5)) {
      auto count = parse_unsigned<uint32_t>(value);
      if (!count) return error_line("Invalid node count " + value);
      request.node_cnt = *count;
    } else if (is("Nodes", 5)) {
      request.nodes = value;
    } else if (is("PartitionName", 1)) {
      request.partition = value;
    } else if (is("BurstBuffer", 2) || is("MaxStartDelay", 2) || is("CoreCnt", 5) || is("CoreCount", 5) ||
               is("CPUCnt", 5) || is("CPUCount", 5) || is("Features", 2) || is("Licenses", 2) || is("Groups", 1) ||
               is("TRES", 1) || is("Watts", 1)) {
      return unsupported();
    } else if (slurm_keyword_matches(tag.substr(0, std::min<size_t>(tag.size(), 3)), "res", 3)) {
      continue;
    } else {
      return error_line("Unknown parameter " + word + "." + tail);
    }
    if (plus_minus)
      return error_line("The +=/-= notation is not supported when updating " + tag + "." + tail);
  }
  return request;
}

// 16 characters wide as Slurm's "%-Ns  %8s  %19s  %19s  %11s  %s".
std::string padded(const std::string& text, size_t width, bool right) {
  if (text.size() >= width) return text;
  std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

bool shown_active(const ReservationWindow& window, int64_t now_us) {
  return window.start_us <= now_us && now_us <= window.end_us;  // Slurm's test, end included
}

}  // namespace

std::variant<ReservationRequest, UpdateRefusal> parse_create_reservation(const std::vector<std::string>& words,
                                                                         int64_t now_unix) {
  auto parsed = parse_words(words, "No reservation created.", now_unix);
  if (std::holds_alternative<UpdateRefusal>(parsed)) return parsed;
  auto& request = std::get<ReservationRequest>(parsed);
  // scontrol_create_res()'s checks, in its order.
  if (!request.start_us) return error_line("A start time must be given.  No reservation created.");
  if (!request.end_us && !request.duration_sec)
    return error_line("An end time or duration must be given.  No reservation created.");
  if (request.end_us && request.duration_sec && *request.duration_sec != kUnlimited &&
      *request.start_us + static_cast<int64_t>(*request.duration_sec) * kMicros != *request.end_us)
    return error_line("StartTime + Duration does not equal EndTime.  No reservation created.");
  if (request.end_us && *request.start_us > *request.end_us)
    return error_line("Start time cannot be after end time.  No reservation created.");
  if (request.partition && request.nodes && iequals(*request.nodes, "ALL")) request.flags.set |= kResvPartNodes;
  if ((request.flags.set & kResvPartNodes) && (!request.partition || !request.nodes || !iequals(*request.nodes, "ALL")))
    return error_line(
        "PART_NODES flag requires specifying a Partition and ALL nodes.  No reservation created.");
  bool no_nodes = (!request.nodes || request.nodes->empty()) && !request.node_cnt;
  if (no_nodes) {
    if (!request.partition)
      return error_line(
          "CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified.  No reservation created.");
    request.flags.set |= kResvPartNodes;
    request.nodes = "ALL";
  }
  if ((!request.users || request.users->empty()) && (!request.accounts || request.accounts->empty()))
    return error_line("Either Users/Groups and/or Accounts must be specified.  No reservation created.");
  return parsed;
}

std::variant<ReservationRequest, UpdateRefusal> parse_update_reservation(const std::vector<std::string>& words,
                                                                         int64_t now_unix) {
  auto parsed = parse_words(words, "No reservation update.", now_unix);
  if (std::holds_alternative<UpdateRefusal>(parsed)) return parsed;
  if (std::get<ReservationRequest>(parsed).name.empty())
    return error_line("Reservation must be given.  No reservation update.");
  return parsed;
}

bool update_names_reservation(const std::vector<std::string>& words) {
  bool reservation = false;
  for (size_t i = 0; i < words.size(); ++i) {
    size_t equals = words[i].find('=');
    std::string tag = words[i].substr(0, equals);
    if (equals == std::string::npos) ++i;
    if (slurm_keyword_matches(tag, "JobId", 3) || slurm_keyword_matches(tag, "JobNAME", 3) ||
        slurm_keyword_matches(tag, "StepId", 4))
      return false;
    if (slurm_keyword_matches(tag, "ReservationName", 3)) reservation = true;
  }
  return reservation;
}

std::string render_scontrol_show_reservation(const Reservation& reservation, int64_t now_us, bool one_liner) {
  const std::string line_end = one_liner ? " " : "\n   ";
  ReservationWindow window = current_window(reservation, now_us);
  int64_t start = window.start_us / kMicros, end = window.end_us / kMicros;
  std::string out = "ReservationName=" + reservation.name + " StartTime=" + format_timestamp(start) +
                    " EndTime=" + format_timestamp(end) +
                    " Duration=" + (end >= start ? format_hms(static_cast<uint64_t>(end - start)) : "N/A") + line_end;
  out += "Nodes=" + (reservation.nodes.empty() ? std::string("(null)") : compress_hostlist(reservation.nodes)) +
         " NodeCnt=" + std::to_string(reservation.nodes.size()) + " CoreCnt=" + std::to_string(reservation.cpus) +
         " Features=(null) PartitionName=" + or_null(reservation.partition) +
         " Flags=" + reservation_flags_text(reservation.flags) + line_end;
  out += "TRES=" + (reservation.cpus ? "cpu=" + std::to_string(reservation.cpus) : std::string("(null)")) + line_end;
  out += "Users=" + joined(reservation.users) + " Groups=(null) Accounts=" + joined(reservation.accounts) +
         " Licenses=(null) State=" + (shown_active(window, now_us) ? "ACTIVE" : "INACTIVE") +
         " BurstBuffer=(null) Watts=n/a" + line_end;
  out += "MaxStartDelay=(null)";
  out += one_liner ? "\n" : "\n\n";
  return out;
}

std::string render_sinfo_reservations(const std::vector<Reservation>& reservations, int64_t now_us, bool no_header) {
  if (reservations.empty()) return "No reservations in the system\n";
  size_t width = 9;
  for (const auto& reservation : reservations) width = std::max(width, reservation.name.size());
  auto row = [&](const std::string& name, const std::string& state, const std::string& start, const std::string& end,
                 const std::string& duration, const std::string& nodes) {
    return padded(name, width, false) + "  " + padded(state, 8, true) + "  " + padded(start, 19, true) + "  " +
           padded(end, 19, true) + "  " + padded(duration, 11, true) + "  " + nodes + "\n";
  };
  std::string out;
  if (!no_header) out += row("RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST");
  for (const auto& reservation : reservations) {
    ReservationWindow window = current_window(reservation, now_us);
    int64_t start = window.start_us / kMicros, end = window.end_us / kMicros;
    out += row(reservation.name, shown_active(window, now_us) ? "ACTIVE" : "INACTIVE", format_timestamp(start),
               format_timestamp(end), format_hms(static_cast<uint64_t>(std::max<int64_t>(0, end - start))),
               compress_hostlist(reservation.nodes));
  }
  return out;
}

int run_scontrol_create_reservation(const ClusterConfig& config, const std::vector<std::string>& words,
                                    std::ostream& out, std::ostream& err) {
  auto parsed = parse_create_reservation(words, static_cast<int64_t>(std::time(nullptr)));
  if (const auto* refused = std::get_if<UpdateRefusal>(&parsed)) {
    err << refused->text;
    return 1;
  }
  ControllerClient client(config);
  try {
    std::string name = client.write_reservation(std::get<ReservationRequest>(parsed), false);
    out << "Reservation created: " << name << "\n";
  } catch (const std::exception& error) {
    std::string message = remote_message(error);
    err << "Error creating the reservation: " << message << "\n";
    if (message == kReservationNodesBusy)
      out << "Note, unless nodes are directly requested a reservation must exist in a single partition.\n"
             "If no partition is requested the default partition is assumed.\n";
    return 1;
  }
  return 0;
}

int run_scontrol_update_reservation(const ClusterConfig& config, const std::vector<std::string>& words,
                                    std::ostream& out, std::ostream& err) {
  auto parsed = parse_update_reservation(words, static_cast<int64_t>(std::time(nullptr)));
  if (const auto* refused = std::get_if<UpdateRefusal>(&parsed)) {
    err << refused->text;
    return 1;
  }
  ControllerClient client(config);
  try {
    client.write_reservation(std::get<ReservationRequest>(parsed), true);
    out << "Reservation updated.\n";
  } catch (const std::exception& error) {
    // scontrol_update_res()'s perror, then _update_it()'s.
    std::string message = remote_message(error);
    err << "Error updating the reservation: " << message << "\nslurm_update error: " << message << "\n";
    return 1;
  }
  return 0;
}

int run_scontrol_delete_reservation(const ClusterConfig& config, const std::string& name, const std::string& first_word,
                                    std::ostream& err) {
  ControllerClient client(config);
  try {
    client.delete_reservation(name);
  } catch (const std::exception& error) {
    // Slurm's errmsg is "delete_reservation <first word>", cut at 63 characters.
    err << ("delete_reservation " + first_word).substr(0, 63) << ": " << remote_message(error) << "\n";
    return 1;
  }
  return 0;
}

int show_reservations(ClusterQueries& cluster, const std::vector<std::string>& names, bool one_liner,
                      std::ostream& out) {
  NodesAnswer answer = cluster.nodes();
  if (names.empty()) {
    if (answer.reservations.empty()) {
      out << "No reservations in the system\n";
      return 0;
    }
    for (const auto& reservation : answer.reservations)
      out << render_scontrol_show_reservation(reservation, answer.now_us, one_liner);
    return 0;
  }
  for (const auto& reservation : answer.reservations) {
    if (reservation.name != names.front()) continue;
    out << render_scontrol_show_reservation(reservation, answer.now_us, one_liner);
    return 0;
  }
  out << "Reservation " << names.front() << " not found\n";
  return 1;
}

}  // namespace cairn
