// A map of shared connections (or any shared values) whose failed user drops an entry only if
// the entry is still the one it used: a call that failed late, over a connection since
// replaced (a shard's new owner at the same socket path), must not drop the replacement other
// calls use now (actors/shard_forwarder.cpp).
#pragma once

#include <memory>

namespace cairn {

// Erases `key` from `map` when it still maps to what `used` points to; true when erased.
template <class Map, class Value>
bool erase_if_still_held(Map& map, const typename Map::key_type& key, const std::weak_ptr<Value>& used) {
  auto found = map.find(key);
  if (found == map.end() || found->second != used.lock()) return false;
  map.erase(found);
  return true;
}

}  // namespace cairn
