#include "cli/local_cluster.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <thread>

#include "cli/controller_client.hpp"
#include "common/gres.hpp"
#include "common/option_parser.hpp"
#include "common/run_record.hpp"
#include "common/small_file.hpp"
#include "common/string_util.hpp"
#include "common/unique_fd.hpp"
#include "events/log/event_log.hpp"
#include "events/log/kafka_admin.hpp"

extern char** environ;

namespace cairn {
namespace {

namespace fs = std::filesystem;

const std::vector<OptionSpec> kOptions = {
    {0, "dir", true, ""}, {0, "feature", true, ""}, {0, "nodes", true, ""}, {0, "cpus", true, ""}, {0, "memory", true, ""},
    {0, "timeout", true, ""}, {0, "extra-config", true, ""}, {0, "tcp", false, ""}, {0, "kafka", false, ""},
    {0, "kafka-mock", false, ""}, {0, "kafka-brokers", true, ""}, {0, "sim-nodes", true, ""},
    {0, "sim-processes", true, ""}, {0, "shards", true, ""}, {0, "controllers", true, ""}, {0, "gres", true, ""},
    {0, "gres-conf", true, ""}, {'h', "help", false, ""},
};

constexpr const char* kUsage =
    "usage: cairn local up     --dir DIR [--nodes N] [--cpus C] [--memory MB] [--extra-config FILE] [--tcp]\n"
    "                          [--kafka | --kafka-mock] [--feature NODE=FEATURE[,FEATURE]]...\n"
    "                          [--sim-nodes N [--sim-processes P]]\n"
    "                          [--shards N] [--controllers M]\n"
    "                          [--gres NODE=GRES]... [--gres-conf FILE]\n"
    "                          (--feature: Feature= of a node, e.g. n2=gpu;\n"
    "                           --gres: Gres= of a node, e.g. n1=gpu:mi300x:4; --gres-conf: DIR/gres.conf's text;\n"
    "                           --tcp: the controller also listens on a free port of 127.0.0.1;\n"
    "                           --kafka: the event log on Apache Kafka's broker started with it (data in DIR/kafka),\n"
    "                           or on librdkafka's mock cluster where Java or the broker's jars are missing;\n"
    "                           --kafka-mock: on the mock cluster;\n"
    "                           --kafka-brokers HOST:PORT,...: on a Kafka cluster that runs already, whose topic\n"
    "                           cairn.events exists (cairn kafka create-topic); `down` leaves it running;\n"
    "                           --sim-nodes N: N simulated nodes n1..nN in one `cairnd --simulate` instead of\n"
    "                           one cairnd per node (jobs run CAIRN_SIM_RUNTIME seconds, nothing is executed);\n"
    "                           --sim-processes P: the simulated nodes split over P such processes;\n"
    "                           --shards N: Shards=N, partitions p0..pN-1 (p0 the default), one per shard, the\n"
    "                           nodes spread over them in turn (n1 in p0, n2 in p1, ...; at least N nodes);\n"
    "                           --controllers M: with one shard (or Kafka), M-1 standby controllers (cairnctld\n"
    "                           --standby) beside the first, each taking over the log when its writer stops;\n"
    "                           with --shards N on the file log, min(M,N) owners (cairnctld --shards: shard K\n"
    "                           to controller K mod M + 1; owner C listens on DIR/cairnctld-C.sock, the first\n"
    "                           on ControllerSocket=) and M-N standbys, each for one owner's shards, on its socket;\n"
    "                           with --shards N on Kafka, M controllers in one consumer group\n"
    "                           (KafkaControllerGroup=), which decides who writes which shard; controller C\n"
    "                           listens on DIR/cairnctld-C.sock, the first on ControllerSocket=)\n"
    "       cairn local down   --dir DIR   (stops the daemons, then the jobs they still ran)\n"
    "       cairn local status --dir DIR\n";

std::string binary_dir() { return fs::canonical("/proc/self/exe").parent_path().string(); }

// A daemon beside `cairn` (a build tree), else in ../sbin (installed: cairn in <prefix>/bin).
std::string daemon_path(const std::string& bin, const std::string& name) {
  std::error_code error;
  auto installed = fs::path(bin).parent_path() / "sbin" / name;
  if (!fs::exists(bin + "/" + name, error) && fs::exists(installed, error)) return installed.string();
  return bin + "/" + name;
}

// Starts a daemon in its own session, with its output in a log file. posix_spawn: never fork.
pid_t spawn_daemon(const std::vector<std::string>& argv, const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  std::vector<char*> raw;
  for (const auto& arg : argv) raw.push_back(const_cast<char*>(arg.c_str()));
  raw.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, raw[0], &actions, &attributes, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// A TCP port of 127.0.0.1 free right now (the kernel's pick), for the controller to bind soon after.
uint16_t free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("cannot pick a TCP port: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (rc == 0) rc = ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int error = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error(std::string("cannot pick a TCP port: ") + std::strerror(error));
  return ntohs(addr.sin_port);
}

// A pid file's process; 0 when the file is missing or names none.
pid_t read_pid(const std::string& path) {
  return static_cast<pid_t>(parse_unsigned<uint32_t>(trim(read_first_line(path))).value_or(0));
}

std::vector<pid_t> read_pids(const std::string& dir) {
  std::vector<pid_t> pids;
  std::ifstream file(dir + "/pids");
  pid_t pid;
  while (file >> pid) pids.push_back(pid);
  return pids;
}

bool alive(pid_t pid) { return kill(pid, 0) == 0; }

// The pids of a `--kafka` cluster's brokers (broker.sh writes DIR/kafka/node-N/pid).
std::vector<pid_t> broker_pids(const std::string& dir) {
  std::vector<pid_t> pids;
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(dir + "/kafka", ignored)) {
    pid_t pid = read_pid((entry.path() / "pid").string());
    if (entry.path().filename().string().starts_with("node-") && pid > 0) pids.push_back(pid);
  }
  return pids;
}

// The Kafka mock of a `--kafka` cluster has a PID file of its own: it stops after the daemons.
std::string mock_pid_path(const std::string& dir) { return dir + "/kafka-mock.pid"; }

// Stops exactly the processes this directory started, by PID: TERM, then KILL.
void stop_pids(const std::vector<pid_t>& pids) {
  for (pid_t pid : pids)
    if (alive(pid)) kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (pid_t pid : pids) {
    while (alive(pid) && std::chrono::steady_clock::now() < deadline) {
      waitpid(pid, nullptr, WNOHANG);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (alive(pid)) kill(pid, SIGKILL);
    waitpid(pid, nullptr, WNOHANG);
  }
}

// The agents' spool of a local cluster: job scripts, written and removed for every job.
// On tmpfs (/dev/shm) when there is one, as on diskless compute nodes: a disk file
// system pays for that churn at every later file creation (ext4 skips recently
// deleted inodes by scanning for them). Its path is kept in DIR/spool for `down`.
constexpr const char* kShmSpoolPrefix = "/dev/shm/cairn-local-";
std::string spool_record(const std::string& dir) { return dir + "/spool"; }

std::string make_spool_base(const std::string& dir) {
  std::string base = std::string(kShmSpoolPrefix) + "XXXXXX";
  if (::access("/dev/shm", W_OK | X_OK) != 0 || ::mkdtemp(base.data()) == nullptr) return {};
  ::chmod(base.c_str(), 0755);  // a root agent's switched jobs read their scripts through it
  std::ofstream(spool_record(dir)) << base << "\n";
  return base;
}

// Ends the jobs whose supervisors outlived the stopped agents (an agent's stop leaves its
// jobs running, for a restarted agent to take back; `down` ends the whole cluster). A run's
// record stays locked by its live supervisor (agents/agent_spool.hpp), so a record that can be
// locked names no live process, and a pid in it may have been reused: it is left alone.
void end_orphaned_jobs(const std::string& spool_base) {
  std::error_code ignored;
  for (const auto& node : fs::directory_iterator(spool_base, ignored)) {
    for (const auto& record : fs::directory_iterator(node.path() / "runs", ignored)) {
      if (!parse_run_file_name(record.path().filename().string())) continue;
      UniqueFd fd(::open(record.path().c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd) continue;
      bool supervised = ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
      if (!supervised) continue;
      auto run = parse_run_record(read_small_fd(fd.get()).text);
      if (!run || !run->supervisor) continue;
      if (run->supervisor->pgid > 1) ::kill(-run->supervisor->pgid, SIGKILL);
      if (run->supervisor->pid > 1) ::kill(run->supervisor->pid, SIGKILL);
    }
  }
}

void remove_spool(const std::string& dir) {
  std::string base(trim(read_first_line(spool_record(dir))));
  if (base.starts_with(kShmSpoolPrefix)) {
    end_orphaned_jobs(base);
    std::error_code ignored;
    fs::remove_all(base, ignored);
  }
  fs::remove(spool_record(dir));
}

// Apache Kafka's broker of a `--kafka` cluster: deploy/kafka/broker.sh, installed beside
// the binaries, keeps its data, configuration and pids in DIR/kafka.
std::string broker_dir(const std::string& dir) { return dir + "/kafka"; }
std::string broker_script(const std::string& bin) { return bin + "/cairn-kafka-broker"; }

// Runs the broker script to its end with its output in `log`; its exit status.
int run_broker_script(const std::string& bin, const std::vector<std::string>& args, const std::string& stdout_path,
                      const std::string& log) {
  std::vector<std::string> argv = {"/bin/bash", broker_script(bin)};
  argv.insert(argv.end(), args.begin(), args.end());
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);  // the brokers outlive `cairn local up`
  std::vector<char*> raw;
  for (const auto& arg : argv) raw.push_back(const_cast<char*>(arg.c_str()));
  raw.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, raw[0], &actions, &attributes, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) throw std::runtime_error("cannot run " + broker_script(bin) + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The last line of a file (a script's reason for failing).
std::string last_line(const std::string& path) {
  std::ifstream file(path);
  std::string line, last;
  while (std::getline(file, line))
    if (!line.empty()) last = line;
  return last;
}

// Stops the daemons, then the Kafka broker or mock (the controller flushes to it on the way out).
void stop_cluster(const std::string& dir) {
  stop_pids(read_pids(dir));
  fs::remove(dir + "/pids");
  remove_spool(dir);
  if (pid_t mock = read_pid(mock_pid_path(dir)); mock > 0) stop_pids({mock});
  fs::remove(mock_pid_path(dir));
  if (fs::exists(broker_dir(dir) + "/bootstrap"))
    run_broker_script(binary_dir(), {"stop", "--dir", broker_dir(dir)}, "/dev/null", dir + "/kafka-broker.log");
}

// Apache Kafka's broker with the event-log topic (deploy/kafka/create-topic.sh's settings);
// returns the EventLog= value, or empty when Java or the jars are missing (`why` says which).
std::string start_kafka_broker(const std::string& bin, const std::string& dir, unsigned shards, std::string& why) {
  std::string bootstrap_file = dir + "/kafka.bootstrap";
  fs::remove(bootstrap_file);
  if (!fs::exists(broker_script(bin))) {
    why = broker_script(bin) + " is not installed";
    return {};
  }
  std::string log = dir + "/kafka-broker.log";
  int status = run_broker_script(bin, {"start", "--dir", broker_dir(dir), "--brokers", "1"}, bootstrap_file, log);
  if (status == 3) {  // no Java or no jars
    why = last_line(log);
    fs::remove(bootstrap_file);
    return {};
  }
  std::string bootstrap;
  if (status != 0 || !(std::ifstream(bootstrap_file) >> bootstrap) || bootstrap.empty()) {
    run_broker_script(bin, {"stop", "--dir", broker_dir(dir)}, "/dev/null", log);
    throw std::runtime_error("Apache Kafka's broker did not start (" + last_line(log) + "); see " + log);
  }
  KafkaTopicRequest topic;
  topic.brokers = bootstrap;
  topic.topic = "cairn.events";
  topic.partitions = shards;  // a shard is a partition
  topic.replicas = 1;
  try {
    create_kafka_topic(topic);
  } catch (const LogError& e) {
    run_broker_script(bin, {"stop", "--dir", broker_dir(dir)}, "/dev/null", log);
    throw std::runtime_error(std::string("cannot create the event log's topic: ") + e.what());
  }
  return "kafka:" + bootstrap + "/cairn.events";
}

// A librdkafka mock cluster (not durable: it lives as long as this cluster) with
// one partition per shard; returns the EventLog= value that points at it.
std::string start_kafka_mock(const std::string& bin, const std::string& dir, unsigned shards, unsigned timeout) {
  std::string bootstrap_file = dir + "/kafka.bootstrap";
  fs::remove(bootstrap_file);
  pid_t pid = spawn_daemon({bin + "/cairn-kafka-mock", "--topic", "cairn.events", "--partitions", std::to_string(shards),
                            "--bootstrap-file", bootstrap_file},
                           dir + "/kafka-mock.log");
  std::ofstream(mock_pid_path(dir)) << pid << "\n";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string bootstrap;
    if (std::ifstream(bootstrap_file) >> bootstrap && !bootstrap.empty()) return "kafka:" + bootstrap + "/cairn.events";
    if (waitpid(pid, nullptr, WNOHANG) == pid) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop_pids({pid});
  fs::remove(mock_pid_path(dir));
  throw std::runtime_error("the Kafka mock cluster did not start; see " + dir + "/kafka-mock.log");
}

int up(const ParsedArgs& args, const std::string& dir, std::ostream& out, std::ostream& err) {
  unsigned nodes = static_cast<unsigned>(parse_count("--nodes", args.get_or("nodes", "2")));
  bool simulated = args.has("sim-nodes");
  if (simulated) {
    if (args.has("nodes")) throw UsageError("cairn local up: --nodes or --sim-nodes, not both");
    nodes = static_cast<unsigned>(std::min<uint64_t>(parse_count("--sim-nodes", *args.get("sim-nodes")), 65536));
  }
  unsigned sim_processes = static_cast<unsigned>(parse_count("--sim-processes", args.get_or("sim-processes", "1")));
  if (!simulated && args.has("sim-processes")) throw UsageError("cairn local up: --sim-processes needs --sim-nodes");
  if (sim_processes == 0 || (simulated && sim_processes > nodes))
    throw UsageError("cairn local up: --sim-processes must be between 1 and the number of nodes");
  unsigned cpus = static_cast<unsigned>(parse_count("--cpus", args.get_or("cpus", "2")));
  unsigned memory = static_cast<unsigned>(parse_count("--memory", args.get_or("memory", "2000")));
  unsigned timeout = static_cast<unsigned>(parse_count("--timeout", args.get_or("timeout", "30")));
  unsigned shards = static_cast<unsigned>(parse_count("--shards", args.get_or("shards", "1")));
  unsigned controllers = static_cast<unsigned>(parse_count("--controllers", args.get_or("controllers", "1")));
  if (nodes == 0) throw UsageError("cairn local up: --nodes must be at least 1");
  if (shards == 0 || shards > kMaxShards)
    throw UsageError(fmt::format("cairn local up: --shards must be between 1 and {}", kMaxShards));
  if (nodes < shards) throw UsageError("cairn local up: --nodes must be at least --shards (a node per shard)");
  if (controllers == 0) throw UsageError("cairn local up: --controllers must be at least 1");
  for (pid_t pid : read_pids(dir))
    if (alive(pid)) throw UsageError("cairn local up: a cluster already runs in " + dir + " (cairn local down first)");
  {
    if (pid_t mock = read_pid(mock_pid_path(dir)); mock > 0 && alive(mock))
      throw UsageError("cairn local up: a Kafka mock still runs for " + dir + " (cairn local down first)");
    for (pid_t broker : broker_pids(dir))
      if (alive(broker))
        throw UsageError("cairn local up: a Kafka broker still runs for " + dir + " (cairn local down first)");
  }
  fs::create_directories(dir);
  std::string conf = dir + "/cairn.conf";
  std::string extra;  // appended lines, e.g. BurstBuffer=Pool=...
  if (auto path = args.get("extra-config")) {
    auto file = read_small_file(*path);
    if (!file.ok()) throw UsageError("cairn local up: cannot read --extra-config " + *path);
    extra = std::move(file.text);
  }
  uint16_t tcp_port = args.has("tcp") ? free_loopback_port() : 0;
  std::string bin = binary_dir();
  std::string event_log;
  if (args.has("kafka") + args.has("kafka-mock") + args.has("kafka-brokers") > 1)
    throw UsageError("cairn local up: one of --kafka, --kafka-mock, --kafka-brokers");
  if (auto brokers = args.get("kafka-brokers")) {
    event_log = "kafka:" + *brokers + "/cairn.events";
    std::ofstream(dir + "/kafka.bootstrap") << *brokers << "\n";
    std::ofstream(dir + "/kafka.backend") << "external\n";
  }
  if (args.has("kafka")) {
    std::string why;
    event_log = start_kafka_broker(bin, dir, shards, why);
    if (!event_log.empty()) {
      std::ofstream(dir + "/kafka.backend") << "broker\n";
      err << "cairn local up: the event log is on Apache Kafka's broker, " << event_log << " (data in "
          << broker_dir(dir) << ")\n";
    } else {
      err << "cairn local up: no Kafka broker here (" << why
          << "); the event log is on librdkafka's mock cluster, which keeps nothing after `cairn local down`\n";
    }
  }
  if (args.has("kafka-mock") || (args.has("kafka") && event_log.empty())) {
    event_log = start_kafka_mock(bin, dir, shards, timeout);
    std::ofstream(dir + "/kafka.backend") << "mock\n";
    if (args.has("kafka-mock")) err << "cairn local up: the event log is on librdkafka's mock cluster, " << event_log << "\n";
  }
  std::map<std::string, std::string> features;  // --feature n2=gpu,fast
  for (const auto& item : args.all("feature")) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("cairn local up: --feature takes NODE=FEATURE[,FEATURE]");
    features[item.substr(0, eq)] = item.substr(eq + 1);
  }
  std::map<std::string, std::string> gres;  // --gres n1=gpu:mi300x:4
  for (const auto& item : args.all("gres")) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("cairn local up: --gres takes NODE=GRES");
    gres[item.substr(0, eq)] = item.substr(eq + 1);
  }
  std::error_code no_file;
  fs::remove(dir + "/gres.conf", no_file);  // of an earlier cluster in this directory
  if (auto path = args.get("gres-conf")) {
    std::ifstream file(*path);
    if (!file) throw UsageError("cairn local up: cannot read --gres-conf " + *path);
    std::ofstream(dir + "/gres.conf") << file.rdbuf();
  }
  remove_spool(dir);  // of an earlier cluster in this directory
  std::string spool_base = make_spool_base(dir);
  // Several controllers of several shards on Kafka: a consumer group decides who writes what
  // (KafkaControllerGroup=, a session timeout of 6 s: a takeover a newcomer can watch), each
  // controller on its own socket; an --extra-config that names a group keeps its own.
  const bool group = !event_log.empty() && shards > 1 && controllers > 1;
  if (group && to_lower(extra).find("kafkacontrollergroup") == std::string::npos)
    extra += fmt::format("KafkaControllerGroup=cairn-local-controllers\nkafka.session.timeout.ms=6000\n");
  std::ofstream(conf) << local_cluster_config(dir, nodes, cpus, memory, tcp_port, event_log, features, spool_base,
                                              gres, shards)
                      << extra;
  // Several owners of the file log's shards: controller c (1-based) writes the shards k with
  // k mod owners == c-1; the controllers past them stand by, each for one owner's shards.
  // In a group, every controller is a member (started after the first, as owners are).
  const unsigned owners = group ? controllers : event_log.empty() && shards > 1 ? std::min(controllers, shards) : 1;
  auto share = [&](unsigned c) {
    std::string list;
    for (unsigned k = c - 1; k < shards; k += owners) list += (list.empty() ? "" : ",") + std::to_string(k);
    return list;
  };
  auto controller_args = [&](unsigned c) {
    std::vector<std::string> argv = {daemon_path(bin, "cairnctld"), "--conf", conf};
    if (group) {
      if (c > 1) argv.insert(argv.end(), {"--socket", fmt::format("{}/cairnctld-{}.sock", dir, c)});
      return argv;
    }
    if (owners == 1) {
      if (c > 1) argv.push_back("--standby");
      return argv;
    }
    unsigned owner = c <= owners ? c : (c - owners - 1) % owners + 1;
    if (c > owners) argv.push_back("--standby");
    argv.insert(argv.end(), {"--shards", share(owner)});
    // A standby listens where its owner did, once it took over.
    if (owner > 1) argv.insert(argv.end(), {"--socket", fmt::format("{}/cairnctld-{}.sock", dir, owner)});
    return argv;
  };
  std::vector<pid_t> pids;
  pids.push_back(spawn_daemon(controller_args(1), dir + "/cairnctld.log"));
  bool owners_started = owners == 1;
  // Simulated nodes: P processes, each a contiguous range of n1..nN.
  for (unsigned process = 0; simulated && process < sim_processes; ++process) {
    unsigned first = nodes * process / sim_processes + 1, last = nodes * (process + 1) / sim_processes;
    pids.push_back(spawn_daemon({daemon_path(bin, "cairnd"), "--simulate", "--conf", conf, "--nodes",
                                 fmt::format("n[{}-{}]", first, last)},
                                dir + fmt::format("/cairnd-sim{}.log", process + 1)));
  }
  for (unsigned n = 1; n <= nodes && !simulated; ++n) {
    std::string node = fmt::format("n{}", n);
    pids.push_back(spawn_daemon({daemon_path(bin, "cairnd"), "--conf", conf, "--node", node}, dir + "/cairnd-" + node + ".log"));
  }

  {
    std::ofstream file(dir + "/pids");
    for (pid_t pid : pids) file << pid << "\n";
  }
  auto config = load_config(conf);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  std::string last_error;
  while (std::chrono::steady_clock::now() < deadline) {
    for (pid_t pid : pids) {
      if (waitpid(pid, nullptr, WNOHANG) == pid) {
        stop_cluster(dir);
        err << "cairn local up: a daemon exited at start; see the logs in " << dir << "\n";
        return 1;
      }
    }
    try {
      ControllerClient client(config, "unix:" + config.controller_socket);  // the agents' way in, too
      auto snapshot = client.nodes();
      if (!owners_started) {
        // The other owners once the first one holds its shards (the log exists by then), after
        // the agents in DIR/pids; their nodes register once they run.
        owners_started = true;
        std::ofstream file(dir + "/pids", std::ios::app);
        for (unsigned c = 2; c <= owners; ++c) {
          pids.push_back(spawn_daemon(controller_args(c), fmt::format("{}/cairnctld-{}.log", dir, c)));
          file << pids.back() << "\n";
        }
      }
      size_t up_nodes = 0;
      for (const auto& node : snapshot.nodes) up_nodes += node.status == NodeStatus::up;
      if (up_nodes == nodes) {
        // Standbys once the first controller holds the log (else one of them could take it
        // first), and last in DIR/pids: the controller stays first and agent nN on line N+1.
        std::ofstream file(dir + "/pids", std::ios::app);
        for (unsigned c = owners + 1; c <= controllers; ++c)
          file << spawn_daemon(controller_args(c), fmt::format("{}/cairnctld-{}.log", dir, c)) << "\n";
        out << "export CAIRN_CONF=" << conf << "\n";
        return 0;
      }
    } catch (const std::exception& e) {
      last_error = e.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop_cluster(dir);
  err << "cairn local up: the cluster did not come up within " << timeout << " s (" << last_error << "); see "
      << dir << "/*.log\n";
  return 1;
}

int status(const std::string& dir, std::ostream& out) {
  auto pids = read_pids(dir);
  if (pid_t mock = read_pid(mock_pid_path(dir)); mock > 0) pids.push_back(mock);
  for (pid_t broker : broker_pids(dir)) pids.push_back(broker);
  int running = 0;
  for (pid_t pid : pids) running += alive(pid);
  out << fmt::format("{} of {} processes running in {}\n", running, pids.size(), dir);
  return running == static_cast<int>(pids.size()) && running > 0 ? 0 : 1;
}

}  // namespace

std::string local_cluster_config(const std::string& dir, unsigned nodes, unsigned cpus, unsigned memory_mb,
                                 uint16_t tcp_port, const std::string& event_log,
                                 const std::map<std::string, std::string>& features, const std::string& spool_base,
                                 const std::map<std::string, std::string>& gres, unsigned shards) {
  // One partition per shard, the nodes dealt out in turn; with one shard, `debug` holds them all.
  std::string partition_lines = "PartitionName=debug Nodes=ALL Default=YES MaxTime=UNLIMITED\n";
  if (shards > 1) {
    partition_lines = fmt::format("Shards={}\n", shards);
    for (unsigned shard = 0; shard < shards; ++shard) {
      std::string members;
      for (unsigned n = shard + 1; n <= nodes; n += shards) members += (members.empty() ? "n" : ",n") + std::to_string(n);
      partition_lines += fmt::format("PartitionName=p{0} Nodes={1} Shard={0}{2} MaxTime=UNLIMITED\n", shard, members,
                                     shard == 0 ? " Default=YES" : "");
    }
  }
  std::string node_lines = fmt::format("NodeName=n[1-{}] CPUs={} RealMemory={}\n", nodes, cpus, memory_mb);
  if (!features.empty() || !gres.empty()) {
    node_lines.clear();
    std::vector<std::string> gres_types;
    for (const auto& [node, text] : gres)
      for (const auto& item : parse_node_gres(text).value_or(std::vector<GresCount>{}))
        if (std::find(gres_types.begin(), gres_types.end(), item.name) == gres_types.end()) gres_types.push_back(item.name);
    for (size_t i = 0; i < gres_types.size(); ++i) node_lines += (i == 0 ? "GresTypes=" : ",") + gres_types[i];
    if (!gres_types.empty()) node_lines += "\n";
    for (unsigned n = 1; n <= nodes; ++n) {
      std::string name = "n" + std::to_string(n);
      auto it = features.find(name);
      auto held = gres.find(name);
      node_lines += fmt::format("NodeName={} CPUs={} RealMemory={}{}{}\n", name, cpus, memory_mb,
                                it == features.end() ? std::string() : " Feature=" + it->second,
                                held == gres.end() ? std::string() : " Gres=" + held->second);
    }
  }
  return fmt::format(
      "# A local Cairn cluster written by `cairn local up`.\n"
      "ClusterName=local\n"
      "StateSaveLocation={0}/state\n"
      "EventLog={4}\n"
      "ControllerSocket={0}/cairnctld.sock\n"
      "ControllerAddr=127.0.0.1\n"
      "ControllerPort={5}\n"
      "KillWait=2\n"
      "MinJobAge=300\n"
      "HeartbeatInterval=1\n"
      "NodeTimeout=5\n"
      "ReconcileTimeout=10\n"
      "{7}"
      "{6}"
      "{8}",
      dir, nodes, cpus, memory_mb, event_log.empty() ? "file:" + dir + "/state/log" : event_log, tcp_port, node_lines,
      spool_base.empty() ? std::string() : "SlurmdSpoolDir=" + spool_base + "/%n\n", partition_lines);
}

int run_local_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  try {
    if (argv.empty()) throw UsageError(kUsage);
    auto args = parse_options("cairn local", kOptions, {argv.begin() + 1, argv.end()});
    if (args.has("help")) {
      out << kUsage;
      return 0;
    }
    auto dir_arg = args.get("dir");
    if (!dir_arg) throw UsageError("cairn local: --dir DIR is required\n" + std::string(kUsage));
    std::string dir = fs::absolute(*dir_arg).lexically_normal().string();
    if (argv[0] == "up") return up(args, dir, out, err);
    if (argv[0] == "down") {
      stop_cluster(dir);
      return 0;
    }
    if (argv[0] == "status") return status(dir, out);
    throw UsageError("cairn local: unknown command '" + argv[0] + "'\n" + kUsage);
  } catch (const UsageError& e) {
    err << e.what() << (std::string(e.what()).ends_with("\n") ? "" : "\n");
    return 2;
  } catch (const std::exception& e) {
    err << "cairn local: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cairn
