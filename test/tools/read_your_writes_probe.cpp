// Read-your-writes at another controller: PAIRS times, suspends JOB through the controller at
// WRITE_ENDPOINT, then, as soon as that is acknowledged, asks the controller at READ_ENDPOINT
// for JOB (Controller.queryJobs naming it), which must show it SUSPENDED; likewise resume and
// RUNNING. Each connection stays open, so no client start-up hides a lag. Prints the first
// wrong answer and exits 1.
// Usage: read_your_writes_probe WRITE_ENDPOINT READ_ENDPOINT JOB PAIRS
#include <future>
#include <iostream>
#include <string>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "capnp/rpc.capnp.h"
#include "protocol/rpc_client.hpp"

using cairn::rpc::ControlVerb;
using cairn::schema::JobState;

namespace {

// The reading side: its own thread (one kj event loop per thread), one query per request.
class Reader {
 public:
  Reader(std::string endpoint, uint64_t job) : endpoint_(std::move(endpoint)), job_(job) {
    thread_ = std::thread([this] { run(); });
    ready_.get_future().get();
  }
  ~Reader() {
    ask(0);
    thread_.join();
  }
  // The job's state as the reader's controller shows it (rethrows its errors).
  JobState state() { return ask(1); }

 private:
  JobState ask(int what) {
    std::promise<JobState> answer;
    auto got = answer.get_future();
    {
      std::lock_guard lock(mutex_);
      request_ = what;
      answer_ = &answer;
    }
    changed_.notify_one();
    return got.get();
  }
  void run() {
    std::unique_ptr<cairn::RpcConnection> connection;
    try {
      connection = std::make_unique<cairn::RpcConnection>(endpoint_);
      ready_.set_value();
    } catch (...) {
      ready_.set_exception(std::current_exception());
      return;
    }
    auto controller = connection->get_main<cairn::rpc::Controller>();
    while (true) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return request_ >= 0; });
      int what = std::exchange(request_, -1);
      auto* answer = answer_;
      lock.unlock();
      if (what == 0) {
        answer->set_value(JobState::PENDING);
        return;
      }
      try {
        auto request = controller.queryJobsRequest();
        request.initQuery().initJobIds(1).set(0, job_);
        auto response = connection->wait(request.send());
        auto jobs = response.getJobs();
        if (jobs.size() != 1) throw std::runtime_error("the reader's controller does not know the job");
        answer->set_value(jobs[0].getState());
      } catch (...) {
        answer->set_exception(std::current_exception());
      }
    }
  }

  std::string endpoint_;
  uint64_t job_;
  std::thread thread_;
  std::promise<void> ready_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int request_ = -1;
  std::promise<JobState>* answer_ = nullptr;
};

const char* name_of(JobState state) {
  switch (state) {
    case JobState::RUNNING: return "RUNNING";
    case JobState::SUSPENDED: return "SUSPENDED";
    case JobState::PENDING: return "PENDING";
    default: return "another state";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: read_your_writes_probe WRITE_ENDPOINT READ_ENDPOINT JOB PAIRS\n";
    return 2;
  }
  try {
    uint64_t job = std::stoull(argv[3]);
    int pairs = std::stoi(argv[4]);
    Reader reader(argv[2], job);
    cairn::RpcConnection writer(argv[1]);
    auto controller = writer.get_main<cairn::rpc::Controller>();
    for (int i = 0; i < pairs * 2; ++i) {
      bool suspend = i % 2 == 0;
      auto request = controller.controlRequest();
      request.setVerb(suspend ? ControlVerb::SUSPEND : ControlVerb::RESUME);
      request.initJobIds(1).set(0, job);
      auto response = writer.wait(request.send());
      if (!response.getResults()[0].getOk()) {
        std::cout << (suspend ? "suspend" : "resume") << " " << job << ": "
                  << response.getResults()[0].getError().cStr() << "\n";
        return 1;
      }
      JobState expected = suspend ? JobState::SUSPENDED : JobState::RUNNING;
      JobState shown = reader.state();
      if (shown != expected) {
        std::cout << "command " << i + 1 << ": the reading controller shows job " << job << " " << name_of(shown)
                  << " right after an acknowledged " << (suspend ? "suspend" : "resume") << "\n";
        return 1;
      }
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "read_your_writes_probe: " << error.what() << "\n";
    return 1;
  }
}
