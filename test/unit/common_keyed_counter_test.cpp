// Counters of "key value" texts (cgroup files, /proc/PID/io), as the agent and the supervisor read them.
#include <doctest/doctest.h>

#include "common/keyed_counter.hpp"

using cairn::keyed_counter;

TEST_CASE("keyed_counter: oom_kill in memory.oom_control and memory.events, never confused with oom") {
  CHECK(keyed_counter("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill") == 3u);
  CHECK(keyed_counter("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n", "oom_kill") == 1u);
  CHECK(keyed_counter("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\n", "oom") == 2u);
  CHECK_FALSE(keyed_counter("oom_kill_disable 0\nunder_oom 0\n", "oom_kill"));  // kernels before 4.13
  CHECK_FALSE(keyed_counter("oom_kill x\n", "oom_kill"));
  CHECK_FALSE(keyed_counter("", "oom_kill"));
}

TEST_CASE("keyed_counter: /proc/PID/io fields, spaces around the line") {
  CHECK(keyed_counter("  read_bytes: 4096  \nwrite_bytes: 8\n", "read_bytes:") == 4096u);
  CHECK(keyed_counter("read_bytes: 4096\nwrite_bytes: 8", "write_bytes:") == 8u);
  CHECK_FALSE(keyed_counter("read_bytes:4096\n", "read_bytes:"));  // no space: not this key
}
