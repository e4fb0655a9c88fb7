// cgroup v2 device confinement (issue #23): the BPF device program's instructions, and, where
// the kernel lets a test attach one to a cgroup v2 directory (root, a cgroup2 mount: the unified
// one of a hybrid v1 machine will do), a shell in that cgroup opens two of four fake devices
// and is denied the two the program names.
#include <doctest/doctest.h>

#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "agents/device_bpf.hpp"
#include "test/unit/skip.hpp"

extern char** environ;

using namespace cairn;

namespace {

// The first cgroup2 mount point in /proc/self/mountinfo ("" when none).
std::string cgroup2_mount() {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line);
    std::string id, parent, numbers, root, mount;
    fields >> id >> parent >> numbers >> root >> mount;
    return mount;
  }
  return {};
}

}  // namespace

TEST_CASE("device bpf: the program denies the listed devices and allows the others") {
  auto program = device_deny_program({{'c', 195, 3}, {'b', 8, 0}});
  REQUIRE(program.size() == 4 + 2 * 5 + 2);
  CHECK(program[0] == BpfInstruction{0x61, 0x12, 0, 0});      // r2 = *(u32 *)(r1 + 0)
  CHECK(program[1] == BpfInstruction{0x54, 0x02, 0, 0xFFFF});  // w2 &= 0xffff: the type
  CHECK(program[2] == BpfInstruction{0x61, 0x14, 4, 0});      // r4 = major
  CHECK(program[3] == BpfInstruction{0x61, 0x15, 8, 0});      // r5 = minor
  CHECK(program[4] == BpfInstruction{0x55, 0x02, 4, 2});      // a character device? else the next block
  CHECK(program[5] == BpfInstruction{0x55, 0x04, 3, 195});
  CHECK(program[6] == BpfInstruction{0x55, 0x05, 2, 3});
  CHECK(program[7] == BpfInstruction{0xb4, 0x00, 0, 0});      // deny
  CHECK(program[8] == BpfInstruction{0x95, 0x00, 0, 0});
  CHECK(program[9] == BpfInstruction{0x55, 0x02, 4, 1});      // a block device
  CHECK(program[12] == BpfInstruction{0xb4, 0x00, 0, 0});
  CHECK(program[14] == BpfInstruction{0xb4, 0x00, 0, 1});     // anything else: allowed
  CHECK(program[15] == BpfInstruction{0x95, 0x00, 0, 0});
  CHECK(device_id_of("/dev/null") == DeviceId{'c', 1, 3});
  CHECK_FALSE(device_id_of("/etc/hostname"));
}

TEST_CASE("device bpf: a job's cgroup confined to two of four devices cannot open the other two") {
  namespace fs = std::filesystem;
  if (::geteuid() != 0) CAIRN_SKIP("attaching a BPF device program needs root");
  std::string mount = cgroup2_mount();
  if (mount.empty()) CAIRN_SKIP("no cgroup2 hierarchy is mounted");
  fs::path work = fs::temp_directory_path() / ("cairn-bpf-test-" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work);
  // Four readable character devices of distinct numbers (null, zero, full, urandom).
  const unsigned minors[] = {3, 5, 7, 9};
  std::vector<std::string> devices;
  for (int i = 0; i < 4; ++i) {
    std::string path = (work / ("gpu" + std::to_string(i))).string();
    if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minors[i])) != 0) {
      fs::remove_all(work);
      CAIRN_SKIP("mknod of a character device is refused here");
    }
    devices.push_back(path);
  }
  fs::path cgroup = fs::path(mount) / ("cairn-bpf-test-" + std::to_string(::getpid()));
  std::error_code error;
  fs::create_directory(cgroup, error);
  if (error) {
    fs::remove_all(work);
    CAIRN_SKIP("cannot create a cgroup in " + mount + ": " + error.message());
  }
  try {
    attach_device_deny(cgroup.string(), {*device_id_of(devices[2]), *device_id_of(devices[3])});
  } catch (const std::exception& e) {
    ::rmdir(cgroup.c_str());
    fs::remove_all(work);
    // The kernel itself refuses (no CONFIG_CGROUP_BPF, a lockdown): a skip even under CI.
    MESSAGE("SKIP: this kernel does not attach a BPF device program to " << mount << ": " << e.what());
    return;
  }
  std::string out = (work / "out").string();
  std::string script = "echo $$ > " + (cgroup / "cgroup.procs").string() + " && for d in";
  for (const auto& device : devices) script += " " + device;
  script += "; do if head -c1 $d >/dev/null 2>&1; then echo \"$d open\"; else echo \"$d denied\"; fi; done > " + out;
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  pid_t pid = 0;
  REQUIRE(::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(argv), environ) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  std::ifstream in(out);
  std::stringstream seen;
  seen << in.rdbuf();
  CHECK(seen.str() == devices[0] + " open\n" + devices[1] + " open\n" + devices[2] + " denied\n" + devices[3] + " denied\n");
  ::rmdir(cgroup.c_str());
  fs::remove_all(work);
}
