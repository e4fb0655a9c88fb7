// What squeue, sinfo and scontrol show read: the live controller, or the
// cluster as the event log says it was at a past moment (--at TIME).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "events/qos.hpp"
#include "events/queries.hpp"

namespace cairn {

class ClusterQueries {
 public:
  virtual ~ClusterQueries() = default;
  // Every job the query selects (a live controller answers in pages; this reads them all).
  virtual JobsAnswer jobs(const JobQuery& query) = 0;
  // squeue's listing: the same jobs, never with scripts or environments, handed over page
  // by page (a live controller's pages; each page's records are gone once on_page returns);
  // `lean`: each job only as a lean view has it (JobViewFields::lean: squeue_lean_format).
  virtual void listing(const JobQuery& query, bool /*lean*/, const std::function<void(JobsAnswer&)>& on_page) {
    JobsAnswer all = jobs(query);
    on_page(all);
  }
  virtual NodesAnswer nodes() = 0;
  // The burst-buffer pools: their sizes then (the configuration in force) and their holders.
  virtual PoolsAnswer burst_buffers() = 0;
  // A past moment's view (--at): the cairn.conf text the log says was in force (empty: the
  // log recorded none). The controller: nullopt (it answers show config itself).
  virtual std::optional<std::string> logged_config_text() { return std::nullopt; }
  // The QOS then (the part of a job's priority its QOS gives, sacct's QOSRAW); by default the
  // table every cluster starts with.
  virtual QosTable qos_table() { return initial_qos_table(); }
};

// Every page of a listing: asks `page_of` again after each answer that has more.
JobsAnswer read_all_pages(const JobQuery& query, const std::function<JobsAnswer(const JobQuery&)>& page_of);

// The controller, or with `at` (Slurm's time formats, as sacct -S) the log
// replayed up to that moment. Throws UsageError on a bad time.
std::unique_ptr<ClusterQueries> open_cluster_queries(const ClusterConfig& config, const std::optional<std::string>& at,
                                                     const std::string& command);

}  // namespace cairn
