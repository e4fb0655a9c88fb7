// A value the query view last applied, read by other actors without a message round trip
// (it changes rarely; submissions read it every time): the accounts, the partitions in force.
#pragma once

#include <memory>
#include <mutex>

namespace cairn {

template <typename T>
class SharedValue {
 public:
  std::shared_ptr<const T> get() const {
    std::lock_guard lock(mutex_);
    return value_;
  }
  void set(const T& value) {
    auto fresh = std::make_shared<const T>(value);
    std::lock_guard lock(mutex_);
    value_ = std::move(fresh);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const T> value_ = std::make_shared<const T>();
};

}  // namespace cairn
