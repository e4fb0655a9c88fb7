// GCC 12 reports a false maybe-uninitialized inside kj::_::ExceptionOr<T> for promise values.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "agents/step_streams.hpp"

#include <kj/async-io.h>
#include <spdlog/spdlog.h>

#include "protocol/step_codec.hpp"

#include <optional>

#include <unistd.h>

namespace cairn {
namespace {

constexpr size_t kReadSize = 64 * 1024;

class LoggedErrors final : public kj::TaskSet::ErrorHandler {
 public:
  void taskFailed(kj::Exception&& exception) override {
    spdlog::error("step streams: {}", exception.getDescription().cStr());
  }
};

LoggedErrors& logged_errors() {
  static LoggedErrors errors;
  return errors;
}

}  // namespace

struct StepStreams::Stream {
  struct Pipe {
    uint32_t task_id = 0;
    bool is_stderr = false;
    kj::Own<kj::AsyncInputStream> in;
    kj::Array<kj::byte> buffer;
  };
  explicit Stream(Key key) : key(key), tasks(logged_errors()) {}
  Key key;
  kj::Maybe<rpc::StepIo::Client> io;  // set by attach
  std::optional<StepEnd> end;         // set by step_ended
  std::vector<Pipe> pipes;
  struct Input {
    uint32_t task_id = 0;
    kj::Own<kj::AsyncOutputStream> out;  // null once closed (srun's EOF): the task reads EOF
  };
  std::vector<Input> inputs;
  size_t open_pipes = 0;
  bool srun_gone = false;
  bool finishing = false;
  kj::TaskSet tasks;  // last: destroyed first, cancelling the pumps before what they use
};

StepStreams::StepStreams(KjLoopThread& loop, std::string node, RecordEnd record_end)
    : loop_(loop), node_(std::move(node)), record_end_(std::move(record_end)) {}

StepStreams::~StepStreams() = default;

StepStreams::Stream& StepStreams::stream_for(Key key) {
  auto& slot = streams_[key];
  if (!slot) slot = kj::heap<Stream>(key);
  return *slot;
}

void StepStreams::attach(uint64_t job_id, uint32_t step_id, rpc::StepIo::Client io,
                         std::vector<StepTaskOutput> outputs) {
  Stream& stream = stream_for({job_id, step_id});
  if (stream.io != nullptr) {  // a repeated launch order: the first one's streams stay
    for (const auto& output : outputs)
      for (int fd : {output.stdout_fd, output.stderr_fd, output.stdin_fd})
        if (fd >= 0) ::close(fd);
    return;
  }
  stream.io = kj::mv(io);
  auto& provider = *loop_.io().lowLevelProvider;
  for (const auto& output : outputs) {
    for (bool is_stderr : {false, true}) {
      int fd = is_stderr ? output.stderr_fd : output.stdout_fd;
      if (fd < 0) continue;  // slurmstepd's lines: stderr only
      stream.pipes.push_back({output.task_id, is_stderr,
                              provider.wrapInputFd(fd, kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP),
                              kj::heapArray<kj::byte>(kReadSize)});
    }
  }
  for (const auto& output : outputs)
    if (output.stdin_fd >= 0)
      stream.inputs.push_back(
          {output.task_id, provider.wrapOutputFd(output.stdin_fd, kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP)});
  stream.open_pipes = stream.pipes.size();
  for (size_t i = 0; i < stream.pipes.size(); ++i) stream.tasks.add(pump(stream, i));
  for (size_t i = 0; i < stream.inputs.size(); ++i) stream.tasks.add(feed(stream, i));
  finish_if_done(stream);
}

void StepStreams::step_ended(StepEnd end) {
  loop_.post([this, end = std::move(end)]() mutable {
    Stream& stream = stream_for({end.job_id, end.step_id});
    stream.end = std::move(end);
    finish_if_done(stream);
  });
}

// Output goes to srun chunk by chunk, each sent once the previous one arrived (srun
// sees each pipe's bytes in order). Once srun is gone the rest is read and dropped.
kj::Promise<void> StepStreams::pump(Stream& stream, size_t index) {
  Stream::Pipe& pipe = stream.pipes[index];
  return pipe.in->tryRead(pipe.buffer.begin(), 1, pipe.buffer.size())
      .then(
          [this, &stream, index](size_t length) -> kj::Promise<void> {
            if (length == 0) {
              --stream.open_pipes;
              finish_if_done(stream);
              return kj::READY_NOW;
            }
            KJ_IF_MAYBE (io, stream.io) {
              if (!stream.srun_gone) {
                Stream::Pipe& pipe = stream.pipes[index];
                auto request = io->outputRequest();
                request.setTaskId(pipe.task_id);
                request.setStderr(pipe.is_stderr);
                request.setData(kj::arrayPtr(pipe.buffer.begin(), length));
                return request.send()
                    .ignoreResult()
                    .catch_([this, &stream](kj::Exception&& error) {
                      if (stream.srun_gone) return;
                      stream.srun_gone = true;
                      spdlog::warn("JobId={} StepId={}.{}: srun is gone ({}): terminating the step", stream.key.first,
                                   stream.key.first, stream.key.second, error.getDescription().cStr());
                      if (orders_) orders_->terminate_step(stream.key.first, stream.key.second, 0, StopReason::none);
                    })
                    .then([this, &stream, index]() { return pump(stream, index); });
              }
            }
            return pump(stream, index);
          },
          [this, &stream](kj::Exception&& error) {
            spdlog::warn("JobId={} StepId={}.{}: reading a task's output failed: {}", stream.key.first, stream.key.first,
                         stream.key.second,
                         error.getDescription().cStr());
            --stream.open_pipes;
            finish_if_done(stream);
          });
}

// A task's stdin: srun's next bytes are asked for once the previous ones are in the pipe
// (back-pressure: a task that does not read stops srun reading). srun's EOF, srun gone, or a
// task that closed its stdin (EPIPE) close the pipe. The step's end does not wait for it.
kj::Promise<void> StepStreams::feed(Stream& stream, size_t index) {
  auto close = [&stream, index]() { stream.inputs[index].out = nullptr; };
  rpc::StepIo::Client* io = nullptr;
  KJ_IF_MAYBE (attached, stream.io) io = attached;
  if (io == nullptr || stream.srun_gone) {
    close();
    return kj::READY_NOW;
  }
  auto request = io->readInputRequest();
  request.setTaskId(stream.inputs[index].task_id);
  request.setMaxBytes(kReadSize);
  return request.send().then(
      [this, &stream, index, close](capnp::Response<rpc::StepIo::ReadInputResults>&& response) -> kj::Promise<void> {
        auto data = response.getData();
        bool eof = response.getEof();
        if (data.size() == 0) {
          if (eof) {
            close();
            return kj::READY_NOW;
          }
          return feed(stream, index);
        }
        auto chunk = kj::heapArray<kj::byte>(data);
        auto written = stream.inputs[index].out->write(chunk.begin(), chunk.size()).attach(kj::mv(chunk));
        return written.then(
            [this, &stream, index, eof, close]() -> kj::Promise<void> {
              if (eof) {
                close();
                return kj::READY_NOW;
              }
              return feed(stream, index);
            },
            [close](kj::Exception&&) -> kj::Promise<void> {  // the task closed its stdin, or ended
              close();
              return kj::READY_NOW;
            });
      },
      [&stream, close](kj::Exception&& error) -> kj::Promise<void> {
        // An srun without stdin (older), or gone: the task's stdin ends here.
        spdlog::debug("JobId={} StepId={}.{}: no more stdin from srun: {}", stream.key.first, stream.key.first,
                      stream.key.second, error.getDescription().cStr());
        close();
        return kj::READY_NOW;
      });
}

// The end is recorded before srun hears of it: srun (and the batch script after it)
// goes on only once the step's end is durable.
void StepStreams::finish_if_done(Stream& stream) {
  if (stream.finishing || !stream.end || stream.io == nullptr || stream.open_pipes > 0) return;
  stream.finishing = true;
  Key key = stream.key;
  stream.tasks.add(record_end_(*stream.end).then([this, &stream, key]() -> kj::Promise<void> {
    kj::Promise<void> told = kj::READY_NOW;
    KJ_IF_MAYBE (io, stream.io) {
      const StepEnd& end = *stream.end;
      auto request = io->nodeDoneRequest();
      write_node_done(request, {node_, end.exits, end.message, end.oom_kills});
      told = request.send().ignoreResult().catch_([key](kj::Exception&&) {
        spdlog::debug("JobId={} StepId={}.{}: srun did not hear of the end", key.first, key.first, key.second);
      });
    }
    return told.then([this, key]() {
      // Not from inside the stream's own task: the erase destroys its TaskSet.
      loop_.tasks().add(kj::evalLater([this, key]() { streams_.erase(key); }));
    });
  }));
}

}  // namespace cairn
