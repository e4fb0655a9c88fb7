// A canonical hash of ClusterState: `cairn log verify` and the replay tests
// compare digests of independent replays.
#include <string_view>

#include "events/cluster_state.hpp"

namespace cairn {
namespace {

// FNV-1a over a canonical byte stream; lengths are hashed so fields cannot run into each other.
class Hasher {
 public:
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) hash_ = (hash_ ^ p[i]) * 1099511628211ull;
  }
  template <typename T>
    requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void add(T value) { bytes(&value, sizeof value); }
  void add(std::string_view text) {
    add(text.size());
    bytes(text.data(), text.size());
  }
  void add(const std::string& text) { add(std::string_view(text)); }
  template <typename T>
  void add(const std::vector<T>& items) {
    add(items.size());
    for (const auto& item : items) add(item);
  }
  void add(const StageRequest& stage) { add(stage.source), add(stage.destination); }
  void add(const NodeShare& share) { add(share.node), add(share.cpus), add(share.mem_mb); }
  // Hashed only when measured, so that states without usage keep their digests.
  void add(const ResourceUsage& u) {
    if (!u.measured) return;
    add(u.tasks), add(u.max_rss_bytes), add(u.max_rss_node), add(u.max_rss_task), add(u.total_rss_bytes);
    add(u.user_cpu_us), add(u.system_cpu_us), add(u.min_cpu_us), add(u.min_cpu_node), add(u.min_cpu_task);
    add(u.max_read_bytes), add(u.max_read_node), add(u.max_read_task), add(u.total_read_bytes);
    add(u.max_write_bytes), add(u.max_write_node), add(u.max_write_task), add(u.total_write_bytes);
    add(u.cpu_pressure_us), add(u.memory_pressure_us), add(u.io_pressure_us);
    add(u.max_cpu_us), add(u.max_cpu_node), add(u.max_cpu_task);
    if (u.max_vm_bytes || u.max_pages)  // live samples only; recorded ends have none
      add(u.max_vm_bytes), add(u.max_vm_node), add(u.max_vm_task), add(u.total_vm_bytes), add(u.max_pages),
          add(u.max_pages_node), add(u.max_pages_task), add(u.total_pages);
  }
  void add(const JobRun& run) {
    add(run.restart), add(run.start_us), add(run.end_us), add(run.state), add(run.exit_code);
    add(run.exit_signal), add(run.suspended_us), add(run.nodes), add(run.batch_usage);
  }
  void add(const JobSpec& s) {
    add(s.name), add(s.partition), add(s.user_name), add(s.uid), add(s.gid), add(s.account);
    add(s.num_nodes), add(s.num_tasks), add(s.cpus_per_task), add(s.mem_per_node_mb), add(s.mem_per_cpu_mb);
    add(s.time_limit_sec), add(s.script), add(s.command), add(s.work_dir), add(s.stdout_pattern);
    add(s.stderr_pattern), add(s.open_mode), add(s.environment), add(s.requeue), add(s.signal);
    add(s.signal_seconds_before), add(s.signal_batch_only), add(s.begin_time_us), add(s.hold_at_submit);
    add(s.nice), add(s.burst_buffer.pool), add(s.burst_buffer.capacity_bytes), add(s.burst_buffer.stage_in);
    add(s.burst_buffer.stage_out), add(s.resubmit.on_states), add(s.resubmit.on_exit_codes);
    add(s.resubmit.max_restarts), add(s.resubmit.delay_sec), add(s.submit_host), add(s.dependency);
    add(s.array_spec), add(s.exclusive), add(s.comment), add(s.kill_on_invalid_dep);
    // Added with accounts: hashed only when set, so that older specs keep their digests.
    if (!s.features.empty() || !s.req_nodes.empty() || !s.exc_nodes.empty() || !s.mail_type.empty() ||
        !s.mail_user.empty())
      add(s.features), add(s.req_nodes), add(s.exc_nodes), add(s.mail_type), add(s.mail_user);
    if (s.interactive) add(s.interactive);
    // Added with the option sweep: hashed only when set, like the fields above.
    if (!s.licenses.empty() || !s.reservation.empty() || !s.wckey.empty() || s.ntasks_per_node != 0 ||
        s.tmp_disk_mb != 0 || s.task_layout != TaskLayout{}) {
      const TaskLayout& t = s.task_layout;
      add(s.licenses), add(s.reservation), add(s.wckey), add(s.ntasks_per_node), add(s.tmp_disk_mb);
      add(t.hint), add(t.distribution), add(t.mem_bind), add(t.threads_per_core), add(t.ntasks_per_core);
      add(t.ntasks_per_socket), add(t.sockets_per_node), add(t.cores_per_socket);
    }
    if (!s.stdin_pattern.empty()) add(s.stdin_pattern);  // hashed only when set, like the fields above
    if (s.deadline_us != 0) add(s.deadline_us);            // likewise
    if (!s.qos.empty()) add(s.qos);                        // likewise
  }
  void add(const StepRecord& s) {
    add(s.id), add(s.restart), add(s.name), add(s.nodes), add(s.num_tasks), add(s.cpus_per_task);
    add(s.start_us), add(s.end_us), add(s.state), add(s.exit_code), add(s.exit_signal), add(s.nodes_left);
    add(s.cancel_requested), add(s.oom_kills), add(s.message), add(s.usage);
  }
  void add(const JobRecord& j) {
    add(j.id), add(j.spec.full()), add(j.state), add(j.reason), add(j.message), add(j.time_limit_sec);
    add(j.final_state), add(j.submit_us), add(j.eligible_us), add(j.start_us), add(j.end_us);
    add(j.suspended_since_us), add(j.suspended_us), add(j.last_suspend_us), add(j.pre_suspend_run_us);
    add(j.hold), add(j.cancel_requested), add(j.time_limit_reached), add(j.requeue_requested);
    add(j.requeue_hold), add(j.oom_detected), add(j.oom_peak_bytes), add(j.oom_limit_bytes), add(j.oom_node);
    add(j.exit_code), add(j.exit_signal), add(j.restarts), add(j.allocation), add(j.batch_host);
    add(j.bb_phase), add(j.bb_reserved_bytes), add(j.bb_pool), add(j.bb_staged_bytes),
        add(j.bb_staged_out_bytes), add(j.bb_node), add(j.bb_stage_out_started), add(j.runs);
    add(j.last_offset);
    if (j.array.array_job_id != 0) {  // hashed only for arrays: digests of other jobs stay as they were
      const auto& a = j.array;
      add(a.array_job_id), add(a.task_id), add(a.task_count), add(a.task_min), add(a.task_max), add(a.throttle);
      add(j.array_pending.size());
      for (const auto& range : j.array_pending) add(range.first), add(range.last);
    }
    if (!j.steps.empty() || j.next_step_id != 0) add(j.steps), add(j.next_step_id);  // as for arrays
    if (j.priority != 0 || j.rank_us != 0) add(j.priority), add(j.rank_us);              // as for arrays

    if (j.cancelled_by_uid != kNotCancelledByUid) add(j.cancelled_by_uid);           // as for arrays
    for (const auto& entry : j.cpu_ids) add(entry.node), add(entry.cpu_ids);          // as for arrays
    add(j.batch_usage.get());
    if (j.preempted_by != 0 || j.preempt_action != PreemptAction::none)  // as for arrays
      add(j.preempted_by), add(j.preempt_action), add(j.preempt_grace_sec), add(j.preempt_us);
  }
  void add(const NodeRecord& n) {
    add(n.name), add(n.cpus), add(n.mem_mb), add(n.partitions), add(n.status), add(n.reason);
    add(n.memory_enforced), add(n.cgroup_backend), add(n.alloc_cpus), add(n.alloc_mem_mb);
    add(n.registered_us), add(n.changed_us);
    if (!n.agent_instance.empty()) add(n.agent_instance);  // as for arrays: older states keep their digests
    if (n.drain || n.fail || n.admin_down || n.reason_us != 0)
      add(n.drain), add(n.fail), add(n.admin_down), add(n.reason_user), add(n.reason_uid), add(n.reason_us);
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

}  // namespace

uint64_t state_digest(const ClusterState& state) {
  Hasher h;
  h.add(state.jobs.size());
  for (const auto& [id, job] : state.jobs) h.add(job);
  h.add(state.nodes.size());
  for (const auto& [name, node] : state.nodes) h.add(node);
  h.add(state.pools.size());
  for (const auto& [name, pool] : state.pools) {
    h.add(name), h.add(pool.reserved_bytes), h.add(pool.reserved_by_job.size());
    for (const auto& [job, bytes] : pool.reserved_by_job) h.add(job), h.add(bytes);
  }
  h.add(state.shards.size());
  for (const auto& [shard, cursor] : state.shards)
    h.add(shard), h.add(cursor.epoch), h.add(cursor.next_job_id), h.add(cursor.applied);
  // Accounts are hashed only when there are some: states from before them keep their digests.
  const auto& accounts = state.accounts;
  if (!accounts.accounts.empty() || !accounts.users.empty()) {
    h.add(accounts.accounts.size());
    for (const auto& [name, account] : accounts.accounts)
      h.add(name), h.add(account.description), h.add(account.organization), h.add(account.parent);
    h.add(accounts.users.size());
    for (const auto& [name, user] : accounts.users) {
      h.add(name), h.add(user.default_account), h.add(user.accounts.size());
      for (const auto& account : user.accounts) h.add(account);
    }
  }
  // QOS and association QOS, likewise only when they differ from a fresh cluster's.
  bool association_qos = false;
  for (const auto& [name, account] : accounts.accounts) association_qos |= !account.qos.empty() || !account.default_qos.empty();
  for (const auto& [name, user] : accounts.users) association_qos |= !user.qos.empty() || !user.default_qos.empty();
  if (association_qos || accounts.qos != initial_qos_table()) {
    for (const auto& [name, account] : accounts.accounts) h.add(name), h.add(account.qos), h.add(account.default_qos);
    for (const auto& [name, user] : accounts.users) h.add(name), h.add(user.qos), h.add(user.default_qos);
    h.add(accounts.qos.size());
    for (const auto& [name, q] : accounts.qos) {
      h.add(name), h.add(q.id), h.add(q.description), h.add(q.priority), h.add(q.preempt), h.add(q.preempt_mode);
      h.add(q.flags), h.add(q.max_wall_min.value_or(0)), h.add(q.max_wall_min.has_value());
      h.add(tres_limit_text(q.max_tres_per_user)), h.add(tres_limit_text(q.grp_tres));
      h.add(q.max_jobs_per_user.value_or(0)), h.add(q.max_jobs_per_user.has_value());
      h.add(q.max_submit_jobs_per_user.value_or(0)), h.add(q.max_submit_jobs_per_user.has_value());
    }
  }
  // Likewise the partitions changed at runtime.
  const auto& table = state.partition_table;
  if (!table.changed.empty() || table.default_name) {
    h.add(table.changed.size());
    for (const auto& [p, deleted] : table.changed) {
      h.add(p.name), h.add(p.nodes), h.add(static_cast<uint8_t>(p.state)), h.add(p.is_default), h.add(p.max_time_sec);
      h.add(p.default_time_sec), h.add(p.max_nodes), h.add(p.min_nodes), h.add(p.priority_tier);
      h.add(p.allow_accounts), h.add(p.deny_accounts), h.add(p.allow_groups);
      h.add(p.def_mem_per_cpu_mb), h.add(p.def_mem_per_node_mb), h.add(deleted);
      // Only when scontrol set them: digests of logs without them stay as they were.
      if (p.runtime_preempt_mode) h.add(preempt_mode_text(*p.runtime_preempt_mode));
      if (p.runtime_grace_time_sec) h.add(uint8_t{1}), h.add(*p.runtime_grace_time_sec);
    }
    h.add(table.default_name.has_value()), h.add(table.default_name.value_or(""));
  }
  // Reservations likewise.
  if (!state.reservations.empty() || state.reservations_created != 0) {
    h.add(state.reservations_created), h.add(state.reservations.size());
    for (const auto& [name, r] : state.reservations) {
      h.add(name), h.add(r.id), h.add(r.start_us), h.add(r.end_us), h.add(r.cpus), h.add(r.partition), h.add(r.flags);
      h.add(r.nodes.size());
      for (const auto& node : r.nodes) h.add(node);
      h.add(r.users.size());
      for (const auto& user : r.users) h.add(user);
      h.add(r.accounts.size());
      for (const auto& account : r.accounts) h.add(account);
    }
  }
  h.add(state.anomaly_count), h.add(state.skipped_unknown), h.add(state.skipped_stale), h.add(state.purged_jobs);
  for (const auto& anomaly : state.anomalies) h.add(anomaly.offset), h.add(anomaly.text);
  if (!state.config_text.empty()) h.add(state.config_text);  // digests of logs without one unchanged
  return h.value();
}

}  // namespace cairn
