// Helpers shared by the libFuzzer targets (test/fuzz/fuzz_*.cpp).
#pragma once

#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <capnp/message.h>
#include <kj/array.h>

namespace cairn::fuzz {

inline std::string_view text_of(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input's fields, separated by NUL bytes.
inline std::vector<std::string> nul_fields(const uint8_t* data, size_t size) {
  std::vector<std::string> fields(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0)
      fields.emplace_back();
    else
      fields.back() += static_cast<char>(data[i]);
  }
  return fields;
}

// A property of the code under test does not hold: libFuzzer keeps the input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::abort();
}

// Cap'n Proto wants 8-byte-aligned words: the bytes, padded with zeroes.
inline kj::Array<capnp::word> words_of(const uint8_t* data, size_t size) {
  auto words = kj::heapArray<capnp::word>((size + sizeof(capnp::word) - 1) / sizeof(capnp::word));
  std::memset(words.begin(), 0, words.size() * sizeof(capnp::word));
  if (size > 0) std::memcpy(words.begin(), data, size);
  return words;
}

// Logging would be most of the time spent, and say nothing a finding does not.
inline void quiet_logs() { spdlog::set_level(spdlog::level::off); }

}  // namespace cairn::fuzz
