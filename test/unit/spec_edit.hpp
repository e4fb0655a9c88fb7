// Tests build job records field by field; a record's spec is immutable, so edits re-encode it.
#pragma once

#include "events/event_codec.hpp"
#include "events/job_model.hpp"

namespace cairn::test {

template <typename Change>
void edit_spec(JobRecord& job, Change change) {
  JobSpec spec = job.spec.full();
  change(spec);
  job.spec = RecordedSpec(spec);
}

}  // namespace cairn::test
