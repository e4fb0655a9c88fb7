#include <doctest/doctest.h>

#include <string>

#include "common/boxed.hpp"

using cairn::Boxed;

namespace {
struct Figures {
  int count = 0;
  std::string where;
  bool operator==(const Figures&) const = default;
};
}  // namespace

TEST_CASE("Boxed: reads as the default until set; a default value frees it; copies are deep") {
  Boxed<Figures> box;
  CHECK(box.get() == Figures{});
  CHECK(box->count == 0);
  box = Figures{3, "n1"};
  CHECK(box->count == 3);
  Boxed<Figures> copy = box;
  box = Figures{4, "n2"};
  CHECK(copy->where == "n1");  // not shared with the original
  CHECK_FALSE(copy == box);
  copy = box;
  CHECK(copy == box);
  box = Figures{};  // the default again: reads the same as an empty box
  CHECK(box == Boxed<Figures>{});
  copy.reset();
  CHECK(copy->where.empty());
  const Figures& read = copy;  // converts to the value it holds
  CHECK(read.count == 0);
}
