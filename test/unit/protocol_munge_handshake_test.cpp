// protocol/munge_handshake.hpp: authNonce, a MUNGE credential over the payload naming the
// cluster and that nonce, authenticate; against an in-process Controller that records what it
// was asked, and a private munged where one can start.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <kj/async.h>

#include "protocol/munge_credential.hpp"
#include "protocol/munge_handshake.hpp"
#include "test/unit/log_backends.hpp"
#include "test/unit/skip.hpp"

extern char** environ;

using namespace cairn;

namespace {

constexpr const char* kNonce = "0badc0de";

// Answers authNonce with kNonce and authenticate with itself as the session, keeping the credentials.
class RecordingController final : public rpc::Controller::Server {
 public:
  int* nonces;
  std::vector<std::string>* credentials;
  RecordingController(int* nonces, std::vector<std::string>* credentials) : nonces(nonces), credentials(credentials) {}

  kj::Promise<void> authNonce(AuthNonceContext context) override {
    ++*nonces;
    context.getResults().setNonce(kNonce);
    context.getResults().setAuthType("auth/munge");
    return kj::READY_NOW;
  }
  kj::Promise<void> authenticate(AuthenticateContext context) override {
    credentials->push_back(context.getParams().getCredential().cStr());
    context.getResults().setSession(thisCap());
    return kj::READY_NOW;
  }
};

// A munged of its own (its key, its socket), stopped by its pid.
class PrivateMunged {
 public:
  explicit PrivateMunged(const std::filesystem::path& dir) : socket_((dir / "munge.sock").string()) {
    std::string key = (dir / "munge.key").string();
    std::ofstream(key) << std::string(1024, 'k');
    ::chmod(key.c_str(), 0600);
    ::chmod(dir.c_str(), 0755);
    std::vector<std::string> args = {"munged", "--foreground", "--socket=" + socket_, "--key-file=" + key,
                                     "--pid-file=" + (dir / "munged.pid").string(),
                                     "--log-file=" + (dir / "munged.log").string(),
                                     "--seed-file=" + (dir / "munged.seed").string()};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t quiet;  // its notices go to its log, not the test's output
    posix_spawn_file_actions_init(&quiet);
    std::string output = (dir / "munged.out").string();
    posix_spawn_file_actions_addopen(&quiet, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&quiet, 1, 2);
    if (::posix_spawnp(&pid_, "munged", &quiet, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&quiet);
    for (int i = 0; pid_ > 0 && i < 100 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ~PrivateMunged() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  bool ready() const {
    try {
      munge_encode_payload(socket_, 0, "probe");
      return true;
    } catch (const MungeError&) {
      return false;
    }
  }
  const std::string& socket() const { return socket_; }

 private:
  std::string socket_;
  pid_t pid_ = 0;
};

}  // namespace

TEST_CASE("munge handshake: munged's refusal, as it said it, and no authenticate") {
  test::TempDir dir;
  kj::EventLoop loop;
  kj::WaitScope scope(loop);
  int nonces = 0;
  std::vector<std::string> credentials;
  rpc::Controller::Client controller = kj::heap<RecordingController>(&nonces, &credentials);
  std::string absent = (dir.path / "absent.sock").string();
  try {
    munge_authenticate(controller, {"local", absent, 0, std::nullopt}).wait(scope);
    FAIL("authenticated without munged");
  } catch (const kj::Exception& error) {
    CHECK(std::string(error.getDescription().cStr()).starts_with("cannot get a MUNGE credential from munged at " + absent + ": "));
  }
  CHECK(nonces == 1);
  CHECK(credentials.empty());
}

TEST_CASE("munge handshake: the credential names the cluster, the nonce and whom it acts for") {
  test::TempDir dir;
  PrivateMunged munged(dir.path);
  if (!munged.ready()) CAIRN_SKIP("munged does not start here (Debian package munge)");
  kj::EventLoop loop;
  kj::WaitScope scope(loop);
  int nonces = 0;
  std::vector<std::string> credentials;
  rpc::Controller::Client controller = kj::heap<RecordingController>(&nonces, &credentials);

  auto session = munge_authenticate(controller, {"local", munged.socket(), 60, std::nullopt}).wait(scope);
  REQUIRE(credentials.size() == 1);
  CHECK(munge_decode_credential(munged.socket(), credentials[0]).payload == auth_payload("local", kNonce));
  // The session is what authenticate answered: a call on it reaches the same controller.
  session.authNonceRequest().send().wait(scope);
  CHECK(nonces == 2);

  munge_authenticate(controller, {"site", munged.socket(), 0, ForwardedIdentity{1001, 100}}).wait(scope);
  REQUIRE(credentials.size() == 2);
  auto forwarded = munge_decode_credential(munged.socket(), credentials[1]);
  CHECK(forwarded.payload == auth_payload("site", kNonce, ForwardedIdentity{1001, 100}));
  CHECK(forwarded.uid == ::getuid());
}
