// What the controller reads from its RPC callers: Cap'n Proto messages decoded with
// the default reader limits, then checked as the write side checks them.
// Input: a selector byte, then the message (flat array encoding).
#include <capnp/serialize.h>
#include <kj/exception.h>

#include "common/config.hpp"
#include "events/scheduling_policy.hpp"
#include "events/accounts.hpp"
#include "events/event_codec.hpp"
#include "events/event_factory.hpp"
#include "events/job_array.hpp"
#include "events/job_dependency.hpp"
#include "events/job_step.hpp"
#include "events/node_features.hpp"
#include "events/replay.hpp"
#include "events/submission_limits.hpp"
#include "protocol/account_codec.hpp"
#include "protocol/step_codec.hpp"
#include "test/fuzz/fuzz_support.hpp"

using namespace cairn;

namespace {

const std::vector<std::string> kNodes = {"n1", "n2", "n3"};

// A small cluster: three registered nodes of 4 CPUs and 8 GB in one partition, a pool.
ClusterState cluster_with(const JobSpec* pending) {
  ClusterState state;
  uint64_t offset = 0;
  for (const auto& node : kNodes) {
    make::NodeRegistration registration{node, 4, 8000, {"debug"}, true, "v1", {}};
    apply_record(state, offset++, make::node_registered({1, 0, 0, 0, node, {}, {}}, registration));
  }
  if (pending) apply_record(state, offset++, make::job_submitted({2, 0, 0, 1, {}, {}, {}}, 1, *pending));
  return state;
}

std::vector<PartitionPolicy> partitions() {
  PartitionPolicy debug;
  debug.name = "debug";
  debug.nodes = kNodes;
  debug.is_default = true;
  debug.def_mem_per_cpu_mb = 100;
  return {debug};
}

// A submission: the checks of the scheduler actor, then scheduling passes with the job pending.
void submit(schema::JobSpec::Reader wire) {
  JobSpec spec = read_spec(wire);
  if (!submission_limit_error(spec, kDefaultMaxScriptSize, true).empty()) return;
  if (!spec.array_spec.empty() && !parse_array_spec(spec.array_spec)) return;
  if (!spec.features.empty() && !valid_feature_expression(spec.features)) return;
  if (!parse_dependency(spec.dependency).dependency) return;
  spec.partition = "debug";
  auto state = cluster_with(&spec);
  NodeFeatureMap features{{"n1", {"gpu"}}, {"n2", {"gpu", "big"}}};
  SchedulingInput input{&state, partitions(), {{"pool", 1 << 30, 1 << 20, "/bb", true}}, 1'000'000, false, &features};
  (void)schedule(input);
}

// An srun step inside a job running on n1 and n2.
void step(rpc::StepRequest::Reader wire) {
  StepRequest request = read_step_request(wire);
  JobSpec spec;
  spec.num_nodes = 2;
  auto state = cluster_with(&spec);
  auto& job = state.jobs.begin()->second;
  job.allocation = {{"n1", 4, 8000}, {"n2", 2, 4000}};
  job.state = JobState::RUNNING;
  (void)plan_step(job, request);
}

void account(rpc::AccountCommand::Reader wire) {
  AccountCommand command = read_account_command(wire);
  AccountsState accounts;
  for (int round = 0; round < 2; ++round) {
    auto plan = plan_account_command(accounts, command, "cairn");
    apply_changes(accounts, plan.changes);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  auto words = fuzz::words_of(data + 1, size - 1);
  try {
    capnp::FlatArrayMessageReader message(words);  // the default limits, as the RPC layer's
    switch (data[0] % 3) {
      case 0: submit(message.getRoot<schema::JobSpec>()); break;
      case 1: step(message.getRoot<rpc::StepRequest>()); break;
      default: account(message.getRoot<rpc::AccountCommand>()); break;
    }
  } catch (const kj::Exception&) {
    // A malformed message: the RPC layer answers the caller with the exception.
  }
  return 0;
}
