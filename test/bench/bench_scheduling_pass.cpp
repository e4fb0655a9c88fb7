// The scheduling pass on a large, full site: NODES nodes of 64 CPUs (nearly all taken by running
// jobs) and PENDING pending jobs of the synthetic workload's shapes (serial or power-of-two
// sizes, minutes to hours), timed as the controller runs it on every event: schedule() over
// the reduced state. Prints the median, p99 and CPU time of the passes after nothing changed
// and of the passes after a running job ended (its CPUs taken again by what the pass placed),
// the placements of the first pass (backfill into the free CPUs left), and the state's
// resident bytes per pending job (the reducer's records; the controller's RSS is in `make scale`);
// then the passes as the controller runs them after one submission (over the new job only) and
// after an event that keeps the last answer (a step's start: skipped), the event's fold included.
// Usage: bench_scheduling_pass [NODES:PENDING ...]   (default 1000:10000 10000:100000)
#include <fmt/format.h>
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_figures.hpp"
#include "events/cluster_state.hpp"
#include "events/event_codec.hpp"
#include "events/event_factory.hpp"
#include "events/scheduling_reference.hpp"
#include "events/scheduling_skip.hpp"

using namespace cairn;

namespace {

constexpr int64_t kT0 = 1'795'000'000'000'000;
constexpr int64_t kSec = 1'000'000;
constexpr uint32_t kCpus = 64;

struct Dice {  // splitmix64
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
};

EventMeta meta_at(int64_t time_us, schema::ActorKind kind) {
  EventMeta meta;
  meta.time_us = time_us;
  meta.epoch = 1;
  meta.actor = {0, "root", kind};
  return meta;
}

struct Site {
  ClusterState state;
  uint64_t offset = 0;
  void feed(const std::vector<uint8_t>& bytes) { apply(state, DecodedEvent(offset++, bytes)); }
};

// This thread's CPU time: on a shared machine the wall time of a pass also counts other work.
double thread_cpu_ms() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

long rss_kb() {
  long kb = 0;
  if (FILE* file = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, file))
      if (std::sscanf(line, "VmRSS: %ld", &kb) == 1) break;
    std::fclose(file);
  }
  return kb;
}

JobSpec workload_spec(Dice& dice, uint32_t cpus) {
  JobSpec spec;
  spec.name = "sim";
  spec.partition = "batch";
  spec.user_name = "user" + std::to_string(dice.below(50));
  spec.uid = 1000;
  spec.gid = 1000;
  spec.script = "#!/bin/sh\n";
  spec.work_dir = "/tmp";
  spec.num_tasks = cpus;
  spec.num_nodes = (cpus + kCpus - 1) / kCpus;
  spec.mem_per_cpu_mb = 100;
  spec.time_limit_sec = 60 * (1 + dice.below(120));
  return spec;
}

uint32_t workload_cpus(Dice& dice) { return dice.below(4) == 0 ? 1 : 1u << dice.below(9); }  // 1 to 256

void run(uint32_t node_count, uint32_t pending) {
  Dice dice{42};
  Site site;
  PartitionPolicy batch;
  batch.name = "batch";
  batch.is_default = true;
  for (uint32_t i = 1; i <= node_count; ++i) {
    std::string name = fmt::format("sim{:05}", i);
    site.feed(make::node_registered(meta_at(kT0, schema::ActorKind::AGENT), {name, kCpus, 256000, {"batch"}, false, "", {}}));
    batch.nodes.push_back(name);
  }
  // Running jobs fill the nodes one after the other, leaving 0-3 CPUs free on each.
  uint64_t id = 0;
  for (uint32_t i = 0; i < node_count; ++i) {
    uint32_t used = 0, keep_free = dice.below(4);
    while (used + keep_free < kCpus) {
      uint32_t cpus = std::min(kCpus - keep_free - used, 1u << dice.below(7));
      auto spec = workload_spec(dice, cpus);
      site.feed(make::job_submitted(meta_at(kT0 + kSec, schema::ActorKind::USER), ++id, spec));
      site.feed(make::job_allocated(meta_at(kT0 + 2 * kSec, schema::ActorKind::SYSTEM), id,
                                    {{batch.nodes[i], cpus, 100ull * cpus, ""}}, spec.time_limit_sec));
      used += cpus;
    }
  }
  // The controller's view decodes the spec of every job it folds (actors/readable_view.hpp): the
  // running jobs' specs are decoded before the pending jobs are counted, not by their first pass.
  for (const auto& [job_id, job] : site.state.jobs) job.spec.core();
  long before = rss_kb();
  size_t heap_before = mallinfo2().uordblks;
  for (uint32_t i = 0; i < pending; ++i) {
    site.feed(make::job_submitted(meta_at(kT0 + 3 * kSec + i, schema::ActorKind::USER), ++id,
                                  workload_spec(dice, workload_cpus(dice))));
    site.state.jobs.rbegin()->second.spec.compact();  // as the controller's query view keeps a new job
  }
  std::string p = fmt::format("scheduling_pass.{}nodes_{}pending", node_count, pending);
  SchedulingInput input{&site.state, {batch}, {}, kT0 + 10 * kSec};
  // The first pass fills the holes; the passes timed are the ones that follow, as on every
  // event of a full site: the queue looked at again, nothing (or little) placed.
  size_t placed = 0;
  for (const auto& placement : schedule(input).placements) {
    site.feed(make::job_allocated(meta_at(kT0 + 10 * kSec, schema::ActorKind::SYSTEM), placement.job_id, placement.nodes,
                                  placement.time_limit_sec));
    ++placed;
  }
  pending -= static_cast<uint32_t>(placed);
  long grown_kb = rss_kb() - before;  // after a pass: the records as the scheduler left them
  size_t heap_grown = mallinfo2().uordblks - heap_before;  // allocated bytes, without the heap's holes
  input.now_us += kSec;
  bool scan_every_node = std::getenv("CAIRN_BENCH_SCAN_EVERY_NODE") != nullptr;  // the pass without its index
  int passes = node_count >= 10000 ? 11 : 31;
  auto quantile = [](double q, const std::vector<double>& v) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  // Times `passes` passes; `before` runs ahead of each, untimed (the event that triggers it).
  auto time_passes = [&](const std::string& name, const std::string& goal, const std::string& note, auto before) {
    std::vector<double> ms, cpu_ms;
    for (int i = 0; i < passes; ++i) {
      before(i);
      auto began = std::chrono::steady_clock::now();
      double cpu_began = thread_cpu_ms();
      auto decision = scan_every_node ? schedule_scanning_every_node(input) : schedule(input);
      cpu_ms.push_back(thread_cpu_ms() - cpu_began);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count());
      for (const auto& placement : decision.placements)  // the site stays full, as the controller keeps it
        site.feed(make::job_allocated(meta_at(input.now_us, schema::ActorKind::SYSTEM), placement.job_id,
                                      placement.nodes, placement.time_limit_sec));
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu_ms.begin(), cpu_ms.end());
    bench::figure(name + ".median_ms", quantile(0.5, ms), "ms", goal, note);
    bench::figure(name + ".p99_ms", quantile(0.99, ms), "ms");
    bench::figure(name + ".cpu_median_ms", quantile(0.5, cpu_ms), "ms", "", "the pass's own CPU time");
    bench::figure(name + ".cpu_p99_ms", quantile(0.99, cpu_ms), "ms");
  };
  std::string note = fmt::format("{} passes, {} running jobs, {} pending, after a pass that placed {}", passes,
                                 site.state.unfinished_jobs.size() - pending, pending, placed);
  time_passes(p, "<= 50", note + "; nothing changed between passes", [](int) {});
  // A running job ends before each pass (a different node each time): the pass backfills its CPUs.
  time_passes(p + ".after_job_end", "<= 50", "a running job ended before each pass", [&](int i) {
    uint64_t ending = 1 + static_cast<uint64_t>(i) * 5;  // the first running jobs, on the first nodes
    site.feed(make::job_ended(meta_at(input.now_us, schema::ActorKind::AGENT), ending, schema::EndCause::EXITED, 0, 0,
                              site.state.jobs.at(ending).allocation.at(0).node));
    input.now_us += kSec;
  });
  // The controller's passes after events (actors/query_view.cpp): a memo of the last pass that
  // asked for nothing, and its plan. A full pass first, until one asks for nothing.
  PlanHandle plan;
  PassMemo memo;
  for (int tries = 0; tries < 10 && !memo.valid; ++tries) {
    auto decision = schedule(input, plan);
    memo = remember_pass(input, decision, site.offset, nullptr);
    for (const auto& placement : decision.placements)
      site.feed(make::job_allocated(meta_at(input.now_us, schema::ActorKind::SYSTEM), placement.job_id, placement.nodes,
                                    placement.time_limit_sec));
    input.now_us += kSec;
  }
  // Feeds an event as the query view applies it: the memo goes past it when it keeps its answer.
  auto feed_carrying = [&](const std::vector<uint8_t>& bytes) {
    uint64_t at = site.offset;
    DecodedEvent decoded(at, bytes);
    std::optional<NodeAsScheduled> node_before;
    if (auto node = node_to_watch(decoded.event()); !node.empty()) node_before = node_as_scheduled(site.state, node);
    ApplyResult result = apply(site.state, decoded);
    ++site.offset;
    if (result == ApplyResult::applied && decoded.event().getBody().which() == schema::Event::Body::JOB_SUBMITTED)
      site.state.jobs.rbegin()->second.spec.compact();  // as the query view keeps a new job
    carry_memo(memo, at, keeps_pass_answer(decoded.event(), node_before, site.state), submitted_job(decoded.event(), result));
  };
  // The pass as the query view runs it: skipped, over the new jobs only, or full (keeping its plan).
  int skipped = 0, over_new = 0, full = 0;
  auto controller_pass = [&]() {
    if (may_skip_pass(memo, site.offset, nullptr, input.now_us)) {
      ++skipped;
      return SchedulingDecision{};
    }
    SchedulingDecision decision;
    std::optional<SchedulingDecision> answer;
    if (plan && may_pass_over_new_jobs(memo, site.offset, nullptr, input.now_us))
      answer = schedule_submissions(*plan, memo.new_jobs, input.now_us);
    if (answer) {
      ++over_new;
      decision = std::move(*answer);
    } else {
      ++full;
      decision = schedule(input, plan);
    }
    memo = remember_pass(input, decision, site.offset, nullptr);
    if (!memo.valid) plan.reset();
    return decision;
  };
  auto time_controller_passes = [&](const std::string& name, const std::string& note, auto before) {
    std::vector<double> ms, cpu_ms;
    skipped = over_new = full = 0;
    for (int i = 0; i < passes; ++i) {
      auto began = std::chrono::steady_clock::now();
      double cpu_began = thread_cpu_ms();
      before(i);  // the event, applied and classified, is part of what is timed
      auto decision = controller_pass();
      cpu_ms.push_back(thread_cpu_ms() - cpu_began);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count());
      for (const auto& placement : decision.placements)
        feed_carrying(make::job_allocated(meta_at(input.now_us, schema::ActorKind::SYSTEM), placement.job_id,
                                          placement.nodes, placement.time_limit_sec));
      input.now_us += kSec;
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu_ms.begin(), cpu_ms.end());
    std::string counts = fmt::format("{}; passes skipped {}, over the new jobs only {}, full {}", note, skipped, over_new, full);
    bench::figure(name + ".median_ms", quantile(0.5, ms), "ms", "<= 50", counts);
    bench::figure(name + ".cpu_median_ms", quantile(0.5, cpu_ms), "ms", "", "the event's fold and the pass, CPU time");
  };
  // One job submitted before each pass, ranked after the queue (a later submission of the same priority).
  time_controller_passes(p + ".after_submission", "one 64-CPU job submitted before each pass", [&](int) {
    auto spec = workload_spec(dice, kCpus);
    feed_carrying(make::job_submitted(meta_at(input.now_us, schema::ActorKind::USER), ++id, spec));
  });
  // A step starts in a running job before each pass: an event that keeps the last pass's answer.
  time_controller_passes(p + ".after_step_start", "a step started in a running job before each pass", [&](int i) {
    uint64_t running = 2 + static_cast<uint64_t>(i) * 5;
    const auto& job = site.state.jobs.at(running);
    feed_carrying(make::step_started(meta_at(input.now_us, schema::ActorKind::AGENT), running,
                                     {job.next_step_id, "a.out", job.allocation, 1, 1, "a.out"}));
  });
  size_t spec_bytes = 0, queued = 0;
  for (uint64_t job_id : site.state.unfinished_jobs)
    if (const auto& job = site.state.jobs.at(job_id); job.state == JobState::PENDING) {
      spec_bytes += job.spec.event_bytes().size();
      ++queued;
    }
  bench::figure(p + ".state_bytes_per_pending_job", static_cast<double>(grown_kb) * 1024 / (pending + placed), "bytes", "< 2048",
                fmt::format("RSS growth of the reduced state from before the submissions to after a pass; of which a "
                            "record {} bytes, its decoded spec core {}, its packed spec {} on average",
                            sizeof(JobRecord), sizeof(JobSpecCore), queued ? spec_bytes / queued : 0));
  bench::figure(p + ".heap_bytes_per_pending_job", static_cast<double>(heap_grown) / (pending + placed), "bytes", "",
                "malloc's bytes in use (mallinfo2) grown over the same span: RSS growth less the heap's free holes");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<uint32_t, uint32_t>> sizes;
  for (int i = 1; i < argc; ++i) {
    unsigned nodes = 0, pending = 0;
    if (std::sscanf(argv[i], "%u:%u", &nodes, &pending) != 2 || nodes == 0) {
      fmt::print(stderr, "usage: bench_scheduling_pass [NODES:PENDING ...]\n");
      return 2;
    }
    sizes.push_back({nodes, pending});
  }
  if (sizes.empty()) sizes = {{1000, 10000}, {10000, 100000}};
  for (auto [nodes, pending] : sizes) run(nodes, pending);
}
