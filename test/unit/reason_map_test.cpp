#include <doctest/doctest.h>

#include "events/reason_map.hpp"

using namespace cairn;

TEST_CASE("reason map: kept in id order whatever order reasons are set in") {
  ReasonMap reasons;
  reasons[7] = Reason::priority;
  reasons[2] = Reason::resources;
  reasons[5] = Reason::dependency;
  reasons[2] = Reason::licenses;  // set again: one entry
  REQUIRE(reasons.size() == 3);
  std::vector<uint64_t> ids;
  for (const auto& [id, reason] : reasons) ids.push_back(id);
  CHECK(ids == std::vector<uint64_t>{2, 5, 7});
  CHECK(reasons.at(2) == Reason::licenses);
  CHECK(reasons.find(5)->second == Reason::dependency);
  CHECK(reasons.find(6) == reasons.end());
  CHECK_FALSE(reasons.contains(1));
  CHECK_THROWS_AS(reasons.at(8), std::out_of_range);
  CHECK(reasons.erase(5) == 1);
  CHECK(reasons.erase(5) == 0);
  CHECK(reasons == ReasonMap{{7, Reason::priority}, {2, Reason::licenses}});
  reasons.erase_if([](uint64_t id) { return id > 3; });
  CHECK(reasons == ReasonMap{{2, Reason::licenses}});
}

TEST_CASE("reason map: built from entries a pass wrote in id order") {
  auto reasons = ReasonMap::from_sorted({{1, Reason::resources}, {4, Reason::priority}, {9, Reason::none}});
  CHECK(reasons.size() == 3);
  CHECK(reasons.at(4) == Reason::priority);
  CHECK(reasons.at(9) == Reason::none);  // an array whose tasks all started keeps its entry
  CHECK(reasons == ReasonMap{{9, Reason::none}, {4, Reason::priority}, {1, Reason::resources}});
}
