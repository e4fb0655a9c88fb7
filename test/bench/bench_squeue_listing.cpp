// squeue over a large queue, end to end minus the sockets: JOBS jobs (a third running on NODES
// nodes of 64 CPUs, the rest pending) in the reduced state; then what `squeue` costs the
// controller and the CLI, page after page as they do it (Controller.listJobs): the query
// reader's selection and encoding straight from the state (append_jobs_chunk, pages of
// 2,000 jobs in chunks of 1,000), the CLI's decoding (read_jobs_page) and the default
// format (render_squeue). Lean views (what the default format reads: the goal's figure, < 300
// ms at 100,000 jobs), then whole views (other formats). Prints each part's median CPU time,
// the sum's, and the wall time of the whole.
// Usage: bench_squeue_listing [NODES:JOBS ...]   (default 1000:10000 10000:100000)
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_figures.hpp"
#include "cli/squeue_format.hpp"
#include "events/cluster_state.hpp"
#include "events/event_codec.hpp"
#include "events/event_factory.hpp"
#include "events/read_model.hpp"
#include "protocol/job_codec.hpp"

using namespace cairn;

namespace {

constexpr int64_t kT0 = 1'795'000'000'000'000;
constexpr int64_t kSec = 1'000'000;
constexpr uint32_t kCpus = 64;

EventMeta meta_at(int64_t time_us, schema::ActorKind kind) {
  EventMeta meta;
  meta.time_us = time_us;
  meta.epoch = 1;
  meta.actor = {0, "root", kind};
  return meta;
}

JobSpec listed_spec(uint64_t id) {
  JobSpec spec;
  spec.name = "sim";
  spec.partition = "batch";
  spec.user_name = "user" + std::to_string(id % 50);
  spec.uid = 1000;
  spec.gid = 1000;
  spec.script = "#!/bin/sh\nexec sleep 60\n";
  spec.work_dir = "/home/user/work";
  spec.environment = {"PATH=/usr/bin:/bin", "HOME=/home/user", "CAIRN_SIM_RUNTIME=60"};
  spec.num_tasks = 1 + static_cast<uint32_t>(id % 16);
  spec.mem_per_cpu_mb = 100;
  spec.time_limit_sec = 3600;
  return spec;
}

// This thread's CPU time: on a shared machine the wall time also counts other work.
double thread_cpu_ms() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

double ms_since(double began_cpu_ms) { return thread_cpu_ms() - began_cpu_ms; }

double wall_ms_since(std::chrono::steady_clock::time_point began) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(uint32_t node_count, uint32_t job_count) {
  ClusterState state;
  uint64_t offset = 0;
  auto feed = [&](const std::vector<uint8_t>& bytes) { apply(state, DecodedEvent(offset++, bytes)); };
  std::vector<std::string> nodes;
  for (uint32_t i = 1; i <= node_count; ++i) {
    nodes.push_back(fmt::format("sim{:05}", i));
    feed(make::node_registered(meta_at(kT0, schema::ActorKind::AGENT), {nodes.back(), kCpus, 256000, {"batch"}, false, "", {}}));
  }
  for (uint64_t id = 1; id <= job_count; ++id) {
    auto spec = listed_spec(id);
    feed(make::job_submitted(meta_at(kT0 + kSec, schema::ActorKind::USER), id, spec));
    if (id % 3 == 0)  // a third run, spread over the nodes
      feed(make::job_allocated(meta_at(kT0 + 2 * kSec, schema::ActorKind::SYSTEM), id,
                               {{nodes[id % node_count], spec.num_tasks, 100ull * spec.num_tasks, ""}}, 3600));
  }
  // As the controller keeps them: queued jobs' specs compacted (environment pooled, packed).
  for (uint64_t id : state.unfinished_jobs) state.jobs.at(id).spec.compact();
  ReasonMap reasons;
  for (uint64_t id : state.unfinished_jobs)
    if (state.jobs.at(id).state == JobState::PENDING) reasons[id] = Reason::resources;

  // What squeue costs now (Controller.listJobs): the query reader encodes each page straight
  // from the state in chunks (select and encode are one part), the CLI reads the chunks.
  auto listing = [&](bool lean, const FieldFormat& format, const char* key) {
    std::vector<double> encode_ms, decode_ms, format_ms, total_ms, wall_ms;
    size_t shown = 0, bytes = 0;
    int rounds = job_count >= 50000 ? 3 : 7;
    for (int round = 0; round < rounds; ++round) {
      auto round_began = std::chrono::steady_clock::now();
      double encode = 0, decode = 0, formatted = 0;
      JobQuery query = jobs_with_ids({}, false);
      query.states = squeue_default_states();
      query.page_size = kMaxJobPage;  // as the CLI asks when it reads every page
      bytes = shown = 0;
      std::string text;
      FormatContext context;
      context.now_us = kT0 + 100 * kSec;
      for (bool header = true;; header = false) {
        auto began = thread_cpu_ms();
        std::string page;  // as the reader's list_jobs: pages of 2,000 jobs in chunks of 1,000
        JobQuery chunk = query;
        uint32_t left = 2000;
        for (;;) {
          chunk.page_size = std::min(left, 1000u);
          JobsChunk written = append_jobs_chunk(page, state, reasons, chunk, kT0 + 100 * kSec, 300, lean);
          left -= static_cast<uint32_t>(std::min<size_t>(left, written.jobs));
          if (!written.more || left == 0 || page.size() >= kJobPageBytes) break;
          chunk.after_job_id = written.next_after_job_id;
        }
        encode += ms_since(began);
        bytes += page.size();
        began = thread_cpu_ms();
        JobsAnswer answer = read_jobs_page(kj::arrayPtr(reinterpret_cast<const kj::byte*>(page.data()), page.size()), lean);
        decode += ms_since(began);
        began = thread_cpu_ms();
        // As squeue prints the whole queue: page by page, each dropped once printed.
        std::vector<const JobRecord*> listed;
        listed.reserve(answer.jobs.size());
        for (const auto& job : answer.jobs) listed.push_back(&job);
        text += render_squeue(listed, format, header, context);
        shown += answer.jobs.size();
        formatted += ms_since(began);
        if (!answer.more) break;
        query.after_job_id = answer.next_after_job_id;
      }
      encode_ms.push_back(encode);
      decode_ms.push_back(decode);
      format_ms.push_back(formatted);
      total_ms.push_back(encode + decode + formatted);
      wall_ms.push_back(wall_ms_since(round_began));
      if (text.size() < shown) fmt::print(stderr, "short listing\n");
    }
    std::string p = fmt::format("squeue_listing.{}nodes_{}jobs{}", node_count, job_count, key);
    std::string note = fmt::format("{} jobs listed ({} pending, {} running), {} answer bytes ({} a job); {} rounds, "
                                   "medians; no sockets",
                                   shown, shown - shown / 3, shown / 3, bytes, shown ? bytes / shown : 0, rounds);
    bench::figure(p + ".total_ms", median(total_ms), "ms", lean ? "< 300" : "",
                  note + "; CPU time of the three parts" + (lean ? "" : "; the whole views (formats beyond the lean columns)"));
    bench::figure(p + ".wall_ms", median(wall_ms), "ms", "", "the same, wall time (counts other work on a shared machine)");
    bench::figure(p + ".encode_ms", median(encode_ms), "ms", "",
                  "the query reader's select and encode (append_jobs_chunk), in chunks of 1,000 jobs");
    bench::figure(p + ".decode_ms", median(decode_ms), "ms", "", "the CLI's read_jobs_page");
    bench::figure(p + ".format_ms", median(format_ms), "ms", "", "the CLI's render_squeue");
  };
  listing(true, parse_field_format(squeue_default_format()), "");
  listing(false, parse_field_format(squeue_default_format()), ".whole_views");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<uint32_t, uint32_t>> sizes;
  for (int i = 1; i < argc; ++i) {
    unsigned nodes = 0, jobs = 0;
    if (std::sscanf(argv[i], "%u:%u", &nodes, &jobs) != 2 || nodes == 0) {
      fmt::print(stderr, "usage: bench_squeue_listing [NODES:JOBS ...]\n");
      return 2;
    }
    sizes.push_back({nodes, jobs});
  }
  if (sizes.empty()) sizes = {{1000, 10000}, {10000, 100000}};
  for (auto [nodes, jobs] : sizes) run(nodes, jobs);
}
