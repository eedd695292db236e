#pragma once
// Internal to the executor: finished operators in checkpoints and on restore (FLIP-147).
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/runtime/job_graph.hpp"
#include "clink/runtime/task_group.hpp"

namespace clink::detail {

// The ids of the graph's nodes that finished on every subtask in the checkpoint `meta`
// (read from `dir`; none without one): Flink's fully finished operators, which a restore
// does not run again at any parallelism. As Flink's VertexFinishedStateChecker, throws
// when such an operator is fed by one that did not finish (it would get input after its
// end) or shares a chain with one (`chains`: node ids, head first).
std::set<std::string> fully_finished_operators(const JobGraph& graph, const std::vector<std::vector<std::string>>& chains,
                                               const CheckpointMetadata* meta, const std::filesystem::path& dir);

// What a checkpoint records for a task that exited: each operator of its chain finished,
// with no state (Flink's FinishedOperatorSubtaskState).
TaskSnapshot finished_snapshot(const JobGraph& graph, const TaskLayout& layout, std::size_t task);

}  // namespace clink::detail
