#include "finished_operators.hpp"

#include "clink/core/error.hpp"

namespace clink::detail {

std::set<std::string> fully_finished_operators(const JobGraph& graph, const std::vector<std::vector<std::string>>& chains,
                                               const CheckpointMetadata* meta, const std::filesystem::path& dir) {
  std::set<std::string> finished;
  if (!meta) return finished;
  for (const auto& n : graph.nodes) {
    auto it = meta->operators.find(n.uid);
    if (it != meta->operators.end() && it->second.fully_finished()) finished.insert(n.id);
  }
  for (const auto& chain : chains) {
    const JobNode& head = graph.node(chain.front());
    const bool head_finished = finished.count(head.id) > 0;
    for (const JobEdge* e : graph.inputs_of(head.id))
      if (head_finished && !finished.count(e->from))
        throw ClinkError("cannot restore " + dir.string() + ": operator '" + head.uid + "' finished in it, but its input '" +
                         graph.node(e->from).uid + "' did not");
    for (const auto& id : chain)
      if ((finished.count(id) > 0) != head_finished)
        throw ClinkError("cannot restore " + dir.string() + ": operator '" + graph.node(id).uid + "' " +
                         (head_finished ? "did not finish" : "finished") + " in it, but '" + head.uid +
                         "', first of its chain, " + (head_finished ? "did" : "did not"));
  }
  return finished;
}

TaskSnapshot finished_snapshot(const JobGraph& graph, const TaskLayout& layout, std::size_t task) {
  TaskSnapshot snapshot;
  const auto& entry = layout.tasks[task];
  for (const auto& id : layout.chains[entry.chain]) {
    OperatorSubtaskState state;
    state.subtask = entry.subtask;
    state.finished = true;
    snapshot.emplace_back(graph.node(id).uid, std::move(state));
  }
  return snapshot;
}

}  // namespace clink::detail
