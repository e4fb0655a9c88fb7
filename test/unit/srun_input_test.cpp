// srun's -i/--input (cli/srun_input.hpp): which task gets what, the buffer kept for the
// slowest task, and no blocking on a source with nothing to read yet.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "cli/srun_input.hpp"

using namespace cairn;
using Kind = SrunInputSpec::Kind;

TEST_CASE("parse_srun_input: Slurm's fname_create() cases") {
  CHECK(parse_srun_input(std::nullopt).kind == Kind::all);
  CHECK(parse_srun_input("all").kind == Kind::all);
  CHECK(parse_srun_input("ALL").kind == Kind::all);
  CHECK(parse_srun_input("-").kind == Kind::all);
  CHECK(parse_srun_input("none").kind == Kind::none);
  auto one = parse_srun_input("1");
  CHECK(one.kind == Kind::one);
  CHECK(one.task == 1);
  auto file = parse_srun_input("in.txt");
  CHECK(file.kind == Kind::file);
  CHECK(file.name == "in.txt");
  CHECK(parse_srun_input("in.%t").kind == Kind::per_task);
  CHECK(parse_srun_input("in.%%t").kind == Kind::file);  // an escaped percent sign
  CHECK(expand_input_pattern("in.%t.%j.%s.%J.%u.%%.%x", 3, {12, 1, "alice"}) == "in.3.12.1.12.1.alice.%.%x");
}

namespace {
struct Pipe {
  Pipe() { REQUIRE(::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0); }
  ~Pipe() {
    if (fds[1] >= 0) ::close(fds[1]);
  }
  void write(const std::string& text) { REQUIRE(::write(fds[1], text.data(), text.size()) == ssize_t(text.size())); }
  void close_write() {
    ::close(fds[1]);
    fds[1] = -1;
  }
  int fds[2];
};
}  // namespace

TEST_CASE("SrunInput all: every task gets every byte; not ready while the pipe is empty; EOF after") {
  Pipe pipe;
  SrunInput input(parse_srun_input("all"), UniqueFd(pipe.fds[0]));
  CHECK_FALSE(input.read(0, 100, nullptr).ready);  // nothing yet: never blocks
  pipe.write("hello\n");
  auto first = input.read(0, 3, nullptr);
  CHECK(first.ready);
  CHECK(first.data == "hel");
  CHECK(input.read(0, 100, nullptr).data == "lo\n");
  input.set_step(2, {5, 0, "u"});
  CHECK(input.read(1, 100, nullptr).data == "hello\n");  // kept for the task that had not asked yet
  pipe.close_write();
  auto end0 = input.read(0, 100, nullptr);
  CHECK(end0.ready);
  CHECK(end0.data.empty());
  CHECK(end0.eof);
  CHECK(input.read(1, 100, nullptr).eof);
}

TEST_CASE("SrunInput one task, none, and a task that gets nothing") {
  Pipe pipe;
  pipe.write("x");
  pipe.close_write();
  SrunInput one(parse_srun_input("1"), UniqueFd(pipe.fds[0]));
  auto other = one.read(0, 10, nullptr);
  CHECK(other.eof);
  CHECK(other.data.empty());
  CHECK(one.read(1, 10, nullptr).data == "x");
  CHECK(one.read(1, 10, nullptr).eof);
  SrunInput none(parse_srun_input("none"), UniqueFd());
  CHECK(none.read(0, 10, nullptr).eof);
  SrunInput no_stdin(parse_srun_input(std::nullopt), UniqueFd());  // srun started without a stdin
  CHECK(no_stdin.read(0, 10, nullptr).eof);
}

TEST_CASE("SrunInput per task: each task its own file, an error line for a missing one") {
  char dir_template[] = "/tmp/cairn-srun-input-XXXXXX";
  std::string dir = ::mkdtemp(dir_template);
  std::ofstream(dir + "/in.0") << "zero";
  SrunInput input(parse_srun_input(dir + "/in.%t"), UniqueFd());
  input.set_step(2, {7, 0, "u"});
  std::string error;
  CHECK(input.read(0, 100, &error).data == "zero");
  CHECK(input.read(0, 100, &error).eof);
  CHECK(error.empty());
  CHECK(input.read(1, 100, &error).eof);
  CHECK(error == "srun: error: Could not open stdin file " + dir + "/in.1: No such file or directory");
  std::remove((dir + "/in.0").c_str());
  ::rmdir(dir.c_str());
}
