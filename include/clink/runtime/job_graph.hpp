#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clink/core/json_value.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/runtime/partitioner.hpp"

namespace clink {

using OperatorBuilder = std::function<std::unique_ptr<StreamOperator>()>;

// One operator of a job. `factory` and `params` name it in the OperatorRegistry so a
// JobGraphSpec can rebuild it elsewhere; `build` makes one instance per subtask.
struct JobNode {
  std::string id;    // unique in the graph
  std::string name;  // for people: messages, metrics, explain
  std::string uid;   // stable across job versions; state is matched by it on restore
  std::string factory;
  JsonValue params = JsonValue::object();  // a JSON object; see json_value.hpp for its use
  std::string out_type;  // record type name, for spec validation and explain
  int parallelism = 0;   // 0: the job's default
  int max_parallelism = 0;
  int num_inputs = 1;
  OperatorBuilder build;
};

struct JobEdge {
  std::string from;
  std::string to;
  int to_input = 0;         // which input of `to` (connect() has two)
  std::string side_output;  // empty: the main output
  Partitioning partitioning = Partitioning::kForward;
  std::string key;          // hash partitioning: the key selector's name
  PartitionerFactory hash_partitioner;  // hash partitioning: how to route
};

struct JobConfig {
  int default_parallelism = 1;
  int max_parallelism = kDefaultMaxParallelism;
  std::size_t channel_capacity = 8;  // batches per channel
  bool chaining = true;
};

class JobGraph {
 public:
  std::string name = "job";
  JobConfig config;
  std::vector<JobNode> nodes;
  std::vector<JobEdge> edges;

  JobNode& add_node(JobNode node);
  JobEdge& add_edge(JobEdge edge);
  const JobNode& node(const std::string& id) const;
  JobNode& node(const std::string& id);
  bool has_node(const std::string& id) const;
  std::vector<const JobEdge*> inputs_of(const std::string& id) const;
  std::vector<const JobEdge*> outputs_of(const std::string& id) const;
  int parallelism_of(const JobNode& n) const { return n.parallelism > 0 ? n.parallelism : config.default_parallelism; }
  int max_parallelism_of(const JobNode& n) const {
    return n.max_parallelism > 0 ? n.max_parallelism : config.max_parallelism;
  }
  // Node ids sources first, each node after all its inputs. Throws on a cycle.
  std::vector<std::string> topological_order() const;
  // Checks ids, edges, input counts, parallelism and hash edges; throws ClinkError.
  void validate() const;
  // Whether `edge` is chained: forward, equal parallelism, the only input of its
  // target and the only output of its source.
  bool is_chained(const JobEdge& edge) const;
  std::string unique_id(const std::string& base) const;
};

}  // namespace clink
