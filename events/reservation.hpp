// Slurm reservations (scontrol create|update|delete reservation): the record the log keeps,
// its flags in Slurm's spelling, and the windows of repeating ones. Pure: every time is an
// argument (the event's or the controller's), never the clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// The flags Cairn keeps, in the order Slurm's reservation_flags_string() prints them.
enum ReservationFlag : uint32_t {
  kResvMaint = 1u << 0,
  kResvFlex = 1u << 1,
  kResvOverlap = 1u << 2,
  kResvIgnoreJobs = 1u << 3,
  kResvHourly = 1u << 4,
  kResvDaily = 1u << 5,
  kResvWeekly = 1u << 6,
  kResvSpecNodes = 1u << 7,  // Nodes= named them (set by the controller)
  kResvPartNodes = 1u << 8,  // every node of PartitionName=
};
// HOURLY, DAILY and WEEKLY: the reservation repeats.
inline constexpr uint32_t kResvRepeating = kResvHourly | kResvDaily | kResvWeekly;

struct Reservation {
  uint32_t id = 0;            // Slurm's resv_id: the order of creation (shown in that order)
  std::string name;
  int64_t start_us = 0;       // the first occurrence (repeating: later ones follow by the period)
  int64_t end_us = 0;
  std::vector<std::string> nodes;  // in the cluster's node order
  uint32_t cpus = 0;               // CoreCnt: the nodes' CPUs
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  std::string partition;
  uint32_t flags = 0;
  bool operator==(const Reservation&) const = default;
};

// One occurrence: [start_us, end_us).
struct ReservationWindow {
  int64_t start_us = 0;
  int64_t end_us = 0;
  bool operator==(const ReservationWindow&) const = default;
};

// The period of a repeating reservation in microseconds; 0: it does not repeat.
int64_t reservation_period_us(uint32_t flags);

// The occurrence in effect at now_us, or else the next one (a reservation that does not
// repeat has one, which may be over). This is what Slurm shows once it has moved a
// repeating reservation's times forward at the end of each occurrence.
ReservationWindow current_window(const Reservation& reservation, int64_t now_us);

// ACTIVE in Slurm's display: start <= now <= end of the current occurrence.
bool reservation_active(const Reservation& reservation, int64_t now_us);

// Whether an occurrence of the reservation at or after now_us overlaps [from_us, to_us).
bool reservation_overlaps(const Reservation& reservation, int64_t now_us, int64_t from_us, int64_t to_us);

// Whether two reservations would hold the same time, some occurrence of each (looked at
// from now_us over a horizon of eight weeks, beyond the longest period).
bool reservations_collide(const Reservation& a, const Reservation& b, int64_t now_us);

// Flags= as Slurm prints them: "MAINT,IGNORE_JOBS,SPEC_NODES"; "" for none.
std::string reservation_flags_text(uint32_t flags);

// Flags=MAINT,DAILY or Flags=-DAILY (update): the bits set and the bits cleared, or none
// when a word is not a flag Cairn keeps (Slurm: "Error parsing flags %s.  %s").
struct ReservationFlagChange {
  uint32_t set = 0;
  uint32_t clear = 0;
  bool operator==(const ReservationFlagChange&) const = default;
};
std::optional<ReservationFlagChange> parse_reservation_flags(std::string_view text);

// Is the user (or the job's account) let into the reservation? Users= or Accounts= lists it.
bool reservation_admits(const Reservation& reservation, std::string_view user, std::string_view account);

// Slurm's errors (slurm_errno.c).
inline constexpr const char* kReservationInvalid = "Requested reservation is invalid";
inline constexpr const char* kReservationAccess = "Access denied to requested reservation";
inline constexpr const char* kReservationOverlap = "Requested reservation overlaps with another reservation";
inline constexpr const char* kReservationNameDup = "Duplicate reservation name";
inline constexpr const char* kReservationEmpty = "Reservation request lacks users, groups or accounts";
inline constexpr const char* kReservationNodesBusy = "Requested nodes are busy";
inline constexpr const char* kReservationBadNode = "Invalid node name specified";
inline constexpr const char* kReservationBadTime = "Invalid time specified";
inline constexpr const char* kReservationBadPartition = "Invalid partition name specified";
inline constexpr const char* kReservationTooFewNodes = "Node count specification invalid";
inline constexpr const char* kReservationDenied = "Access/permission denied";

}  // namespace cairn
