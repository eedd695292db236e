#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/runtime/job_graph.hpp"

namespace clink {

// What a factory sees when it builds an operator from a spec.
struct OperatorSpecContext {
  std::string id;
  nlohmann::json params;
  std::vector<std::string> input_types;  // record type of each input, in input order
};

struct OperatorFactoryInfo {
  std::string name;
  std::string description;
  int num_inputs = 1;  // 0 for sources
  // Record type produced, given the context (sinks and pass-throughs derive it).
  std::function<std::string(const OperatorSpecContext&)> out_type;
  // Validates params and returns the per-subtask builder; throws ClinkError naming the problem.
  std::function<OperatorBuilder(const OperatorSpecContext&)> make;
  // Side outputs it may emit: tag -> record type (e.g. "dead-letter" -> "dead_letter").
  std::map<std::string, std::string> side_outputs;
};

struct KeySelectorInfo {
  std::string name;
  std::string record_type;  // the type the key is taken from
  PartitionerFactory partitioner;
};

// Factory names -> builders, so a spec runs wherever its factories are linked.
class OperatorRegistry {
 public:
  void add(OperatorFactoryInfo info);
  void add_key_selector(KeySelectorInfo info);
  const OperatorFactoryInfo& get(const std::string& name) const;
  const KeySelectorInfo& key_selector(const std::string& name) const;
  bool contains(const std::string& name) const { return factories_.count(name) > 0; }
  std::vector<std::string> names() const;

  // The registry with every built-in operator, connector and key selector.
  static const OperatorRegistry& builtin();

 private:
  std::map<std::string, OperatorFactoryInfo> factories_;
  std::map<std::string, KeySelectorInfo> key_selectors_;
};

// Registration hooks of the built-in parts, called by builtin().
void register_builtin_connectors(OperatorRegistry& registry);
void register_builtin_operators(OperatorRegistry& registry);

}  // namespace clink
