// Golden files (test/golden/): a formatter's output compared with the file, or
// the file rewritten when CAIRN_UPDATE_GOLDEN=1.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace cairn::test {

// Time stamps print in local time: the goldens are in UTC while one lives.
class UtcTimeZone {
 public:
  UtcTimeZone() {
    if (const char* old = std::getenv("TZ")) saved_ = old;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  ~UtcTimeZone() {
    if (saved_)
      setenv("TZ", saved_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  UtcTimeZone(const UtcTimeZone&) = delete;
  UtcTimeZone& operator=(const UtcTimeZone&) = delete;

 private:
  std::optional<std::string> saved_;
};

inline std::string golden_path(const std::string& name) {
  return std::string(CAIRN_SOURCE_DIR) + "/test/golden/" + name;
}

inline void check_golden(const std::string& name, const std::string& actual) {
  const char* update = std::getenv("CAIRN_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(golden_path(name), std::ios::binary) << actual;
    MESSAGE("rewrote golden file " << name);
    return;
  }
  std::ifstream file(golden_path(name), std::ios::binary);
  REQUIRE_MESSAGE(file.good(), "missing golden file " << golden_path(name));
  std::stringstream expected;
  expected << file.rdbuf();
  CHECK_MESSAGE(actual == expected.str(), "golden " << name << " differs; actual:\n" << actual);
}

}  // namespace cairn::test
