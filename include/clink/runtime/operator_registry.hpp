#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "clink/core/json_value.hpp"
#include "clink/runtime/job_graph.hpp"

namespace clink {

// One edge into an op, as its factory sees it: which input it feeds and what the
// upstream op declared (SQL ops compare their input schema with the upstream's).
struct UpstreamSpec {
  int input = 0;
  std::string op_id;
  std::string factory;
  JsonValue params;         // the upstream op's params
  std::string side_output;  // non-empty: the edge reads this side output
};

// What a factory sees when it builds an operator from a spec.
struct OperatorSpecContext {
  std::string id;
  JsonValue params;  // a JSON object (json_value.hpp: `ctx.params->at("k")`)
  std::vector<std::string> input_types;  // record type of each input, in input order
  std::vector<UpstreamSpec> upstreams;    // every input edge, in spec order
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

// Key selectors named by a prefix plus arguments, e.g. "sql_columns:0,2": `make` gets
// the text after the prefix and the upstream edge (whose params carry the schema), and
// throws ClinkError naming the problem.
struct KeySelectorFamily {
  std::string prefix;
  std::string record_type;
  std::function<PartitionerFactory(const std::string& args, const UpstreamSpec& upstream)> make;
};

// Factory names -> builders, so a spec runs wherever its factories are linked.
class OperatorRegistry {
 public:
  void add(OperatorFactoryInfo info);
  void add_key_selector(KeySelectorInfo info);
  const OperatorFactoryInfo& get(const std::string& name) const;
  const KeySelectorInfo& key_selector(const std::string& name) const;
  void add_key_selector_family(KeySelectorFamily family);
  // A key selector by exact name, else by the family whose prefix starts the name.
  KeySelectorInfo resolve_key_selector(const std::string& name, const UpstreamSpec& upstream) const;
  bool contains(const std::string& name) const { return factories_.count(name) > 0; }
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OperatorFactoryInfo> factories_;
  std::map<std::string, KeySelectorInfo> key_selectors_;
  std::vector<KeySelectorFamily> key_families_;
};

}  // namespace clink
