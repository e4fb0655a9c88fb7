// What the controller must still hear from this agent: the jobs it runs and
// the job ends it has not acknowledged yet. Pure bookkeeping for the
// controller link (one thread): an end stays pending until a jobEnded call
// for it resolves -- the controller answers only once the end is durable --
// and is sent again after every reconnection until then.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "agents/job_launch.hpp"
#include "common/run_record.hpp"

namespace cairn {

class JobReportBook {
 public:
  // A run started (or was noted, on a node that is not the batch host). A newer
  // run drops the unacknowledged end of an older one: the controller has
  // relaunched the job, so it has recorded (or given up on) that end.
  void job_started(uint64_t job_id, uint32_t run);
  // The run ended: it is no longer running and its end is pending. Ignored for
  // a run older than the job's latest.
  void job_ended(const JobEnd& end);
  // The run is gone without an end to report (a note of a node that did not run
  // the script, terminated).
  void job_forgotten(uint64_t job_id, uint32_t run);

  // The ids registerAgent and heartbeat list: running jobs and jobs whose end is
  // pending (so that the controller does not declare them lost), sorted.
  std::vector<uint64_t> jobs_to_report() const;
  // The same jobs with the run the agent knows of each (the running one, else the
  // one whose end is pending): registerAgent's runningJobs and runs.
  std::vector<RunKey> runs_to_report() const;

  // Pending ends no call is carrying now, marked as in flight; the caller sends them.
  std::vector<JobEnd> take_unsent();
  // The jobEnded call for this run succeeded. True when it was the pending end
  // (now dropped); false when the book had moved on (a newer run).
  bool acknowledged(uint64_t job_id, uint32_t run);
  // The call failed: the end waits for the next take_unsent().
  void send_failed(uint64_t job_id, uint32_t run);
  // Every call in flight died with the connection.
  void connection_lost();

  size_t pending_count() const { return pending_.size(); }
  size_t running_count() const { return running_.size(); }

 private:
  struct Pending {
    JobEnd end;
    bool in_flight = false;
  };
  std::map<uint64_t, uint32_t> running_;  // job id -> run
  std::map<uint64_t, Pending> pending_;   // job id -> its latest unacknowledged end
};

}  // namespace cairn
