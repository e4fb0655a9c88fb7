// Signal names and numbers as scancel/sbatch take them, and sbatch --signal specs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cairn {

// "TERM", "SIGTERM", "sigterm", "15" (surrounding blanks ignored, as Slurm does).
// nullopt for unknown names and numbers outside 1..SIGRTMAX.
std::optional<int> parse_signal(std::string_view text);

// "TERM" for SIGTERM; the number as text for signals without a name.
std::string signal_name(int signal);

// sbatch --signal=[{R|B}:]<sig_num>[@sig_time].
struct SignalSpecText {
  int signal = 0;
  uint32_t seconds_before = 60;  // Slurm's default sig_time
  bool batch_only = false;       // "B:": only the batch shell is signalled
};

// "R:" (reservation overlap) is accepted and has no effect here. sig_time is
// 0..65535, as Slurm's. nullopt on anything malformed.
std::optional<SignalSpecText> parse_signal_spec(std::string_view text);

}  // namespace cairn
