#pragma once
// Source pacing for the SQL test matrix's restore variant (docs/sql-tests.md): every
// source of a job is wrapped so that it counts the batches it emits and, when paced,
// holds its next batch back until a checkpoint taken after the last one completed (a
// checkpoint after every input batch), and fails the job once at a chosen step.
//
// Steps are numbered over all sources of the job and all its attempts: each emitted
// batch is one step, and (paced) each completed checkpoint after a batch is another.
// Failing after a batch loses work done since the last checkpoint (the restore replays
// it); failing after a checkpoint restores state that holds the whole batch.
#include <atomic>
#include <cstdint>
#include <memory>

#include "clink/runtime/job_graph.hpp"

namespace clink::test {

struct SourcePacing {
  bool pace = false;         // wait for a completed checkpoint after each batch
  std::int64_t fail_at = 0;  // the step after which the job fails once (0: never)
  std::atomic<std::int64_t> batches{0};  // non-empty batches the sources emitted
  std::atomic<std::int64_t> steps{0};
  std::atomic<bool> failed{false};  // the injected failure happened
};

// Wraps every source node of `graph` (a node without inputs); its builders share `pacing`.
void pace_sources(JobGraph& graph, std::shared_ptr<SourcePacing> pacing);

}  // namespace clink::test
