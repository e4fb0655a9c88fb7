// A value most owners leave at its default, kept on the heap only once it is set: an empty
// box costs a pointer instead of the value's size (a pending job's batch-script usage).
#pragma once

#include <memory>
#include <utility>

namespace cairn {

template <class T>
class Boxed {
 public:
  Boxed() = default;
  explicit Boxed(const T& value) { *this = value; }
  Boxed(const Boxed& other) : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  // A default value frees the box: it reads the same and takes no room.
  Boxed& operator=(const T& value) {
    if (value == T{})
      value_.reset();
    else if (value_)
      *value_ = value;
    else
      value_ = std::make_unique<T>(value);
    return *this;
  }
  void reset() { value_.reset(); }
  const T& get() const {
    static const T kDefault{};
    return value_ ? *value_ : kDefault;
  }
  operator const T&() const { return get(); }  // NOLINT: reads as the value it holds
  const T* operator->() const { return &get(); }
  bool operator==(const Boxed& other) const { return get() == other.get(); }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace cairn
