// Synthetic event logs for the benchmarks: job lifecycles of `true` jobs on N
// nodes, 4 events per job after one registration per node.
#pragma once

#include <fmt/format.h>

#include <cstdint>

#include "events/event_factory.hpp"
#include "events/log/event_log.hpp"

namespace cairn::bench {

inline constexpr int64_t kSyntheticStartUs = 1'795'000'000'000'000;

inline EventMeta synthetic_meta(int64_t time_us, schema::ActorKind kind) {
  EventMeta meta;
  meta.time_us = time_us;
  meta.epoch = 1;
  meta.actor = {1000, "bench", kind};
  return meta;
}

// Appends node registrations (n0..n{nodes-1}, partition "batch") and `jobs`
// complete lifecycles; returns the time of the last event. With flush_every, waits for the
// appends of every that many jobs before the next (a loaded broker times out a larger backlog).
inline int64_t append_synthetic_history(EventLog& log, int nodes, uint64_t jobs, uint64_t flush_every = 0) {
  int64_t t = kSyntheticStartUs;
  for (int n = 0; n < nodes; ++n)
    log.append(0, make::node_registered(synthetic_meta(t, schema::ActorKind::AGENT),
                                        {fmt::format("n{}", n), 64, 256000, {"batch"}, true, "cgroup/v1", {}}),
               {});
  JobSpec spec;
  spec.name = "bench";
  spec.partition = "batch";
  spec.user_name = "bench";
  spec.script = "#!/bin/sh\ntrue\n";
  spec.work_dir = "/tmp";
  for (uint64_t id = 1; id <= jobs; ++id) {
    std::string node = fmt::format("n{}", id % static_cast<uint64_t>(nodes));
    log.append(0, make::job_submitted(synthetic_meta(t, schema::ActorKind::USER), id, spec), {});
    log.append(0, make::job_allocated(synthetic_meta(t + 1, schema::ActorKind::SYSTEM), id, {{node, 1, 100}}, 60), {});
    log.append(0, make::job_started(synthetic_meta(t + 2, schema::ActorKind::AGENT), id, node), {});
    log.append(0,
               make::job_ended(synthetic_meta(t + 3, schema::ActorKind::AGENT), id, schema::EndCause::EXITED, 0, 0, node),
               {});
    t += 10;
    if (flush_every > 0 && id % flush_every == 0) log.flush();
  }
  log.flush();
  return t - 7;
}

}  // namespace cairn::bench
