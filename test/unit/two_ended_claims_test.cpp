// Chunks claimed from both ends of a list by two threads (a snapshot's jobs).
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "events/two_ended_claims.hpp"

using namespace cairn;

TEST_CASE("two-ended claims: the front and the back meet, every item taken once, each end's items contiguous") {
  for (unsigned count : {0u, 1u, 7u, 2'048u, 25'001u}) {
    CAPTURE(count);
    TwoEndedClaims claims(count, 100);
    std::vector<TwoEndedClaims::Range> front, back;
    std::thread reader([&] {
      while (auto range = claims.front()) front.push_back(*range);
    });
    while (auto range = claims.back()) back.push_back(*range);
    reader.join();
    unsigned expected = 0;  // the front's chunks ascend from 0 without a gap
    for (auto range : front) {
      CHECK(range.begin == expected);
      CHECK(range.end > range.begin);
      CHECK(range.end - range.begin <= 100);
      expected = range.end;
    }
    unsigned meeting = expected, below = count;  // the back's descend from count to where they met
    for (auto range : back) {
      CHECK(range.end == below);
      CHECK(range.end > range.begin);
      CHECK(range.end - range.begin <= 100);
      below = range.begin;
    }
    CHECK(below == meeting);
  }
}

TEST_CASE("two-ended claims: one end alone takes everything; stop ends both") {
  TwoEndedClaims alone(250, 100);
  CHECK(alone.back()->begin == 150);
  CHECK(alone.back()->begin == 50);
  auto last = alone.back();
  CHECK(last->begin == 0);
  CHECK(last->end == 50);
  CHECK_FALSE(alone.front());
  TwoEndedClaims stopped(1'000, 10);
  CHECK(stopped.front()->end == 10);
  stopped.stop();
  CHECK_FALSE(stopped.front());
  CHECK_FALSE(stopped.back());
}
