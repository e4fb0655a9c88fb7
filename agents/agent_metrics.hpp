// cairnd's Prometheus metrics (AgentMetricsPort= or --metrics-port; docs/metrics.md): whether it
// is registered with the controller, the orders it served, the reports it sent.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace cairn {

class AgentMetrics {
 public:
  explicit AgentMetrics(const std::string& node);
  ~AgentMetrics();
  AgentMetrics(const AgentMetrics&) = delete;
  AgentMetrics& operator=(const AgentMetrics&) = delete;

  // Serves /metrics on address:port; throws std::runtime_error naming `key` when it cannot.
  void serve(const std::string& address, uint16_t port, std::string_view key);

  void registered(bool yes);
  void order(std::string_view method, bool ok);
  // A job run's end, reported to the controller, with the OOM kills its memory cgroup counted.
  void job_ended(uint64_t oom_kills);

  std::string exposition() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn
