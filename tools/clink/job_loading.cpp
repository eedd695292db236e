#include <cctype>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "commands.hpp"

namespace clink::cli {

void add_job_options(CLI::App& cmd, JobOptions& opts) {
  cmd.add_option("job", opts.path, "Job file: a Flink SQL script (.sql) or a JobGraphSpec (.json)")
      ->required();
  cmd.add_option("-p,--parallelism", opts.parallelism, "Default parallelism of the job's operators")
      ->check(CLI::Range(1, 1 << 15));
  cmd.add_option("--set", opts.sets,
                 "Override a setting, repeatable: a config key (parallelism, max_parallelism, "
                 "channel_capacity, chaining), name, or <op id>.<param> (e.g. --set count.emit=every); "
                 "Flink's metrics.reporter.prom.port / .host serve Prometheus metrics while the job runs")
      ->type_name("KEY=VALUE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClinkError("cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool is_sql_file(const std::string& path) {
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".sql") == 0) return true;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) return false;
  // Any other name: by content. A spec starts with '{'; a script with a comment or a word.
  std::ifstream in(path);
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  return in && c != '{';
}

bool is_process_config_key(const std::string& key) { return key.rfind("metrics.reporter.", 0) == 0; }

std::map<std::string, std::string> process_config(const std::vector<std::string>& sets) {
  std::map<std::string, std::string> out;
  for (const auto& s : sets) {
    auto eq = s.find('=');
    if (eq != std::string::npos && is_process_config_key(s.substr(0, eq))) out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return out;
}

void apply_override(nlohmann::json& spec, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ClinkError("--set '" + assignment + "': expected key=value");
  std::string key = assignment.substr(0, eq);
  if (is_process_config_key(key)) return;  // the process's (RunServices), not the job's
  std::string text = assignment.substr(eq + 1);
  // Numbers, booleans and JSON values as such; anything else as a string.
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;

  if (key == "name") {
    spec["name"] = text;
    return;
  }
  auto dot = key.find('.');
  if (dot == std::string::npos) {
    static const char* const kConfigKeys[] = {"parallelism", "max_parallelism", "channel_capacity", "chaining"};
    for (const char* k : kConfigKeys) {
      if (key == k) {
        spec["config"][key] = value;
        return;
      }
    }
    throw ClinkError("--set '" + assignment +
                     "': unknown key '" + key +
                     "' (config keys: parallelism, max_parallelism, channel_capacity, chaining, name; "
                     "op params: <op id>.<param>)");
  }
  std::string op_id = key.substr(0, dot);
  std::string param = key.substr(dot + 1);
  if (param.empty()) throw ClinkError("--set '" + assignment + "': missing the param after '" + op_id + ".'");
  if (spec.contains("ops") && spec["ops"].is_array()) {
    for (auto& op : spec["ops"]) {
      if (op.is_object() && op.value("id", "") == op_id) {
        op["params"][param] = value;
        return;
      }
    }
  }
  throw ClinkError("--set '" + assignment + "': the job has no op '" + op_id + "'");
}

JobGraph load_job(const JobOptions& opts) {
  std::ifstream in(opts.path);
  if (!in) throw ClinkError("cannot open job spec '" + opts.path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw ClinkError("job spec '" + opts.path + "' is not valid JSON: " + e.what());
  }
  if (!spec.is_object()) throw ClinkError(opts.path + ": job spec: expected a JSON object");
  if (opts.parallelism > 0) spec["config"]["parallelism"] = opts.parallelism;
  for (const auto& s : opts.sets) apply_override(spec, s);
  try {
    return from_spec(spec, builtin_registry());
  } catch (const ClinkError& e) {
    throw ClinkError(opts.path + ": " + e.what());
  }
}

}  // namespace clink::cli
