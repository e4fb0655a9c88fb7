#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <capnp/message.h>
#include <kj/exception.h>

#include "events/scheduling_policy.hpp"
#include "events/event_codec.hpp"
#include "events/submission_limits.hpp"

using namespace cairn;

namespace {

constexpr uint64_t kMax = 4 * 1024 * 1024;

std::string error_of(const JobSpec& spec, bool is_operator = false) {
  return submission_limit_error(spec, kMax, is_operator);
}

}  // namespace

TEST_CASE("submission limits: only operators may set a negative nice") {
  JobSpec spec;
  CHECK(error_of(spec).empty());
  spec.nice = 100;
  CHECK(error_of(spec).empty());
  spec.nice = -1;
  CHECK(error_of(spec) == "Invalid --nice value");
  CHECK(error_of(spec, true).empty());
  spec.nice = -100000;
  CHECK(error_of(spec) == "Invalid --nice value");
  CHECK(error_of(spec, true).empty());
  // Beyond Slurm's range nobody may go.
  spec.nice = INT32_MIN;
  CHECK(error_of(spec, true) == "Invalid --nice value");
  spec.nice = INT32_MAX;
  CHECK(error_of(spec, true) == "Invalid --nice value");
  spec.nice = 2147483645;
  CHECK(error_of(spec).empty());
}

TEST_CASE("submission limits: the script and the environment up to max_script_size") {
  JobSpec spec;
  spec.script = std::string(kMax, 'x');
  CHECK(error_of(spec).empty());
  spec.script += 'x';
  CHECK(error_of(spec) == "Pathname of a file, directory or other parameter too long");
  CHECK(submission_limit_error(spec, kMax + 1, false).empty());
  spec.script.clear();
  spec.environment = {std::string(kMax / 2, 'a'), std::string(kMax / 2 - 2, 'b')};  // with their NULs: kMax
  CHECK(environment_bytes(spec.environment) == kMax);
  CHECK(error_of(spec).empty());
  spec.environment.push_back("");
  CHECK(error_of(spec) == "Pathname of a file, directory or other parameter too long");
}

TEST_CASE("submission limits: Slurm's string limits") {
  auto refused = [](auto edit) {
    JobSpec spec;
    edit(spec);
    return error_of(spec) == "Pathname of a file, directory or other parameter too long";
  };
  CHECK(!refused([](JobSpec& s) { s.name = std::string(1024, 'n'); }));
  CHECK(refused([](JobSpec& s) { s.name = std::string(1025, 'n'); }));
  CHECK(refused([](JobSpec& s) { s.comment = std::string(1025, 'c'); }));
  CHECK(refused([](JobSpec& s) { s.partition = std::string(1025, 'p'); }));
  CHECK(!refused([](JobSpec& s) { s.work_dir = std::string(4096, '/'); }));
  CHECK(refused([](JobSpec& s) { s.stdout_pattern = std::string(4097, 'o'); }));
  CHECK(refused([](JobSpec& s) { s.dependency = std::string(128 * 1024 + 1, '1'); }));
  CHECK(refused([](JobSpec& s) { s.array_spec = std::string(4097, '1'); }));
  CHECK(refused([](JobSpec& s) { s.burst_buffer.stage_in = {{std::string(5000, 'a'), std::string(5000, 'b')}}; }));
  CHECK(refused([](JobSpec& s) { s.req_nodes.assign(64 * 1024 + 1, "n1"); }));
  CHECK(!refused([](JobSpec& s) { s.exc_nodes.assign(64 * 1024, "n1"); }));
}

TEST_CASE("submission limits: counts and their products do not wrap") {
  JobSpec spec;
  spec.num_tasks = 65536;
  spec.cpus_per_task = 65536;  // 2^32: a 32-bit product would be 0
  CHECK(total_cpus(spec) == uint64_t{1} << 32);
  CHECK(error_of(spec) == "More processors requested than permitted");
  spec.cpus_per_task = 65535;
  CHECK(error_of(spec).empty());  // a count; whether a partition has the CPUs is the scheduler's check
  spec.num_tasks = 0;
  spec.cpus_per_task = 0;
  CHECK(total_cpus(spec) == 1);

  spec = {};
  spec.num_nodes = uint32_t{INT32_MAX} + 1;
  CHECK(error_of(spec) == "Node count specification invalid");

  spec = {};
  spec.num_tasks = 1024;
  spec.mem_per_cpu_mb = (UINT64_MAX >> 20) / 1024 + 1;  // times 1024 CPUs, in bytes, overflows
  CHECK(error_of(spec) == "Memory required by task is not available");
  spec.mem_per_cpu_mb = (UINT64_MAX >> 20) / 1024;
  CHECK(error_of(spec).empty());
  spec = {};
  spec.mem_per_node_mb = UINT64_MAX;
  CHECK(error_of(spec) == "Memory required by task is not available");
}

TEST_CASE("submission limits: signals and resubmission policies from the wire") {
  JobSpec spec;
  spec.signal = -1;
  CHECK(error_of(spec) == "Invalid --signal specification");
  spec.signal = 65;
  CHECK(error_of(spec) == "Invalid --signal specification");
  spec.signal = 10;
  CHECK(error_of(spec).empty());
  spec.resubmit.on_exit_codes = {0, 255};
  CHECK(error_of(spec).empty());
  spec.resubmit.on_exit_codes = {256};
  CHECK(error_of(spec) == "Invalid --resubmit-on specification");
  spec.resubmit.on_exit_codes = {-1};
  CHECK(error_of(spec) == "Invalid --resubmit-on specification");
}

TEST_CASE("scheduling arithmetic saturates instead of wrapping") {
  CHECK(saturating_product(3, 4) == 12);
  CHECK(saturating_product(UINT64_MAX / 2 + 1, 2) == UINT64_MAX);
  PartitionPolicy partition;
  JobSpecCore spec;
  spec.mem_per_cpu_mb = UINT64_MAX / 2;
  CHECK(memory_per_node_mb(spec, 4, partition) == UINT64_MAX);  // no node has it: the job never fits
  BbPoolPolicy pool{"p", 1 << 30, 1 << 20, "/bb", true};
  CHECK(reserved_size(1, pool) == 1 << 20);
  CHECK(reserved_size(UINT64_MAX - 5, pool) == UINT64_MAX);  // not rounded up past 2^64 to almost nothing
}

TEST_CASE("decoding a spec refuses lists longer than any request before copying them") {
  // Found by fuzz_rpc: a few hundred bytes claimed millions of empty stage paths.
  capnp::MallocMessageBuilder message;
  auto spec = message.initRoot<schema::JobSpec>();
  spec.initEnvironment(kMaxSpecListEntries);
  CHECK(read_spec(spec.asReader()).environment.size() == kMaxSpecListEntries);
  spec.initEnvironment(kMaxSpecListEntries + 1);
  CHECK_THROWS_AS(read_spec(spec.asReader()), kj::Exception);
  CHECK_THROWS_AS(check_spec(spec.asReader()), kj::Exception);
  spec.initEnvironment(0);
  spec.initBurstBuffer().initStageIn(kMaxSpecListEntries + 1);
  CHECK_THROWS_AS(read_spec(spec.asReader()), kj::Exception);
  JobSpec many;
  many.environment.assign(kMaxSpecListEntries + 1, "");
  CHECK(error_of(many) == "Pathname of a file, directory or other parameter too long");
}
