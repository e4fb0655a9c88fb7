// common/small_file.hpp: the one reader of small files (cgroup, /proc, endpoint, spool and
// configuration files), and how it tells a missing file from one it could not read.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/small_file.hpp"
#include "common/unique_fd.hpp"
#include "test/unit/log_backends.hpp"

using namespace cairn;

namespace {

std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

std::string read_with_ifstream(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("small files: read whole, past one buffer, and empty") {
  test::TempDir dir;
  std::string large(10'000, 'x');
  large[4095] = 'a';
  large[9999] = 'z';
  auto file = read_small_file(write_file(dir.path / "large", large));
  CHECK(file.ok());
  CHECK(file.text == large);
  auto empty = read_small_file(write_file(dir.path / "empty", ""));
  CHECK(empty.ok());
  CHECK(empty.text.empty());
}

TEST_CASE("small files: /proc's short reads are not its end") {
  // mountinfo comes a line or a page at a time; its whole text is what an ifstream reads.
  // mountinfo and status may change between two reads (other tests mount, this process runs):
  // compared only when an ifstream's reads before and after agree.
  for (const char* path : {"/proc/self/mountinfo", "/proc/self/cgroup", "/proc/self/status"}) {
    CAPTURE(path);
    bool compared = false;
    for (int attempt = 0; attempt < 20 && !compared; ++attempt) {
      auto before = read_with_ifstream(path);
      auto file = read_small_file(path);
      if (before != read_with_ifstream(path)) continue;
      CHECK(file.ok());
      CHECK(file.text == before);
      compared = true;
    }
    CHECK(compared);
  }
}

TEST_CASE("small files: a missing file is not a failed read") {
  test::TempDir dir;
  auto missing = read_small_file((dir.path / "absent").string());
  CHECK_FALSE(missing.ok());
  CHECK(missing.missing());
  CHECK(missing.open_error == ENOENT);

  auto directory = read_small_file(dir.path.string());  // opens, then read(2) fails
  CHECK_FALSE(directory.ok());
  CHECK_FALSE(directory.missing());
  CHECK(directory.open_error == 0);
  CHECK(directory.read_error == EISDIR);

  std::filesystem::create_symlink(write_file(dir.path / "target", "t"), dir.path / "link");
  auto followed = read_small_file((dir.path / "link").string());
  CHECK(followed.text == "t");
  auto refused = read_small_file((dir.path / "link").string(), O_NOFOLLOW);
  CHECK_FALSE(refused.ok());
  CHECK_FALSE(refused.missing());
  CHECK(refused.open_error == ELOOP);
}

TEST_CASE("small files: an open descriptor is read from its start, its offset kept") {
  test::TempDir dir;
  UniqueFd fd(::open(write_file(dir.path / "record", "holder 42\nsecond\n").c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd);
  REQUIRE(::lseek(fd.get(), 3, SEEK_SET) == 3);
  auto file = read_small_fd(fd.get());
  CHECK(file.ok());
  CHECK(file.text == "holder 42\nsecond\n");
  CHECK(::lseek(fd.get(), 0, SEEK_CUR) == 3);
  CHECK(first_line(file.text) == "holder 42");
  CHECK(first_line("no newline") == "no newline");
  CHECK(first_line("").empty());
}
