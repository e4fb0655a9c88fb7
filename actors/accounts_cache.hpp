// The accounts as the query view last applied them, read by submissions without a
// message round trip (they change rarely; every submission reads them).
#pragma once

#include <memory>
#include <mutex>

#include "events/accounts.hpp"

namespace cairn {

class AccountsCache {
 public:
  std::shared_ptr<const AccountsState> get() const {
    std::lock_guard lock(mutex_);
    return value_;
  }
  void set(const AccountsState& accounts) {
    auto value = std::make_shared<const AccountsState>(accounts);
    std::lock_guard lock(mutex_);
    value_ = std::move(value);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const AccountsState> value_ = std::make_shared<const AccountsState>();
};

}  // namespace cairn
