// Queries filtered at the source and answered in pages; scripts and environments only
// to their owner and operators; PrivateData.
#include <doctest/doctest.h>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <algorithm>
#include <string>

#include "events/read_model.hpp"
#include "protocol/job_codec.hpp"
#include "cli/cluster_queries.hpp"
#include "common/config.hpp"
#include "event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

constexpr int64_t kSecond = 1'000'000;

JobSpec owned_spec(const std::string& name, uint32_t uid, const std::string& user, const std::string& partition) {
  JobSpec spec = simple_spec(name);
  spec.uid = uid;
  spec.user_name = user;
  spec.partition = partition;
  spec.script = "#!/bin/sh\nexport TOKEN=" + user + "-s3cr3t-script\n";
  spec.environment = {"PATH=/usr/bin", "T=" + user + "-s3cr3t-env"};
  return spec;
}

// Jobs 1..n, alternately alice's (debug) and bob's (long); job 2 ends at t=20.
Timeline jobs_of_two_users(uint64_t n) {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug", "long"}, true, "v1", {}}));
  for (uint64_t id = 1; id <= n; ++id) {
    bool alice = id % 2 == 1;
    t.feed(make::job_submitted(at(static_cast<double>(id), schema::ActorKind::USER, alice ? 1000 : 1001,
                                  alice ? "alice" : "bob"),
                               id, owned_spec("job" + std::to_string(id), alice ? 1000 : 1001,
                                              alice ? "alice" : "bob", alice ? "debug" : "long")));
  }
  if (n >= 2) t.feed(make::job_cancelled(at(20), 2, 1001));
  return t;
}

std::vector<uint64_t> ids_of(const JobsAnswer& snapshot) {
  std::vector<uint64_t> ids;
  for (const auto& job : snapshot.jobs) ids.push_back(job.id);
  return ids;
}

// The bytes a controller would send for these jobs.
std::string answer_bytes(const std::vector<JobRecord>& jobs, JobViewFields fields) {
  std::string all;
  for (const auto& job : jobs) {
    capnp::MallocMessageBuilder one;
    write_job_view(one.initRoot<records::JobView>(), job, fields);
    auto words = capnp::messageToFlatArray(one);
    auto bytes = words.asBytes();
    all.append(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
  }
  return all;
}

}  // namespace

TEST_CASE("job query: users, states, partitions and names are filtered at the source") {
  Timeline t = jobs_of_two_users(6);
  int64_t now = kT0 + 30 * kSecond;
  JobQuery query = jobs_with_ids({}, true);
  query.user_names = {"alice"};
  CHECK(ids_of(select_jobs(t.state, {}, query, now, 300)) == std::vector<uint64_t>{1, 3, 5});
  query = jobs_with_ids({}, true);
  query.uids = {1001};
  CHECK(ids_of(select_jobs(t.state, {}, query, now, 300)) == std::vector<uint64_t>{2, 4, 6});
  query.states = {JobState::PENDING};
  CHECK(ids_of(select_jobs(t.state, {}, query, now, 300)) == std::vector<uint64_t>{4, 6});
  query = jobs_with_ids({}, false);
  query.partitions = {"debug"};
  query.names = {"job3", "job4"};
  CHECK(ids_of(select_jobs(t.state, {}, query, now, 300)) == std::vector<uint64_t>{3});
  // Named jobs pass the filters too (squeue -j 1,2 -u bob).
  query = jobs_with_ids({1, 2}, true);
  query.user_names = {"bob"};
  CHECK(ids_of(select_jobs(t.state, {}, query, now, 300)) == std::vector<uint64_t>{2});
  // A named job filtered out is not an unknown one (squeue -j 1 -t R prints nothing, no error).
  query = jobs_with_ids({1, 99}, true);
  query.states = {JobState::RUNNING};
  auto filtered = select_jobs(t.state, {}, query, now, 300);
  CHECK(filtered.jobs.empty());
  CHECK(filtered.named_found == 1);
}

TEST_CASE("job query: PrivateData's visible uid hides other users' jobs, even when named") {
  Timeline t = jobs_of_two_users(4);
  JobQuery query = jobs_with_ids({}, true);
  query.visible_uid = 1000;
  CHECK(ids_of(select_jobs(t.state, {}, query, kT0, 300)) == std::vector<uint64_t>{1, 3});
  query = jobs_with_ids({2, 3}, true);
  query.visible_uid = 1000;
  auto named = select_jobs(t.state, {}, query, kT0, 300);
  CHECK(ids_of(named) == std::vector<uint64_t>{3});
  CHECK(named.named_found == 1);  // bob's job 2 is as unknown to alice as a job that never was
}

TEST_CASE("job query: sacct's time window keeps jobs that overlap it") {
  Timeline t = jobs_of_two_users(4);  // job 2 cancelled (pending) at t=20
  JobQuery query = jobs_with_ids({}, true);
  query.ended_after_us = kT0 + 21 * kSecond;
  CHECK(ids_of(select_jobs(t.state, {}, query, kT0 + 30 * kSecond, 300)) == std::vector<uint64_t>{1, 3, 4});
  query.ended_after_us = kT0 + 19 * kSecond;
  query.submitted_before_us = kT0 + 2 * kSecond;
  CHECK(ids_of(select_jobs(t.state, {}, query, kT0 + 30 * kSecond, 300)) == std::vector<uint64_t>{1, 2});
}

TEST_CASE("job query: a listing is answered in pages that together hold every job once") {
  Timeline t = jobs_of_two_users(7);
  JobQuery query = jobs_with_ids({}, true);
  query.page_size = 3;
  auto first = select_jobs(t.state, {}, query, kT0, 300);
  CHECK(ids_of(first) == std::vector<uint64_t>{1, 2, 3});
  CHECK(first.more);
  CHECK(first.next_after_job_id == 3);
  std::vector<uint64_t> all;
  int pages = 0;
  auto collected = read_all_pages(query, [&](const JobQuery& page) {
    ++pages;
    return select_jobs(t.state, {}, page, kT0, 300);
  });
  CHECK(ids_of(collected) == std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7});
  CHECK(pages == 3);
  // Without a page size, the pages asked for are the largest the controller gives.
  JobQuery unsized = jobs_with_ids({}, true);
  std::vector<uint32_t> asked;
  read_all_pages(unsized, [&](const JobQuery& page) {
    asked.push_back(page.page_size);
    return select_jobs(t.state, {}, page, kT0, 300);
  });
  CHECK(asked == std::vector<uint32_t>{kMaxJobPage});
  // A filter that skips jobs still advances the cursor past them.
  query.user_names = {"bob"};
  query.page_size = 2;
  auto bobs = select_jobs(t.state, {}, query, kT0, 300);
  CHECK(ids_of(bobs) == std::vector<uint64_t>{2, 4});
  CHECK(bobs.more);
  query.after_job_id = bobs.next_after_job_id;
  auto rest = select_jobs(t.state, {}, query, kT0, 300);
  CHECK(ids_of(rest) == std::vector<uint64_t>{6});
  CHECK_FALSE(rest.more);
}

TEST_CASE("job query: a page stops growing at its byte budget, never below one job") {
  Timeline t;
  JobSpec big = owned_spec("big", 1000, "alice", "debug");
  big.script = std::string(3u << 20, '#');  // 3 MiB scripts: three fill a page's budget
  for (uint64_t id = 1; id <= 5; ++id) t.feed(make::job_submitted(at(1), id, big));
  JobQuery query = jobs_with_ids({}, true);
  query.page_size = kMaxJobPage;
  query.with_script = true;
  auto page = select_jobs(t.state, {}, query, kT0, 300);
  CHECK(page.jobs.size() == 3);
  CHECK(page.more);
  query.with_script = false;  // without scripts the same jobs are small
  CHECK(select_jobs(t.state, {}, query, kT0, 300).jobs.size() == 5);
}

TEST_CASE("job view: scripts and environments are on the wire only when asked for and allowed") {
  Timeline t = jobs_of_two_users(2);
  std::vector<JobRecord> jobs = {t.job(1), t.job(2)};
  for (auto& job : jobs) job.spec.compact();  // as the controller keeps queued jobs
  std::string hidden = answer_bytes(jobs, {false, false});
  CHECK(hidden.find("s3cr3t") == std::string::npos);
  CHECK(hidden.find("job1") != std::string::npos);  // the rest of the spec is there
  std::string with_script = answer_bytes(jobs, {true, false});
  CHECK(with_script.find("alice-s3cr3t-script") != std::string::npos);
  CHECK(with_script.find("s3cr3t-env") == std::string::npos);
  std::string with_environment = answer_bytes(jobs, {false, true});
  CHECK(with_environment.find("bob-s3cr3t-env") != std::string::npos);
  CHECK(with_environment.find("s3cr3t-script") == std::string::npos);

  // Read back, a view without them has an empty script and environment and the same core.
  capnp::MallocMessageBuilder message;
  write_job_view(message.initRoot<records::JobView>(), jobs[0], {false, false});
  JobRecord read = read_job_view(message.getRoot<records::JobView>().asReader());
  JobSpec spec = read.spec.full();
  CHECK(spec.script.empty());
  CHECK(spec.environment.empty());
  CHECK(spec.name == "job1");
  CHECK(spec.work_dir == "/tmp");
}

TEST_CASE("job view: a large script is left out without shipping its bytes") {
  Timeline t;
  JobSpec big = owned_spec("big", 1000, "alice", "debug");
  big.script = "#!/bin/sh\n" + std::string(1u << 20, 'x') + "\nTOKEN=s3cr3t\n";
  t.feed(make::job_submitted(at(1), 1, big));
  std::string hidden = answer_bytes({t.job(1)}, {false, true});
  CHECK(hidden.size() < 64u << 10);
  CHECK(hidden.find("TOKEN=s3cr3t") == std::string::npos);
  CHECK(hidden.find("alice-s3cr3t-env") != std::string::npos);  // the environment was asked for
  CHECK(hidden.find("big") != std::string::npos);
  CHECK(answer_bytes({t.job(1)}, {true, true}).find("TOKEN=s3cr3t") != std::string::npos);
}

TEST_CASE("job query: the codec carries every field; the caller cannot set its own visibility") {
  JobQuery query = jobs_with_ids({5, 7}, true);
  query.user_names = {"alice"};
  query.uids = {1000, 1001};
  query.states = {JobState::PENDING, JobState::RUNNING};
  query.partitions = {"debug"};
  query.names = {"a", "b"};
  query.ended_after_us = 11;
  query.submitted_before_us = 22;
  query.after_job_id = 3;
  query.page_size = 50;
  query.with_script = true;
  query.with_environment = true;
  query.for_accounting = true;
  query.visible_uid = 42;
  capnp::MallocMessageBuilder message;
  write_job_query(message.initRoot<rpc::JobQuery>(), query);
  JobQuery read = read_job_query(message.getRoot<rpc::JobQuery>().asReader());
  CHECK(read.ids == query.ids);
  CHECK(read.user_names == query.user_names);
  CHECK(read.uids == query.uids);
  CHECK(read.states == query.states);
  CHECK(read.partitions == query.partitions);
  CHECK(read.names == query.names);
  CHECK(read.ended_after_us == 11);
  CHECK(read.submitted_before_us == 22);
  CHECK(read.after_job_id == 3);
  CHECK(read.page_size == 50);
  CHECK(read.with_script);
  CHECK(read.with_environment);
  CHECK(read.for_accounting);
  CHECK(read.include_finished);
  CHECK_FALSE(read.visible_uid.has_value());
}

TEST_CASE("PrivateData: Slurm's words; accounts and users hide what Slurm hides") {
  auto config = parse_config("PrivateData=jobs,usage,users,accounts,nodes,cloud,events,partitions,reservations\n",
                             "test.conf");
  CHECK(config.private_data.jobs);
  CHECK(config.private_data.usage);
  CHECK(config.private_data.users);
  CHECK(config.private_data.accounts);
  CHECK(config.private_data.nodes);
  CHECK_FALSE(parse_config("ClusterName=x\n", "test.conf").private_data.jobs);
  CHECK_THROWS_WITH_AS(parse_config("PrivateData=jobs,secrets\n", "test.conf"),
                       doctest::Contains("bad PrivateData value 'secrets'"), ConfigError);

  AccountsState state;
  state.accounts["physics"] = {"physics", "physics", "science", "root", {}, {}};
  state.users["alice"] = {"alice", "physics", {"physics"}, {}, {}};
  state.users["bob"] = {"bob", "physics", {"physics"}, {}, {}};
  auto users_only = visible_accounts(state, "alice", true, false);
  CHECK(users_only.users.size() == 1);
  CHECK(users_only.users.contains("alice"));
  CHECK(users_only.accounts.size() == 1);
  auto neither = visible_accounts(state, "carol", true, true);
  CHECK(neither.users.empty());
  CHECK(neither.accounts.empty());
  CHECK(visible_accounts(state, "alice", false, false) == state);
}
