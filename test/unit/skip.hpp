// A test case that cannot run here says so and never passes: CAIRN_SKIP("reason") prints
// "SKIP: reason", which ctest reports as skipped (SKIP_REGULAR_EXPRESSION in
// test/CMakeLists.txt), and returns. Under CI=true it fails instead: CI runs as root with
// every tool the tests use, so a skip there means a test that silently stopped testing.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <string_view>

namespace cairn::test {
inline bool on_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}
}  // namespace cairn::test

#define CAIRN_SKIP(reason)                                          \
  do {                                                              \
    if (::cairn::test::on_ci())                                     \
      FAIL_CHECK("CI must be able to run this test: " << (reason)); \
    else                                                            \
      MESSAGE("SKIP: " << (reason));                                \
    return;                                                         \
  } while (false)
