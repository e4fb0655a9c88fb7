#include "agents/device_bpf.hpp"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "common/unique_fd.hpp"

namespace cairn {
namespace {

// Registers: r1 the context (struct bpf_cgroup_dev_ctx), r0 the verdict; r2-r5 ours.
constexpr uint8_t kR0 = 0, kR1 = 1, kType = 2, kMajor = 4, kMinor = 5;

BpfInstruction load_word(uint8_t dst, uint8_t src, int16_t offset) {
  return {BPF_LDX | BPF_MEM | BPF_W, static_cast<uint8_t>(dst | (src << 4)), offset, 0};
}
BpfInstruction and_immediate(uint8_t dst, int32_t value) { return {BPF_ALU | BPF_AND | BPF_K, dst, 0, value}; }
BpfInstruction jump_if_not(uint8_t dst, int32_t value, int16_t skip) { return {BPF_JMP | BPF_JNE | BPF_K, dst, skip, value}; }
BpfInstruction move_immediate(uint8_t dst, int32_t value) { return {BPF_ALU | BPF_MOV | BPF_K, dst, 0, value}; }
BpfInstruction exit_program() { return {BPF_JMP | BPF_EXIT, 0, 0, 0}; }

long bpf(int command, union bpf_attr& attr) { return ::syscall(__NR_bpf, command, &attr, sizeof(attr)); }

std::string errno_text(int error) { return std::system_category().message(error); }

}  // namespace

std::optional<DeviceId> device_id_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  if (!S_ISCHR(info.st_mode) && !S_ISBLK(info.st_mode)) return std::nullopt;
  return DeviceId{S_ISCHR(info.st_mode) ? 'c' : 'b', major(info.st_rdev), minor(info.st_rdev)};
}

std::vector<BpfInstruction> device_deny_program(const std::vector<DeviceId>& denied) {
  std::vector<BpfInstruction> program = {
      load_word(kType, kR1, 0),  // access_type: (access << 16) | type
      and_immediate(kType, 0xFFFF),
      load_word(kMajor, kR1, 4),
      load_word(kMinor, kR1, 8),
  };
  for (const auto& device : denied) {  // a match: 0; else on to the next block
    program.push_back(jump_if_not(kType, device.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, 4));
    program.push_back(jump_if_not(kMajor, static_cast<int32_t>(device.major), 3));
    program.push_back(jump_if_not(kMinor, static_cast<int32_t>(device.minor), 2));
    program.push_back(move_immediate(kR0, 0));
    program.push_back(exit_program());
  }
  program.push_back(move_immediate(kR0, 1));
  program.push_back(exit_program());
  return program;
}

void attach_device_deny(const std::string& cgroup_dir, const std::vector<DeviceId>& denied) {
  auto program = device_deny_program(denied);
  std::vector<bpf_insn> instructions(program.size());
  for (size_t i = 0; i < program.size(); ++i) {
    instructions[i].code = program[i].code;
    instructions[i].dst_reg = program[i].registers & 0x0F;
    instructions[i].src_reg = program[i].registers >> 4;
    instructions[i].off = program[i].offset;
    instructions[i].imm = program[i].immediate;
  }
  static const char kLicense[] = "Apache";
  std::string verifier_log(4096, '\0');
  union bpf_attr load {};
  load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  load.insns = reinterpret_cast<uint64_t>(instructions.data());
  load.insn_cnt = static_cast<uint32_t>(instructions.size());
  load.license = reinterpret_cast<uint64_t>(kLicense);
  load.log_buf = reinterpret_cast<uint64_t>(verifier_log.data());
  load.log_size = static_cast<uint32_t>(verifier_log.size());
  load.log_level = 1;
  UniqueFd program_fd(static_cast<int>(bpf(BPF_PROG_LOAD, load)));
  if (!program_fd) {
    int error = errno;
    verifier_log.resize(std::strlen(verifier_log.c_str()));
    throw std::runtime_error(fmt::format("cannot load the device BPF program: {}{}", errno_text(error),
                                         verifier_log.empty() ? "" : " (verifier: " + verifier_log + ")"));
  }
  UniqueFd cgroup(::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cgroup) throw std::runtime_error(fmt::format("cannot open {}: {}", cgroup_dir, errno_text(errno)));
  union bpf_attr attach {};
  attach.target_fd = static_cast<uint32_t>(cgroup.get());
  attach.attach_bpf_fd = static_cast<uint32_t>(program_fd.get());
  attach.attach_type = BPF_CGROUP_DEVICE;
  attach.attach_flags = BPF_F_ALLOW_MULTI;
  if (bpf(BPF_PROG_ATTACH, attach) != 0)
    throw std::runtime_error(
        fmt::format("cannot attach the device BPF program to {}: {}", cgroup_dir, errno_text(errno)));
  // The attachment holds the program: closing our descriptor leaves it in force with the cgroup.
}

}  // namespace cairn
