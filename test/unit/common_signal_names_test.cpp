#include <doctest/doctest.h>

#include <csignal>

#include "common/signal_names.hpp"

using cairn::parse_signal;
using cairn::parse_signal_spec;
using cairn::signal_name;

TEST_CASE("parse_signal: names with or without SIG, any case, and numbers") {
  CHECK(parse_signal("TERM") == SIGTERM);
  CHECK(parse_signal("SIGTERM") == SIGTERM);
  CHECK(parse_signal("15") == 15);
  CHECK(parse_signal("usr1") == SIGUSR1);
  CHECK(parse_signal("SIGUSR1") == SIGUSR1);
  CHECK(parse_signal("sigusr1") == SIGUSR1);
  CHECK(parse_signal("KILL") == SIGKILL);
  CHECK(parse_signal("HUP") == SIGHUP);
  CHECK(parse_signal("INT") == SIGINT);
  CHECK(parse_signal("STOP") == SIGSTOP);
  CHECK(parse_signal("CONT") == SIGCONT);
  CHECK(parse_signal("USR2") == SIGUSR2);
  CHECK(parse_signal("QUIT") == SIGQUIT);
  CHECK(parse_signal("ALRM") == SIGALRM);
  CHECK(parse_signal("TSTP") == SIGTSTP);
  CHECK(parse_signal("9") == 9);
  CHECK(parse_signal(" TERM ") == SIGTERM);
  CHECK(parse_signal(std::to_string(SIGRTMAX)) == SIGRTMAX);
}

TEST_CASE("parse_signal rejects unknown names and numbers") {
  for (const char* bad : {"", "FOO", "SIG", "0", "-1", "SIG15", "999", "15x", "TERMX", "SIG TERM"})
    CHECK_MESSAGE(!parse_signal(bad), bad);
  CHECK(!parse_signal(std::to_string(SIGRTMAX + 1)));
}

TEST_CASE("signal_name") {
  CHECK(signal_name(SIGTERM) == "TERM");
  CHECK(signal_name(SIGUSR1) == "USR1");
  CHECK(signal_name(SIGKILL) == "KILL");
  CHECK(signal_name(SIGRTMIN + 2) == std::to_string(SIGRTMIN + 2));
  for (const char* name : {"HUP", "INT", "QUIT", "KILL", "USR1", "USR2", "ALRM", "TERM", "CONT", "STOP", "TSTP",
                           "TTIN", "TTOU", "URG", "XCPU", "WINCH", "PIPE", "CHLD"})
    CHECK(signal_name(*parse_signal(name)) == name);
}

TEST_CASE("parse_signal_spec: [{R|B}:]<sig_num>[@sig_time]") {
  auto spec = parse_signal_spec("USR1");
  REQUIRE(spec);
  CHECK(spec->signal == SIGUSR1);
  CHECK(spec->seconds_before == 60);  // Slurm's default
  CHECK(!spec->batch_only);

  spec = parse_signal_spec("10@120");
  REQUIRE(spec);
  CHECK(spec->signal == 10);
  CHECK(spec->seconds_before == 120);

  spec = parse_signal_spec("B:USR1@30");
  REQUIRE(spec);
  CHECK(spec->signal == SIGUSR1);
  CHECK(spec->seconds_before == 30);
  CHECK(spec->batch_only);

  spec = parse_signal_spec("b:SIGTERM");
  REQUIRE(spec);
  CHECK(spec->batch_only);
  CHECK(spec->signal == SIGTERM);

  spec = parse_signal_spec("R:USR2@5");
  REQUIRE(spec);
  CHECK(!spec->batch_only);
  CHECK(spec->signal == SIGUSR2);
  CHECK(spec->seconds_before == 5);

  spec = parse_signal_spec("USR1@0");
  REQUIRE(spec);
  CHECK(spec->seconds_before == 0);

  spec = parse_signal_spec("USR1@65535");
  REQUIRE(spec);
  CHECK(spec->seconds_before == 65535);
}

TEST_CASE("parse_signal_spec rejects malformed specs") {
  for (const char* bad : {"", "B:", "@60", "USR1@", "USR1@-5", "USR1@65536", "USR1@10x", "X:USR1", "FOO@10",
                          "USR1@10@20", "B:R:USR1", "0@10"})
    CHECK_MESSAGE(!parse_signal_spec(bad), bad);
}
