// KafkaControllerGroup=: which shards a controller writes, decided by a Kafka consumer group.
// The controller is a static member (group.instance.id: controller_group_instance_id) of the
// group, subscribed to the event log's topic with cooperative-sticky rebalancing; the group's
// assignment of the topic's partitions (one per shard) is its ownership. The member only takes
// part in the assignment: each assigned partition is paused at once (nothing is fetched), no
// offset is committed, and the controller's own readers read every shard. docs/decisions.md,
// "Ownership by a consumer group".
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "events/log/kafka_spec.hpp"

namespace cairn {

class EventLog;

// This process no longer writes `partition` of a Kafka log (KafkaControllerGroup= revoked it): a
// batch being written ends first, then every append to it fails, giving `why`. Returns once
// nothing more of this process can become durable in it. Nothing for other logs.
void relinquish_kafka_partition(EventLog& log, uint32_t partition, const std::string& why);

class KafkaControllerGroup {
 public:
  enum class Change {
    assigned,  // partitions added to this member's assignment
    revoked,   // partitions taken away in a rebalance: still this member's until the listener returns
    lost,      // the group gave them away without asking (this member's session expired): a zombie
  };
  // Called on the group's own thread, from inside the rebalance: for `revoked` and `lost`,
  // stop writing those shards before returning.
  using Listener = std::function<void(Change, const std::vector<uint32_t>& partitions)>;

  struct Membership {
    std::string group;
    std::string instance_id;
    std::string member_id;  // empty before the first join
    int32_t generation = -1;  // the group's generation of the last join; -1: not known
    std::vector<uint32_t> assigned;
  };

  // Joins GROUP on the topic of `spec` with librdkafka `properties` (kafka.*); throws LogError
  // on a property librdkafka refuses.
  KafkaControllerGroup(const KafkaSpec& spec, const std::map<std::string, std::string>& properties,
                       const std::string& group, const std::string& instance_id);
  ~KafkaControllerGroup();  // no LeaveGroup: a static member's shards stay its own until its session expires
  KafkaControllerGroup(const KafkaControllerGroup&) = delete;
  KafkaControllerGroup& operator=(const KafkaControllerGroup&) = delete;

  // The first assignment this member received (possibly empty: a read replica). Throws
  // LogUnavailable when the group gave none within `timeout`, naming the group and why.
  std::vector<uint32_t> wait_for_assignment(std::chrono::milliseconds timeout);
  // From now on, changes go to `listener` (nullptr: nowhere; returns once a call under way ended);
  // returns the assignment as it is then.
  std::vector<uint32_t> listen(Listener listener);
  Membership membership() const;
  // No more joins: a fenced controller (its assignment lost) leaves the group's rebalances to
  // the others rather than rejoin and be given shards it will not write. From the listener too.
  void stop_joining();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace cairn
