#include "agents/agent_metrics.hpp"

#include <fmt/format.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace cairn {

struct AgentMetrics::Impl {
  explicit Impl(const std::string& node_name) : node(node_name) {}
  std::string node;
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Gauge& registered = prometheus::BuildGauge()
                                      .Name("cairnd_controller_registered")
                                      .Help("1 while the agent is registered with the controller, else 0")
                                      .Register(*registry)
                                      .Add({{"node", node}});
  prometheus::Family<prometheus::Counter>& orders =
      prometheus::BuildCounter()
          .Name("cairnd_orders_total")
          .Help("Orders of the controller the agent served (launch, suspend, terminate...), by method and result")
          .Register(*registry);
  prometheus::Counter& job_ends = prometheus::BuildCounter()
                                      .Name("cairnd_job_ends_total")
                                      .Help("Ends of job runs the agent reported")
                                      .Register(*registry)
                                      .Add({{"node", node}});
  prometheus::Counter& oom_kills = prometheus::BuildCounter()
                                       .Name("cairnd_oom_kills_total")
                                       .Help("OOM kills in the memory cgroups of the job runs whose end the agent reported")
                                       .Register(*registry)
                                       .Add({{"node", node}});
  std::mutex mutex;
  std::map<std::pair<std::string, bool>, prometheus::Counter*> order_counters;
  std::unique_ptr<prometheus::Exposer> exposer;
};

AgentMetrics::AgentMetrics(const std::string& node) : impl_(std::make_unique<Impl>(node)) {}
AgentMetrics::~AgentMetrics() = default;

void AgentMetrics::serve(const std::string& address, uint16_t port, std::string_view key) {
  std::string where = fmt::format("{}:{}", address, port);
  try {
    impl_->exposer = std::make_unique<prometheus::Exposer>(where, 1);
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("{}={}: cannot listen on {} (in use, or not an address of this host): {}", key, port, where, e.what()));
  }
  impl_->exposer->RegisterCollectable(impl_->registry);
}

void AgentMetrics::registered(bool yes) { impl_->registered.Set(yes ? 1 : 0); }

void AgentMetrics::order(std::string_view method, bool ok) {
  std::lock_guard lock(impl_->mutex);
  auto key = std::make_pair(std::string(method), ok);
  auto& counter = impl_->order_counters[key];
  if (!counter)
    counter = &impl_->orders.Add({{"node", impl_->node}, {"method", key.first}, {"result", ok ? "ok" : "error"}});
  counter->Increment();
}

void AgentMetrics::job_ended(uint64_t oom_kills) {
  impl_->job_ends.Increment();
  if (oom_kills > 0) impl_->oom_kills.Increment(static_cast<double>(oom_kills));
}

std::string AgentMetrics::exposition() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, impl_->registry->Collect());
  return out.str();
}

}  // namespace cairn
