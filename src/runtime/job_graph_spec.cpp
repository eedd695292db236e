#include "clink/runtime/job_graph_spec.hpp"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"

namespace clink {

using nlohmann::json;

namespace {

struct SpecSection {
  std::function<void(const json&)> load;
  std::function<json(const json&)> save;
};

std::map<std::string, SpecSection>& spec_sections() {
  static std::map<std::string, SpecSection> sections;
  return sections;
}

}  // namespace

json to_spec(const JobGraph& graph) {
  json ops = json::array();
  for (const auto& n : graph.nodes) {
    json op = {{"id", n.id}, {"type", n.factory}};
    if (n.name != n.id) op["name"] = n.name;
    if (n.uid != n.id) op["uid"] = n.uid;
    if (!n.params->empty()) op["params"] = n.params;
    if (n.parallelism > 0) op["parallelism"] = n.parallelism;
    if (n.max_parallelism > 0) op["max_parallelism"] = n.max_parallelism;
    if (!n.out_type.empty()) op["out_type"] = n.out_type;
    json inputs = json::array();
    for (const JobEdge* e : graph.inputs_of(n.id)) {
      json in = {{"from", e->from}, {"partitioning", partitioning_name(e->partitioning)}};
      if (!e->key.empty()) in["key"] = e->key;
      if (!e->side_output.empty()) in["side_output"] = e->side_output;
      if (e->to_input != 0) in["input"] = e->to_input;
      inputs.push_back(std::move(in));
    }
    if (!inputs.empty()) op["inputs"] = std::move(inputs);
    ops.push_back(std::move(op));
  }
  json spec = {{"name", graph.name},
               {"config",
                {{"parallelism", graph.config.default_parallelism},
                 {"max_parallelism", graph.config.max_parallelism},
                 {"channel_capacity", graph.config.channel_capacity},
                 {"chaining", graph.config.chaining}}},
               {"ops", std::move(ops)}};
  for (const auto& [key, section] : spec_sections()) {
    if (!section.save) continue;
    json value = section.save(spec);
    if (!value.is_null() && !value.empty()) spec[key] = std::move(value);
  }
  return spec;
}

namespace {

template <class T>
T field(const json& obj, const char* key, const T& fallback, const std::string& where) {
  if (!obj.contains(key)) return fallback;
  try {
    return obj.at(key).get<T>();
  } catch (const json::exception&) {
    throw ClinkError(where + ": field '" + key + "' has the wrong type (" + obj.at(key).dump() + ")");
  }
}

void check_keys(const json& obj, const std::set<std::string>& known, const std::string& where) {
  for (const auto& [k, v] : obj.items()) {
    if (known.count(k)) continue;
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    throw ClinkError(where + ": unknown field '" + k + "' (known: " + list + ")");
  }
}

}  // namespace

void register_spec_section(const std::string& key, std::function<void(const json&)> load,
                           std::function<json(const json&)> save) {
  spec_sections()[key] = SpecSection{std::move(load), std::move(save)};
}

JobGraph from_spec(const json& spec, const OperatorRegistry& registry) {
  if (!spec.is_object()) throw ClinkError("job spec: expected a JSON object");
  std::set<std::string> keys = {"name", "config", "ops"};
  for (const auto& [key, load] : spec_sections()) keys.insert(key);
  check_keys(spec, keys, "job spec");
  for (const auto& [key, section] : spec_sections())
    if (spec.contains(key)) section.load(spec.at(key));
  JobGraph g;
  g.name = field<std::string>(spec, "name", "job", "job spec");
  if (spec.contains("config")) {
    const json& c = spec.at("config");
    check_keys(c, {"parallelism", "max_parallelism", "channel_capacity", "chaining"}, "job spec config");
    g.config.default_parallelism = field<int>(c, "parallelism", 1, "config");
    g.config.max_parallelism = field<int>(c, "max_parallelism", kDefaultMaxParallelism, "config");
    g.config.channel_capacity = field<std::size_t>(c, "channel_capacity", 8, "config");
    g.config.chaining = field<bool>(c, "chaining", true, "config");
  }
  if (!spec.contains("ops") || !spec.at("ops").is_array()) throw ClinkError("job spec: missing array 'ops'");
  const json& ops = spec.at("ops");

  std::map<std::string, const json*> by_id;
  for (const json& op : ops) {
    if (!op.is_object() || !op.contains("id") || !op.at("id").is_string())
      throw ClinkError("job spec: every op needs a string 'id' (" + op.dump() + ")");
    std::string id = op.at("id").get<std::string>();
    if (!by_id.emplace(id, &op).second) throw ClinkError("job spec: duplicate op id '" + id + "'");
  }

  // Resolve ops depth-first so each knows its input types; detects cycles.
  std::map<std::string, std::string> out_type;
  std::map<std::string, std::map<std::string, std::string>> side_types;
  std::set<std::string> visiting;
  std::function<void(const std::string&)> resolve = [&](const std::string& id) {
    if (out_type.count(id)) return;
    if (!visiting.insert(id).second) throw ClinkError("job spec: op '" + id + "' is part of a cycle");
    const json& op = *by_id.at(id);
    std::string where = "op '" + id + "'";
    check_keys(op, {"id", "type", "name", "uid", "params", "parallelism", "max_parallelism", "inputs", "out_type"},
               where);
    std::string type = field<std::string>(op, "type", "", where);
    if (type.empty()) throw ClinkError(where + ": missing 'type'");
    const OperatorFactoryInfo* info;
    try {
      info = &registry.get(type);
    } catch (const ClinkError& e) {
      throw ClinkError(where + ": " + e.what());
    }
    OperatorSpecContext ctx;
    ctx.id = id;
    ctx.params = op.value("params", json::object());
    if (!ctx.params->is_object()) throw ClinkError(where + ": 'params' must be an object");

    std::vector<JobEdge> edges;
    json inputs = op.value("inputs", json::array());
    if (!inputs.is_array()) throw ClinkError(where + ": 'inputs' must be an array");
    int num_inputs = info->num_inputs;
    if (num_inputs < 0) {  // any number: as many as the edges' "input" indices reach
      num_inputs = 1;
      for (const json& in : inputs)
        if (in.is_object() && in.contains("input") && in["input"].is_number_integer())
          num_inputs = std::max(num_inputs, in["input"].get<int>() + 1);
    }
    std::vector<std::string> input_types(static_cast<std::size_t>(num_inputs));
    for (const json& in : inputs) {
      std::string iw = where + " input";
      if (!in.is_object()) throw ClinkError(iw + ": expected an object");
      check_keys(in, {"from", "partitioning", "key", "side_output", "input"}, iw);
      JobEdge e;
      e.from = field<std::string>(in, "from", "", iw);
      if (!by_id.count(e.from)) throw ClinkError(iw + ": no op with id '" + e.from + "'");
      e.to = id;
      e.to_input = field<int>(in, "input", 0, iw);
      e.side_output = field<std::string>(in, "side_output", "", iw);
      try {
        e.partitioning = parse_partitioning(field<std::string>(in, "partitioning", "forward", iw));
      } catch (const ClinkError& err) {
        throw ClinkError(iw + " from '" + e.from + "': " + err.what());
      }
      resolve(e.from);
      auto upstream_of = [&](const JobEdge& edge) {
        const json& from = *by_id.at(edge.from);
        return UpstreamSpec{edge.to_input, edge.from, from.value("type", ""), from.value("params", json::object()),
                            edge.side_output};
      };
      ctx.upstreams.push_back(upstream_of(e));
      std::string type_in = out_type.at(e.from);
      if (!e.side_output.empty()) {
        auto& sides = side_types[e.from];
        auto st = sides.find(e.side_output);
        if (st == sides.end())
          throw ClinkError(iw + ": op '" + e.from + "' has no side output '" + e.side_output + "'");
        type_in = st->second;
      }
      e.key = field<std::string>(in, "key", "", iw);
      if (e.partitioning == Partitioning::kHash) {
        if (e.key.empty()) throw ClinkError(iw + " from '" + e.from + "': hash partitioning needs a 'key'");
        KeySelectorInfo ks;
        try {
          ks = registry.resolve_key_selector(e.key, upstream_of(e));
        } catch (const ClinkError& err) {
          throw ClinkError(iw + " from '" + e.from + "': " + err.what());
        }
        if (ks.record_type != type_in)
          throw ClinkError(iw + " from '" + e.from + "': key '" + e.key + "' reads " + ks.record_type +
                           " records but '" + e.from + "' produces " + type_in);
        e.hash_partitioner = ks.partitioner;
      }
      if (e.to_input < 0 || e.to_input >= static_cast<int>(input_types.size()))
        throw ClinkError(iw + ": " + type + " has no input " + std::to_string(e.to_input));
      auto& slot = input_types[static_cast<std::size_t>(e.to_input)];
      if (!slot.empty() && slot != type_in)
        throw ClinkError(where + ": input " + std::to_string(e.to_input) + " mixes record types " + slot + " and " +
                         type_in);
      slot = type_in;
      edges.push_back(std::move(e));
    }
    for (std::size_t i = 0; i < input_types.size(); ++i)
      if (input_types[i].empty()) throw ClinkError(where + ": input " + std::to_string(i) + " is not connected");
    ctx.input_types = input_types;

    JobNode n;
    n.id = id;
    n.factory = type;
    n.name = field<std::string>(op, "name", id, where);
    n.uid = field<std::string>(op, "uid", id, where);
    n.params = ctx.params;
    n.parallelism = field<int>(op, "parallelism", 0, where);
    n.max_parallelism = field<int>(op, "max_parallelism", 0, where);
    n.num_inputs = num_inputs;
    try {
      n.out_type = info->out_type ? info->out_type(ctx) : (input_types.empty() ? "" : input_types[0]);
      n.build = info->make(ctx);
    } catch (const ClinkError& err) {
      std::string msg = err.what();
      throw ClinkError(msg.rfind(where, 0) == 0 ? msg : where + ": " + msg);
    }
    if (ctx.params->value("on_error", "") == "dead_letter") {
      bool consumed = false;
      for (const json& other : ops)
        for (const json& in : other.value("inputs", json::array()))
          if (in.value("from", "") == id && in.value("side_output", "") == "dead-letter") consumed = true;
      if (!consumed)
        throw ClinkError(where + ": on_error is dead_letter but no op reads its 'dead-letter' side output");
    }
    out_type[id] = n.out_type;
    side_types[id] = info->side_outputs;
    visiting.erase(id);
    g.add_node(std::move(n));
    for (auto& e : edges) g.add_edge(std::move(e));
  };
  for (const json& op : ops) resolve(op.at("id").get<std::string>());
  g.validate();
  return g;
}

JobGraph load_spec_file(const std::string& path, const OperatorRegistry& registry) {
  std::ifstream in(path);
  if (!in) throw ClinkError("cannot open job spec '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  json spec;
  try {
    spec = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw ClinkError("job spec '" + path + "' is not valid JSON: " + e.what());
  }
  try {
    return from_spec(spec, registry);
  } catch (const ClinkError& e) {
    throw ClinkError(path + ": " + e.what());
  }
}

}  // namespace clink
