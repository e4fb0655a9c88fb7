// `cairn local up|down|status --dir DIR`: a whole cluster (cairnctld and N
// cairnd) on this machine, for newcomers, the demo and integration tests;
// with --kafka its event log is a topic of a Kafka mock cluster (cairn-kafka-mock).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace cairn {

int run_local_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The cairn.conf of a local cluster (pure, for tests). tcp_port 0: the controller listens on its
// Unix socket only; otherwise also on 127.0.0.1:tcp_port. An empty event_log: the file log in
// DIR/state/log.
// `features` gives nodes a Feature= ("n2" -> "gpu,fast"); the nodes are then written one per line.
// A `spool_base` puts the agents' spool dirs there (SlurmdSpoolDir=<base>/%n).
// `gres` gives nodes a Gres= ("n1" -> "gpu:mi300x:4"), one per line too, and GresTypes= their names.
// `shards` > 1: Shards=, and partitions p0..p<shards-1>, one per shard, the nodes dealt out in turn.
std::string local_cluster_config(const std::string& dir, unsigned nodes, unsigned cpus, unsigned memory_mb,
                                 uint16_t tcp_port = 0, const std::string& event_log = {},
                                 const std::map<std::string, std::string>& features = {},
                                 const std::string& spool_base = {},
                                 const std::map<std::string, std::string>& gres = {}, unsigned shards = 1);

}  // namespace cairn
