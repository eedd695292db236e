// clink explain <job>: the plan (tasks, chains, parallelism, edges, record types) and
// the normalized JobGraphSpec.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "commands.hpp"

namespace clink::cli {
namespace {

std::string input_types(const JobGraph& g, const JobNode& n) {
  std::string s;
  for (const JobEdge* e : g.inputs_of(n.id)) {
    const std::string& t = g.node(e->from).out_type;
    if (s.find(t) == std::string::npos) s += (s.empty() ? "" : ", ") + t;
  }
  return s;
}

std::string routing(const JobGraph& g, const JobEdge& e) {
  std::string s = partitioning_name(e.partitioning);
  if (e.partitioning == Partitioning::kHash) s += "(" + e.key + ")";
  if (g.is_chained(e)) s += ", chained";
  return s;
}

}  // namespace

std::string explain(const JobGraph& g) {
  auto tasks = plan_tasks(g);
  std::string out = fmt::format("job '{}': {} operators in {} tasks, default parallelism {}, max parallelism {}\n",
                                g.name, g.nodes.size(), tasks.size(), g.config.default_parallelism,
                                g.config.max_parallelism);
  std::size_t w_id = 2, w_type = 4;
  for (const auto& n : g.nodes) {
    w_id = std::max(w_id, n.id.size());
    w_type = std::max(w_type, n.factory.size());
  }
  out += "\ntasks:\n";
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    std::string chain;
    for (const auto& id : tasks[i].chain) chain += (chain.empty() ? "" : " -> ") + id;
    out += fmt::format("  task {}: {}  (parallelism {})\n", i + 1, chain, tasks[i].parallelism);
    for (const auto& id : tasks[i].chain) {
      const JobNode& n = g.node(id);
      std::string in = input_types(g, n);
      out += fmt::format("    {:<{}}  {:<{}}  {} -> {}\n", id, w_id, n.factory, w_type, in.empty() ? "(source)" : in,
                         n.out_type.empty() ? "(none)" : n.out_type);
    }
  }
  out += "\nedges:\n";
  for (const auto& id : g.topological_order()) {
    for (const JobEdge* e : g.inputs_of(id)) {
      std::string from = e->from + (e->side_output.empty() ? "" : "[" + e->side_output + "]");
      std::string to = e->to + (e->to_input != 0 ? fmt::format("[input {}]", e->to_input) : "");
      const std::string& type = g.node(e->from).out_type;
      out += fmt::format("  {} -> {}  {}  {}\n", from, to, routing(g, *e), type);
    }
  }
  out += "\nspec:\n" + to_spec(g).dump(2) + "\n";
  return out;
}

namespace {

struct ExplainOptions {
  JobOptions job;
  std::string catalog_dir;
  bool spec = false;
};

int explain_command(const ExplainOptions& eo) {
  const JobOptions& opts = eo.job;
  if (is_sql_file(opts.path)) return explain_sql_script(opts, eo.catalog_dir, eo.spec);
  try {
    std::string text = explain(load_job(opts));
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

}  // namespace

void add_explain_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ExplainOptions>();
  auto* cmd = app.add_subcommand("explain",
                                 "Print a job's plan: for SQL the optimised plan with row estimates and changelog "
                                 "modes; for a spec its tasks, chains, edges and record types");
  add_job_options(*cmd, opts->job);
  cmd->add_option("--catalog-dir", opts->catalog_dir, "SQL: read (and keep) the catalog in this directory");
  cmd->add_flag("--spec", opts->spec, "SQL: also print each statement's JobGraphSpec");
  cmd->callback([opts, &exit_code] { exit_code = explain_command(*opts); });
}

}  // namespace clink::cli
