#include "common/signal_names.hpp"

#include <csignal>
#include <utility>

#include "common/string_util.hpp"

namespace cairn {
namespace {

constexpr std::pair<std::string_view, int> kSignals[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},     {"QUIT", SIGQUIT},   {"ILL", SIGILL},     {"TRAP", SIGTRAP},
    {"ABRT", SIGABRT},     {"BUS", SIGBUS},     {"FPE", SIGFPE},     {"KILL", SIGKILL},   {"USR1", SIGUSR1},
    {"SEGV", SIGSEGV},     {"USR2", SIGUSR2},   {"PIPE", SIGPIPE},   {"ALRM", SIGALRM},   {"TERM", SIGTERM},
    {"CHLD", SIGCHLD},     {"CONT", SIGCONT},   {"STOP", SIGSTOP},   {"TSTP", SIGTSTP},   {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU},     {"URG", SIGURG},     {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ},   {"VTALRM", SIGVTALRM},
    {"PROF", SIGPROF},     {"WINCH", SIGWINCH}, {"IO", SIGIO},       {"SYS", SIGSYS},
};

constexpr uint32_t kMaxSignalTime = 65535;  // Slurm keeps sig_time in 16 bits

}  // namespace

std::optional<int> parse_signal(std::string_view text) {
  text = trim(text);
  if (auto number = parse_unsigned<unsigned>(text)) {
    if (*number < 1 || *number > static_cast<unsigned>(SIGRTMAX)) return std::nullopt;
    return static_cast<int>(*number);
  }
  if (istarts_with(text, "SIG")) text.remove_prefix(3);
  for (const auto& [name, number] : kSignals)
    if (iequals(text, name)) return number;
  return std::nullopt;
}

std::string signal_name(int signal) {
  for (const auto& [name, number] : kSignals)
    if (number == signal) return std::string(name);
  return std::to_string(signal);
}

std::optional<SignalSpecText> parse_signal_spec(std::string_view text) {
  SignalSpecText spec;
  if (istarts_with(text, "B:")) {
    spec.batch_only = true;
    text.remove_prefix(2);
  } else if (istarts_with(text, "R:")) {
    text.remove_prefix(2);
  }
  size_t at = text.find('@');
  auto signal = parse_signal(text.substr(0, at));
  if (!signal) return std::nullopt;
  spec.signal = *signal;
  if (at != std::string_view::npos) {
    auto seconds = parse_unsigned<uint32_t>(text.substr(at + 1));
    if (!seconds || *seconds > kMaxSignalTime) return std::nullopt;
    spec.seconds_before = *seconds;
  }
  return spec;
}

}  // namespace cairn
