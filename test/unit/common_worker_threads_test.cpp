// The daemons' CAF worker count for the machine's cores.
#include <doctest/doctest.h>

#include "common/worker_threads.hpp"

using cairn::actor_worker_threads;

TEST_CASE("actor workers: one per core, at least one, two at most") {
  CHECK(actor_worker_threads(0) == 1);  // hardware_concurrency() may not know
  CHECK(actor_worker_threads(1) == 1);
  CHECK(actor_worker_threads(2) == 2);
  CHECK(actor_worker_threads(64) == 2);
}
