#include "events/log/kafka_group.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "events/log/event_log.hpp"

namespace cairn {

struct KafkaControllerGroup::State {
  std::string topic;
  std::string where;  // "KafkaControllerGroup=NAME"
  rd_kafka_t* handle = nullptr;
  mutable std::mutex mutex;
  std::condition_variable changed;
  Membership membership;
  bool assigned_once = false;
  std::string fatal;  // the group's consumer failed for good (another process took its instance id...)
  std::mutex listener_mutex;  // held while the listener runs
  Listener listener;          // under listener_mutex
  std::atomic<bool> stopping{false};
  std::thread poller;

  std::vector<uint32_t> partitions_of(const rd_kafka_topic_partition_list_t* list) const {
    std::vector<uint32_t> partitions;
    for (int i = 0; list && i < list->cnt; ++i)
      if (topic == list->elems[i].topic && list->elems[i].partition >= 0)
        partitions.push_back(static_cast<uint32_t>(list->elems[i].partition));
    std::sort(partitions.begin(), partitions.end());
    return partitions;
  }

  void tell(Change change, const std::vector<uint32_t>& partitions) {
    std::lock_guard calling(listener_mutex);  // listen() waits for a call under way
    if (listener) listener(change, partitions);
  }

  void rebalanced(rd_kafka_resp_err_t error, rd_kafka_topic_partition_list_t* list) {
    bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(handle), "COOPERATIVE") == 0;
    auto partitions = partitions_of(list);
    if (error == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      if (cooperative) {
        if (rd_kafka_error_t* failed = rd_kafka_incremental_assign(handle, list)) {
          spdlog::warn("{}: cannot take the assignment: {}", where, rd_kafka_error_string(failed));
          rd_kafka_error_destroy(failed);
        }
      } else {
        rd_kafka_assign(handle, list);
      }
      // The group only decides ownership: the controller's readers read the shards.
      if (list && list->cnt > 0) rd_kafka_pause_partitions(handle, list);
      char* member = rd_kafka_memberid(handle);
      Membership now;
      {
        std::lock_guard lock(mutex);
        auto& assigned = membership.assigned;
        if (!cooperative) assigned.clear();
        for (uint32_t partition : partitions)
          if (std::find(assigned.begin(), assigned.end(), partition) == assigned.end()) assigned.push_back(partition);
        std::sort(assigned.begin(), assigned.end());
        if (member) membership.member_id = member;
        assigned_once = true;
        now = membership;
      }
      if (member) rd_kafka_mem_free(handle, member);
      changed.notify_all();
      spdlog::info("{}: assigned partitions [{}], now [{}] (generation {}, member {})", where,
                   fmt::join(partitions, ","), fmt::join(now.assigned, ","), now.generation, now.member_id);
      tell(Change::assigned, partitions);
      return;
    }
    bool lost = error != RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS || rd_kafka_assignment_lost(handle);
    spdlog::warn("{}: partitions [{}] {}", where, fmt::join(partitions, ","),
                 lost ? "lost (this member's session expired: the group gave them to others)" : "revoked");
    tell(lost ? Change::lost : Change::revoked, partitions);  // before they are given up
    if (cooperative && error == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
      if (rd_kafka_error_t* failed = rd_kafka_incremental_unassign(handle, list)) rd_kafka_error_destroy(failed);
    } else {
      rd_kafka_assign(handle, nullptr);
    }
    std::lock_guard lock(mutex);
    std::erase_if(membership.assigned, [&](uint32_t partition) {
      return std::find(partitions.begin(), partitions.end(), partition) != partitions.end();
    });
  }
};

namespace {

void rebalance_callback(rd_kafka_t*, rd_kafka_resp_err_t error, rd_kafka_topic_partition_list_t* list, void* opaque) {
  static_cast<KafkaControllerGroup::State*>(opaque)->rebalanced(error, list);
}

// The generation of each join comes from librdkafka's cgrp debug line (2.0.2 has no accessor).
void log_callback(const rd_kafka_t* handle, int level, const char*, const char* text) {
  auto* state = static_cast<KafkaControllerGroup::State*>(rd_kafka_opaque(handle));
  if (auto generation = join_group_generation(text)) {
    std::lock_guard lock(state->mutex);
    if (*generation >= 0) state->membership.generation = *generation;  // -1: a join that failed
  } else if (level <= 4) {
    spdlog::debug("{}: librdkafka: {}", state->where, text);
  }
}

void error_callback(rd_kafka_t* handle, int error, const char* reason, void* opaque) {
  auto* state = static_cast<KafkaControllerGroup::State*>(opaque);
  if (error != RD_KAFKA_RESP_ERR__FATAL) return spdlog::debug("{}: {}", state->where, reason);
  char text[512] = "";
  rd_kafka_fatal_error(handle, text, sizeof text);
  std::vector<uint32_t> held;
  {
    std::lock_guard lock(state->mutex);
    state->fatal = text;
    held = state->membership.assigned;
  }
  state->changed.notify_all();
  spdlog::critical("{}: the group's consumer failed: {}", state->where, text);
  state->tell(KafkaControllerGroup::Change::lost, held);
}

}  // namespace

KafkaControllerGroup::KafkaControllerGroup(const KafkaSpec& spec, const std::map<std::string, std::string>& properties,
                                           const std::string& group, const std::string& instance_id)
    : state_(std::make_unique<State>()) {
  state_->topic = spec.topic;
  state_->where = "KafkaControllerGroup=" + group;
  state_->membership.group = group;
  state_->membership.instance_id = instance_id;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  auto set = [&](const std::string& key, const std::string& value) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw LogError(fmt::format("{}: bad Kafka property {}={}: {}", state_->where, key, value, error));
    }
  };
  set("bootstrap.servers", spec.brokers);
  for (const auto& [key, value] : controller_group_properties(properties, group, instance_id)) set(key, value);
  set("debug", "cgrp");
  set("log_level", "7");
  rd_kafka_conf_set_opaque(conf, state_.get());
  rd_kafka_conf_set_rebalance_cb(conf, rebalance_callback);
  rd_kafka_conf_set_log_cb(conf, log_callback);
  rd_kafka_conf_set_error_cb(conf, error_callback);
  state_->handle = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (!state_->handle) {
    rd_kafka_conf_destroy(conf);
    throw LogError(fmt::format("{}: cannot create the group's consumer: {}", state_->where, error));
  }
  rd_kafka_poll_set_consumer(state_->handle);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, spec.topic.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t subscribed = rd_kafka_subscribe(state_->handle, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (subscribed) {
    rd_kafka_destroy(state_->handle);
    throw LogError(fmt::format("{}: cannot subscribe to topic {}: {}", state_->where, spec.topic,
                               rd_kafka_err2str(subscribed)));
  }
  State* state = state_.get();
  state_->poller = std::thread([state] {
    // Serves the rebalances; a message fetched before its partition was paused is dropped.
    while (!state->stopping)
      if (rd_kafka_message_t* message = rd_kafka_consumer_poll(state->handle, 100)) rd_kafka_message_destroy(message);
  });
}

KafkaControllerGroup::~KafkaControllerGroup() {
  state_->stopping = true;
  if (state_->poller.joinable()) state_->poller.join();
  listen(nullptr);
  // No consumer close: it would revoke (and, without an instance id, leave); a restart in place
  // rejoins with the same group.instance.id and gets the same partitions back.
  rd_kafka_destroy_flags(state_->handle, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

std::vector<uint32_t> KafkaControllerGroup::wait_for_assignment(std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  if (!state_->changed.wait_for(lock, timeout, [&] { return state_->assigned_once || !state_->fatal.empty(); }))
    throw LogUnavailable(fmt::format("{}: the group assigned this controller ({}) no partitions of topic {} within {} "
                                     "s (no broker answers, or the group's coordinator is not available)",
                                     state_->where, state_->membership.instance_id, state_->topic,
                                     timeout.count() / 1000));
  if (!state_->fatal.empty()) throw LogError(fmt::format("{}: {}", state_->where, state_->fatal));
  return state_->membership.assigned;
}

std::vector<uint32_t> KafkaControllerGroup::listen(Listener listener) {
  std::lock_guard calling(state_->listener_mutex);
  state_->listener = std::move(listener);
  std::lock_guard lock(state_->mutex);
  return state_->membership.assigned;
}

void KafkaControllerGroup::stop_joining() {
  if (rd_kafka_resp_err_t error = rd_kafka_unsubscribe(state_->handle))
    spdlog::warn("{}: cannot unsubscribe: {}", state_->where, rd_kafka_err2str(error));
}

KafkaControllerGroup::Membership KafkaControllerGroup::membership() const {
  std::lock_guard lock(state_->mutex);
  return state_->membership;
}

}  // namespace cairn
