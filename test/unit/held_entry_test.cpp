#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>

#include "common/held_entry.hpp"

using namespace cairn;

TEST_CASE("a failed user drops a shared entry only while it is still the one it used") {
  std::map<std::string, std::shared_ptr<int>> links;
  auto old_link = std::make_shared<int>(1);
  links["unix:/run/shard1.sock"] = old_link;
  std::weak_ptr<int> used_by_late_call = old_link;
  // A takeover: the new owner listens at the same path, and a new connection replaces the old.
  auto new_link = std::make_shared<int>(2);
  links["unix:/run/shard1.sock"] = new_link;
  old_link.reset();
  CHECK_FALSE(erase_if_still_held(links, std::string("unix:/run/shard1.sock"), used_by_late_call));
  REQUIRE(links.count("unix:/run/shard1.sock") == 1);
  CHECK(links.at("unix:/run/shard1.sock") == new_link);
  // The new connection's own failure drops it.
  CHECK(erase_if_still_held(links, std::string("unix:/run/shard1.sock"), std::weak_ptr<int>(new_link)));
  CHECK(links.empty());
  // Nothing there any more: nothing to drop.
  CHECK_FALSE(erase_if_still_held(links, std::string("unix:/run/shard1.sock"), std::weak_ptr<int>(new_link)));
  // A dead weak pointer never matches a live entry.
  links["tcp:host:6817"] = std::make_shared<int>(3);
  CHECK_FALSE(erase_if_still_held(links, std::string("tcp:host:6817"), std::weak_ptr<int>()));
  CHECK(links.size() == 1);
}
