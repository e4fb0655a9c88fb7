// Writes the seed corpora of the binary fuzz targets from real encodings:
//   make_fuzz_seeds DIR   (DIR/event/*, DIR/rpc/*; test/fuzz/corpus in the repository)
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "events/event_codec.hpp"
#include "events/event_factory.hpp"
#include "protocol/account_codec.hpp"
#include "protocol/step_codec.hpp"

using namespace cairn;

namespace {

using Bytes = std::vector<uint8_t>;

void write_file(const std::filesystem::path& path, const Bytes& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

// The fuzz_event framing: a little-endian 16-bit length before each record.
Bytes framed(const std::vector<Bytes>& records) {
  Bytes out;
  for (const auto& record : records) {
    out.push_back(static_cast<uint8_t>(record.size() & 0xff));
    out.push_back(static_cast<uint8_t>(record.size() >> 8));
    out.insert(out.end(), record.begin(), record.end());
  }
  return out;
}

EventMeta at(int64_t second, uint64_t job_id = 0, const std::string& node = {}) {
  EventMeta meta;
  meta.time_us = second * 1'000'000;
  meta.job_id = job_id;
  meta.node_name = node;
  meta.actor = {1000, "alice", schema::ActorKind::USER};
  return meta;
}

JobSpec full_spec() {
  JobSpec spec;
  spec.name = "job";
  spec.partition = "debug";
  spec.user_name = "alice";
  spec.uid = 1000;
  spec.num_nodes = 2;
  spec.num_tasks = 4;
  spec.cpus_per_task = 2;
  spec.mem_per_cpu_mb = 100;
  spec.time_limit_sec = 600;
  spec.signal = SIGUSR1;
  spec.signal_seconds_before = 60;
  spec.nice = 10;
  spec.burst_buffer = {"pool", 1 << 20, {{"/a", "/b"}}, {{"/c", "/d"}}};
  spec.resubmit = {{JobState::TIMEOUT}, {3}, 2, 5};
  spec.dependency = "afterok:1";
  spec.features = "gpu&big";
  spec.req_nodes = {"n1"};
  spec.script = "#!/bin/sh\necho hi\n";
  spec.work_dir = "/home/alice";
  spec.stdout_pattern = "/home/alice/%j.out";
  spec.environment = {"PATH=/bin", "HOME=/home/alice"};
  spec.array_spec = "0-3%2";
  spec.comment = "comment";
  return spec;
}

template <typename Root, typename Write>
Bytes message_bytes(uint8_t selector, Write write) {
  capnp::MallocMessageBuilder message;
  write(message.initRoot<Root>());
  auto words = capnp::messageToFlatArray(message);
  Bytes out{selector};
  out.insert(out.end(), words.asBytes().begin(), words.asBytes().end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_fuzz_seeds DIR\n";
    return 2;
  }
  std::filesystem::path dir = argv[1];
  make::NodeRegistration n1{"n1", 4, 8000, {"debug"}, true, "v1", {}};
  make::NodeRegistration n2{"n2", 4, 8000, {"debug"}, true, "v1", {}};
  JobSpec spec = full_spec();
  JobSpec plain;
  plain.script = "#!/bin/sh\ntrue\n";

  write_file(dir / "event" / "lifecycle",
             framed({make::node_registered(at(1, 0, "n1"), n1), make::node_registered(at(1, 0, "n2"), n2),
                     make::job_submitted(at(2, 1), 1, plain), make::job_allocated(at(3, 1), 1, {{"n1", 1, 100}}, 60),
                     make::job_started(at(4, 1), 1, "n1"), make::job_suspend(at(5, 1), 1),
                     make::job_resume(at(6, 1), 1),
                     make::step_started(at(7, 1), 1, {1, "hostname", {{"n1", 1, 100}}, 1, 1, "hostname"}),
                     make::step_ended(at(8, 1), 1, {1, "n1", 0, 0, 0, {}}),
                     make::job_ended(at(9, 1), 1, schema::EndCause::EXITED, 0, 0, "n1")}));
  write_file(dir / "event" / "requeue_hold_cancel",
             framed({make::node_registered(at(1, 0, "n1"), n1), make::job_submitted(at(2, 2), 2, spec),
                     make::job_held(at(3, 2), 2, false), make::job_released(at(4, 2), 2),
                     make::job_allocated(at(5, 2), 2, {{"n1", 4, 800}}, 600),
                     make::job_started(at(6, 2), 2, "n1"), make::job_time_limit_reached(at(7, 2), 2),
                     make::job_ended(at(8, 2), 2, schema::EndCause::KILLED, 0, SIGTERM, "n1"),
                     make::job_requeued(at(9, 2), 2, JobState::TIMEOUT, 1, true, 5, true),
                     make::job_cancelled(at(10, 2), 2, SIGKILL)}));
  write_file(dir / "event" / "burst_buffer_oom",
             framed({make::node_registered(at(1, 0, "n1"), n1), make::job_submitted(at(2, 3), 3, spec),
                     make::bb_reserved(at(3, 3), 3, "pool", 1 << 20),
                     make::bb_stage_started(at(4, 3), 3, schema::StageDirection::STAGE_IN, "n1"),
                     make::bb_stage_ready(at(5, 3), 3, 100, 10), make::job_started(at(6, 3), 3, "n1"),
                     make::oom_detected(at(7, 3), 3, "n1", 1, 1 << 30, 1 << 29),
                     make::bb_stage_out_done(at(8, 3), 3, 100, 10), make::bb_released(at(9, 3), 3, "pool", 1 << 20),
                     make::node_down(at(10, 0, "n1"), "n1", "lost"), make::node_up(at(11, 0, "n1"), "n1")}));
  write_file(dir / "event" / "accounts_epochs",
             framed({make::epoch_claimed(at(1), 0, 2, "ctl"), make::account_added(at(2), {"physics", "", "", "root", {}, ""}),
                     make::user_associated(at(3), "alice", {"physics"}, "physics"),
                     make::user_removed(at(4), "alice", {"physics"}), make::account_removed(at(5), "physics"),
                     make::array_task_split(at(6, 5), 5, 4, 1)}));

  write_file(dir / "rpc" / "submit_full",
             message_bytes<schema::JobSpec>(0, [&](schema::JobSpec::Builder out) { write_spec(out, spec); }));
  write_file(dir / "rpc" / "submit_plain",
             message_bytes<schema::JobSpec>(0, [&](schema::JobSpec::Builder out) { write_spec(out, plain); }));
  StepRequest step;
  step.job_id = 1;
  step.num_tasks = 3;
  step.cpus_per_task = 1;
  step.argv = {"hostname"};
  step.cpu_bind = "cores";
  write_file(dir / "rpc" / "step",
             message_bytes<rpc::StepRequest>(1, [&](rpc::StepRequest::Builder out) { write_step_request(out, step); }));
  AccountCommand add_user;
  add_user.verb = AccountVerb::add_user;
  add_user.names = {"alice"};
  add_user.accounts = {"root"};
  write_file(dir / "rpc" / "account_add_user", message_bytes<rpc::AccountCommand>(2, [&](rpc::AccountCommand::Builder out) {
               write_account_command(out, add_user);
             }));
  AccountCommand add_account;
  add_account.names = {"physics", "chem"};
  add_account.description = "d";
  write_file(dir / "rpc" / "account_add", message_bytes<rpc::AccountCommand>(2, [&](rpc::AccountCommand::Builder out) {
               write_account_command(out, add_account);
             }));
  return 0;
}
