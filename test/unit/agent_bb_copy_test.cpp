// The stager's file work on a real temporary directory: stage paths, copying
// files and trees, cancel, failures with clear messages, whole stage orders.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agents/bb_copy.hpp"

using namespace cairn;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "cairn-bbcopy-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

std::string read(const std::string& path) {
  std::ifstream file(path);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

std::string stage_error(auto&& body) {
  try {
    body();
  } catch (const StageError& error) {
    return error.what();
  }
  return "no error";
}

const std::atomic<bool> kNotCancelled{false};

}  // namespace

TEST_CASE("bb_copy: stage paths stay inside the buffer; outside ones start at the work dir") {
  CHECK(buffer_path("$BB_JOB_DIR/in", "/bb/job_1") == "/bb/job_1/in");
  CHECK(buffer_path("${DW_JOB_STRIPED}/a/b", "/bb/job_1") == "/bb/job_1/a/b");
  CHECK(buffer_path("$BB_JOB_DIR", "/bb/job_1") == "/bb/job_1");
  CHECK(buffer_path("relative/x", "/bb/job_1") == "/bb/job_1/relative/x");
  CHECK(buffer_path("/bb/job_1/x/", "/bb/job_1") == "/bb/job_1/x");
  CHECK(stage_error([] { buffer_path("/etc/passwd", "/bb/job_1"); }) ==
        "/etc/passwd is outside the job's burst buffer (use $BB_JOB_DIR/... or a relative path)");
  CHECK(stage_error([] { buffer_path("$BB_JOB_DIR/../job_2", "/bb/job_1"); }) != "no error");
  CHECK(stage_error([] { buffer_path("$BB_JOB_DIRX", "/bb/job_1"); }) == "no error");  // a plain relative name
  CHECK(outside_path("/data/in", "/home/a") == "/data/in");
  CHECK(outside_path("in/x", "/home/a") == "/home/a/in/x");
}

TEST_CASE("bb_copy: files and trees are copied like cp -r, links as links") {
  TempDir tmp;
  write(tmp / "src/a.txt", "alpha");
  write(tmp / "src/sub/b.txt", "beta!");
  fs::create_symlink("a.txt", tmp / "src/link");
  ::chmod((tmp / "src/a.txt").c_str(), 0640);

  auto totals = copy_tree(tmp / "src", tmp / "dst/tree", kNotCancelled);
  CHECK(totals.bytes == 10);
  CHECK(totals.files == 2);
  CHECK(read(tmp / "dst/tree/a.txt") == "alpha");
  CHECK(read(tmp / "dst/tree/sub/b.txt") == "beta!");
  CHECK(fs::is_symlink(tmp / "dst/tree/link"));
  CHECK(fs::read_symlink(tmp / "dst/tree/link") == "a.txt");
  struct stat st {};
  ::stat((tmp / "dst/tree/a.txt").c_str(), &st);
  CHECK((st.st_mode & 0777) == 0640);

  // A file onto an existing directory goes into it; onto a new name it takes that name.
  copy_tree(tmp / "src/a.txt", tmp / "dst", kNotCancelled);
  CHECK(read(tmp / "dst/a.txt") == "alpha");
  copy_tree(tmp / "src/a.txt", tmp / "dst/renamed/x.txt", kNotCancelled);
  CHECK(read(tmp / "dst/renamed/x.txt") == "alpha");
  // Copying again replaces what is there.
  write(tmp / "src/a.txt", "changed");
  copy_tree(tmp / "src", tmp / "dst/tree", kNotCancelled);
  CHECK(read(tmp / "dst/tree/a.txt") == "changed");

  // A large file is copied whole (several chunks would be the same loop).
  std::string big(3 << 20, 'x');
  write(tmp / "big", big);
  CHECK(copy_tree(tmp / "big", tmp / "big.copy", kNotCancelled).bytes == big.size());
  CHECK(read(tmp / "big.copy") == big);
}

TEST_CASE("bb_copy: failures say what and where; cancel stops the copy") {
  TempDir tmp;
  CHECK(stage_error([&] { copy_tree(tmp / "missing", tmp / "dst", kNotCancelled); }) ==
        "cannot stage " + (tmp / "missing") + ": No such file or directory");
  write(tmp / "src/a", "a");
  std::atomic<bool> cancelled{true};
  CHECK(stage_error([&] { copy_tree(tmp / "src", tmp / "dst", cancelled); }) == "cancelled");
  remove_tree(tmp / "dst");
  remove_tree(tmp / "dst");  // already gone: fine
  CHECK(!fs::exists(tmp / "dst"));
}

TEST_CASE("bb_copy: a stage-in creates the directory and fills it; stage-out copies results back") {
  TempDir tmp;
  write(tmp / "work/input.dat", "input");
  write(tmp / "work/set/one", "1");
  StageOrder in{7, false, tmp / "pool/job_7", {{"input.dat", "$BB_JOB_DIR/input.dat"}, {"set", "set"}}, 0, 0,
                tmp / "work"};
  auto outcome = run_stage(in, kNotCancelled);
  CHECK_MESSAGE(outcome.ok, outcome.message);
  CHECK(outcome.bytes == 6);
  CHECK(read(tmp / "pool/job_7/input.dat") == "input");
  CHECK(read(tmp / "pool/job_7/set/one") == "1");

  write(tmp / "pool/job_7/out/result", "42");
  StageOrder out{7, true, tmp / "pool/job_7", {{"$BB_JOB_DIR/out", "results"}}, 0, 0, tmp / "work"};
  outcome = run_stage(out, kNotCancelled);
  CHECK_MESSAGE(outcome.ok, outcome.message);
  CHECK(outcome.bytes == 2);
  CHECK(read(tmp / "work/results/result") == "42");

  StageOrder missing{8, false, tmp / "pool/job_8", {{"nope", "x"}}, 0, 0, tmp / "work"};
  outcome = run_stage(missing, kNotCancelled);
  CHECK(!outcome.ok);
  CHECK(outcome.message == "cannot stage " + (tmp / "work/nope") + ": No such file or directory");
  StageOrder escape{9, false, tmp / "pool/job_9", {{"input.dat", "/etc/x"}}, 0, 0, tmp / "work"};
  outcome = run_stage(escape, kNotCancelled);
  CHECK(!outcome.ok);
  CHECK(outcome.message.find("outside the job's burst buffer") != std::string::npos);
}
