#include "cli/cluster_history.hpp"

#include "events/read_model.hpp"
#include "events/snapshot_files.hpp"
#include "cli/controller_client.hpp"
#include "cli/log_access.hpp"
#include "common/logged_config.hpp"
#include "common/option_parser.hpp"
#include "common/slurm_time.hpp"
#include "events/replay.hpp"
#include "events/shard_replay.hpp"

#include <chrono>

namespace cairn {

ClusterHistory::ClusterHistory(const ClusterConfig& config, const EventLog& log, int64_t at_us)
    : config_(config), at_us_(at_us) {
  if (log.partitions() > 1) {
    // Several shards (Shards=): merged as their controller folded them; they have no snapshots.
    std::vector<uint64_t> from(log.partitions(), 0);
    replay_shards_in_time_order(log, from, state_, at_us);
  } else {
    // Start from the newest snapshot of no later moment where one can be read (a cache: none is fine).
    uint64_t from = 0;
    auto snapshot =
        load_newest_snapshot(snapshot_dir(config), 0, {log.end_offset(0), at_us}, [](const std::string&) {});
    if (snapshot) {
      state_ = std::move(snapshot->state);
      from = snapshot->next_offset;
    }
    replay_until_time(log, 0, from, at_us, state_);
  }
  // The configuration in force then: the log's last ConfigApplied (reconfigure), else the file.
  if (!state_.config_text.empty()) {
    try {
      logged_config_ = parse_logged_config(state_.config_text, "the logged configuration");
      if (!logged_gres_conf(state_.config_text)) {  // recorded before gres.conf was: the file's
        logged_config_->gres_conf = config_.gres_conf;
        logged_config_->gres_conf_source = config_.gres_conf_source;
      }
    } catch (const ConfigError&) {
      // Accepted by the controller when logged: a newer reader's grammar only; the file stands in.
    }
  }
  const ClusterConfig& in_force = this->config();
  auto features = node_feature_map(in_force);
  auto gres = node_gres_map(in_force);
  auto partitions = effective_partitions(partition_policies(in_force), state_.partition_table);
  reasons_ = schedule({&state_, partitions, pool_policies(in_force), at_us,
                       in_force.kill_invalid_depend, &features, nullptr, nullptr, &gres})
                 .pending_reasons;
}

JobsAnswer ClusterHistory::jobs(const JobQuery& query) {
  return read_all_pages(query, [this](const JobQuery& page) {
    return select_jobs(state_, reasons_, page, at_us_, config().min_job_age_sec);
  });
}

// The partitions in force then: the configured ones as the log had changed them by then.
NodesAnswer ClusterHistory::nodes() {
  return nodes_answer(state_, config(), effective_partitions(partition_policies(config()), state_.partition_table),
                      at_us_);
}

PoolsAnswer ClusterHistory::burst_buffers() { return {pool_usage(state_, pool_policies(config())), at_us_}; }

namespace {

// Owns the log the history was read from.
class LoggedHistory final : public ClusterQueries {
 public:
  LoggedHistory(const ClusterConfig& config, int64_t at_us)
      : log_(open_log_read_only(config)), history_(config, *log_, at_us) {}
  JobsAnswer jobs(const JobQuery& query) override { return history_.jobs(query); }
  NodesAnswer nodes() override { return history_.nodes(); }
  PoolsAnswer burst_buffers() override { return history_.burst_buffers(); }
  std::optional<std::string> logged_config_text() override { return history_.state().config_text; }
  QosTable qos_table() override { return history_.qos_table(); }

 private:
  std::unique_ptr<EventLog> log_;
  ClusterHistory history_;
};

}  // namespace

JobsAnswer read_all_pages(const JobQuery& query, const std::function<JobsAnswer(const JobQuery&)>& page_of) {
  JobsAnswer all;
  JobQuery page = query;
  // Every page is read anyway: the largest pages (still within kJobPageBytes) take the fewest
  // round trips.
  if (page.page_size == 0) page.page_size = kMaxJobPage;
  for (;;) {
    JobsAnswer answer = page_of(page);
    all.now_us = answer.now_us;
    all.named_found = answer.named_found;
    std::move(answer.jobs.begin(), answer.jobs.end(), std::back_inserter(all.jobs));
    if (!answer.more) return all;
    page.after_job_id = answer.next_after_job_id;
  }
}

std::unique_ptr<ClusterQueries> open_cluster_queries(const ClusterConfig& config, const std::optional<std::string>& at,
                                                     const std::string& command) {
  if (!at) return std::make_unique<ControllerClient>(config);
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
  auto when = parse_begin_time(*at, now.count());
  if (!when) throw UsageError(command + ": error: Invalid time specification for --at: " + *at);
  return std::make_unique<LoggedHistory>(config, *when * 1'000'000 + 999'999);
}

}  // namespace cairn
