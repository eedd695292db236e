#include "clink/runtime/job_graph.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "clink/core/error.hpp"

namespace clink {

JobNode& JobGraph::add_node(JobNode node) {
  if (node.id.empty()) throw ClinkError("operator without id");
  if (has_node(node.id)) throw ClinkError("duplicate operator id '" + node.id + "'");
  if (node.name.empty()) node.name = node.id;
  if (node.uid.empty()) node.uid = node.id;
  nodes.push_back(std::move(node));
  return nodes.back();
}

JobEdge& JobGraph::add_edge(JobEdge edge) {
  edges.push_back(std::move(edge));
  return edges.back();
}

bool JobGraph::has_node(const std::string& id) const {
  return std::any_of(nodes.begin(), nodes.end(), [&](const JobNode& n) { return n.id == id; });
}

const JobNode& JobGraph::node(const std::string& id) const {
  for (const auto& n : nodes)
    if (n.id == id) return n;
  throw ClinkError("no operator with id '" + id + "'");
}
JobNode& JobGraph::node(const std::string& id) {
  return const_cast<JobNode&>(static_cast<const JobGraph*>(this)->node(id));
}

std::vector<const JobEdge*> JobGraph::inputs_of(const std::string& id) const {
  std::vector<const JobEdge*> out;
  for (const auto& e : edges)
    if (e.to == id) out.push_back(&e);
  return out;
}
std::vector<const JobEdge*> JobGraph::outputs_of(const std::string& id) const {
  std::vector<const JobEdge*> out;
  for (const auto& e : edges)
    if (e.from == id) out.push_back(&e);
  return out;
}

std::string JobGraph::unique_id(const std::string& base) const {
  for (std::size_t i = 1;; ++i) {
    std::string id = base + "-" + std::to_string(i);
    if (!has_node(id)) return id;
  }
}

std::vector<std::string> JobGraph::topological_order() const {
  std::map<std::string, int> pending;
  for (const auto& n : nodes) pending[n.id] = 0;
  for (const auto& e : edges) pending[e.to]++;
  std::vector<std::string> order;
  // Kahn's algorithm, keeping declaration order among ready nodes (deterministic).
  std::set<std::string> done;
  while (order.size() < nodes.size()) {
    bool progressed = false;
    for (const auto& n : nodes) {
      if (done.count(n.id) || pending[n.id] != 0) continue;
      order.push_back(n.id);
      done.insert(n.id);
      for (const auto& e : edges)
        if (e.from == n.id) pending[e.to]--;
      progressed = true;
    }
    if (!progressed) throw ClinkError("the job graph has a cycle");
  }
  return order;
}

void JobGraph::validate() const {
  if (nodes.empty()) throw ClinkError("the job has no operators");
  if (config.max_parallelism < 1) throw ClinkError("max parallelism must be at least 1");
  for (const auto& n : nodes) {
    int p = parallelism_of(n);
    if (p < 1) throw ClinkError("operator '" + n.id + "': parallelism must be at least 1");
    if (p > max_parallelism_of(n))
      throw ClinkError("operator '" + n.id + "': parallelism " + std::to_string(p) + " exceeds max parallelism " +
                       std::to_string(max_parallelism_of(n)));
    if (!n.build) throw ClinkError("operator '" + n.id + "' (" + n.factory + ") has no builder");
    auto ins = inputs_of(n.id);
    if (n.num_inputs == 0 && !ins.empty()) throw ClinkError("source '" + n.id + "' cannot have inputs");
    if (n.num_inputs > 0) {
      for (int i = 0; i < n.num_inputs; ++i) {
        bool has = std::any_of(ins.begin(), ins.end(), [&](const JobEdge* e) { return e->to_input == i; });
        if (!has) throw ClinkError("operator '" + n.id + "': input " + std::to_string(i) + " is not connected");
      }
    }
  }
  for (const auto& e : edges) {
    if (!has_node(e.from)) throw ClinkError("edge from unknown operator '" + e.from + "'");
    if (!has_node(e.to)) throw ClinkError("edge to unknown operator '" + e.to + "'");
    const JobNode& to = node(e.to);
    if (e.to_input < 0 || e.to_input >= std::max(1, to.num_inputs))
      throw ClinkError("operator '" + e.to + "' has no input " + std::to_string(e.to_input));
    if (e.partitioning == Partitioning::kHash && !e.hash_partitioner)
      throw ClinkError("hash edge '" + e.from + "' -> '" + e.to + "' has no key selector");
  }
  topological_order();  // throws on a cycle
}

bool JobGraph::is_chained(const JobEdge& edge) const {
  if (!config.chaining || edge.partitioning != Partitioning::kForward || !edge.side_output.empty()) return false;
  const JobNode& from = node(edge.from);
  const JobNode& to = node(edge.to);
  if (parallelism_of(from) != parallelism_of(to) || to.num_inputs != 1) return false;
  return inputs_of(edge.to).size() == 1 && outputs_of(edge.from).size() == 1;
}

}  // namespace clink
