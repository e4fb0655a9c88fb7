// cgroup v2 device confinement: cgroup v2 has no devices controller, so a cgroup's device
// access is decided by a BPF_PROG_TYPE_CGROUP_DEVICE program attached to it (as runc's
// devicefilter and systemd's bpf-devices generate them). Cairn's program denies the listed
// devices (read, write, mknod) and allows every other; it is made of raw instructions, loaded
// with the bpf() syscall and attached with BPF_F_ALLOW_MULTI, so that programs already on the
// cgroup's ancestors (systemd's) still apply. No library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cairn {

// A device as the kernel's bpf_cgroup_dev_ctx names it: 'c' or 'b', major, minor.
struct DeviceId {
  char type = 'c';
  uint32_t major = 0;
  uint32_t minor = 0;
  bool operator==(const DeviceId&) const = default;
};

// The device a file is; nothing for a file that is no device (or does not exist).
std::optional<DeviceId> device_id_of(const std::string& path);

// One eBPF instruction (struct bpf_insn: opcode, dst and src registers, offset, immediate).
struct BpfInstruction {
  uint8_t code = 0;
  uint8_t registers = 0;  // dst in the low 4 bits, src in the high 4
  int16_t offset = 0;
  int32_t immediate = 0;
  bool operator==(const BpfInstruction&) const = default;
};

// The program: 0 (deny) for an access to one of `denied`, else 1 (allow).
std::vector<BpfInstruction> device_deny_program(const std::vector<DeviceId>& denied);

// Loads device_deny_program(denied) and attaches it to the cgroup v2 directory `cgroup_dir`.
// Throws std::runtime_error naming the step that failed (and the verifier's words).
void attach_device_deny(const std::string& cgroup_dir, const std::vector<DeviceId>& denied);

}  // namespace cairn
