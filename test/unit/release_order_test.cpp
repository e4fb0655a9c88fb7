#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "events/release_order.hpp"

using namespace cairn;

namespace {

// The order a stable sort by end gives, of every position added so far.
std::vector<size_t> stable_order(const std::vector<int64_t>& ends) {
  std::vector<size_t> order(ends.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ends[a] < ends[b]; });
  return order;
}

}  // namespace

TEST_CASE("release order: read out in part, ends added between reads, as a stable sort by end") {
  std::mt19937_64 dice(11);
  for (int round = 0; round < 50; ++round) {
    ReleaseOrder order;
    std::vector<int64_t> ends;
    auto add = [&](int count) {
      for (int i = 0; i < count; ++i) {
        ends.push_back(static_cast<int64_t>(dice() % 40));  // many ties
        order.add(ends.back());
      }
    };
    add(static_cast<int>(dice() % 200));
    size_t read = 0;
    for (int step = 0; step < 6; ++step) {
      // Read some way in, then add more (a pass's placements, some ending before what was read).
      size_t upto = std::min<size_t>(ends.size(), read + dice() % 60);
      auto expected = stable_order(ends);
      for (size_t k = 0; k < upto; ++k) REQUIRE(order.at(k) == expected[k]);
      read = upto;
      add(static_cast<int>(dice() % 20));
    }
    auto expected = stable_order(ends);
    CHECK(order.size() == ends.size());
    for (size_t k = 0; k < ends.size(); ++k) REQUIRE(order.at(k) == expected[k]);
    CHECK(order.at(ends.size()) == ReleaseOrder::npos);
  }
}
