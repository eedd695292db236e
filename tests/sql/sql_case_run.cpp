#include "sql_case_run.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/core/error.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "../support/local_cluster.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "source_pacing.hpp"

namespace clink::test {

namespace fs = std::filesystem;

namespace {

// A job that has not ended by then hangs: the test fails instead of ctest's timeout.
constexpr std::chrono::seconds kJobTimeout{120};

std::string trim_right(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(trim_right(l));
  return out;
}

std::string substitute_inputs(std::string sql, const std::vector<SqlTestInput>& inputs, const fs::path& dir) {
  for (const auto& i : inputs) {
    std::string key = "${input:" + i.name + "}";
    std::string path = (dir / (i.name + "." + i.ext)).string();
    for (auto p = sql.find(key); p != std::string::npos; p = sql.find(key, p + path.size())) sql.replace(p, key.size(), path);
  }
  std::string key = "${dir}";
  for (auto p = sql.find(key); p != std::string::npos; p = sql.find(key, p + 1)) sql.replace(p, key.size(), dir.string());
  return sql;
}

void mask_dir(std::string& l, const fs::path& dir) {
  const std::string d = dir.string();
  for (auto p = l.find(d); p != std::string::npos; p = l.find(d, p)) l.replace(p, d.size(), "${dir}");
}

// Runs one job as the settings say; throws JobFailedError as execute() does.
JobRecord run_job(const nlohmann::json& spec, const RunSettings& s, std::size_t index, const fs::path& state_dir) {
  JobGraph graph = from_spec(spec, builtin_registry());
  auto pacing = std::make_shared<SourcePacing>();
  if (s.wrap_sources) {
    pacing->pace = s.restore;
    pacing->fail_at = index < s.fail_at.size() ? s.fail_at[index] : 0;
    pace_sources(graph, pacing);
  }
  const fs::path job_dir = state_dir / ("job-" + std::to_string(index));
  ExecutionOptions o;
  o.checkpoints.state_backend.kind = s.state_backend;
  o.checkpoints.state_backend.working_dir = job_dir / "working";
  if (s.restore) {
    // The coordinator polls every millisecond; the paced sources decide when a
    // checkpoint is due. Two restarts: the injected failure and, in a case expecting
    // the job to fail, its own failure once more before it is reported.
    o.checkpoints.interval_ms = 1;
    o.checkpoints.directory = job_dir / "checkpoints";
    o.restart = RestartStrategy::fixed_delay(2, 0);
  }
  JobHandle handle = s.cluster ? LocalCluster::shared().runtime().launch(LocalCluster::next_job_id(), graph, o)
                               : execute_async(graph, o);
  if (!handle.wait_for(kJobTimeout)) {
    handle.cancel();
    handle.wait_for(std::chrono::seconds(10));
    throw ClinkError("the job did not end within " + std::to_string(kJobTimeout.count()) + " s");
  }
  JobRecord r;
  r.batches = pacing->batches.load();
  r.failure_injected = pacing->failed.load();
  r.restarts = handle.checkpoint_counts().restarts;
  r.checkpoints = handle.checkpoint_counts().completed;
  handle.wait();  // throws the job's failure
  return r;
}

}  // namespace

std::vector<std::string> CaseOutput::lines(SqlTestCase::Expect expect) const {
  std::vector<std::string> out;
  for (const auto& p : parts) {
    if (p.select && expect == SqlTestCase::Expect::kFinal) {
      auto rows = p.rows;
      std::sort(rows.begin(), rows.end());
      out.insert(out.end(), rows.begin(), rows.end());
    } else {
      out.insert(out.end(), p.lines.begin(), p.lines.end());
    }
  }
  return out;
}

CaseOutput run_sql_case(const SqlTestCase& c, const fs::path& dir, const RunSettings& settings) {
  const fs::path state_dir = dir.string() + "_state";
  fs::remove_all(dir);
  fs::remove_all(state_dir);
  fs::create_directories(dir);
  // A name may hold directories ("t/dt=2024-01-01/x": a file in a partition directory).
  for (const auto& i : c.inputs) {
    fs::create_directories((dir / (i.name + "." + i.ext)).parent_path());
    std::ofstream(dir / (i.name + "." + i.ext)) << i.text;
  }
  sql::Catalog catalog;
  sql::StatementRunner runner(catalog);
  CaseOutput out;
  int selects = 0;
  runner.on_job([&](const nlohmann::json& spec, const sql::ast::Statement& st) {
    std::string name;
    if (st.as<sql::ast::QueryStatement>()) name = "select_" + std::to_string(++selects);
    if (!name.empty()) sql::SqlCollectResults::drop(name);
    out.jobs.push_back(run_job(spec, settings, out.jobs.size(), state_dir));
    if (!name.empty()) {
      auto results = sql::SqlCollectResults::get(name);
      out.parts.push_back({true, results->changelog(), results->rows()});
      sql::SqlCollectResults::drop(name);
    }
  });
  try {
    if (settings.parallelism > 1) runner.run("SET 'parallelism.default' = '" + std::to_string(settings.parallelism) + "';");
    // The setup is its own script so a case's error positions count from the case's SQL.
    if (!c.setup.empty()) runner.run(substitute_inputs(c.setup, c.inputs, dir));
    for (const auto& r : runner.run(substitute_inputs(c.sql, c.inputs, dir)))
      if (r.kind == sql::StatementResult::Kind::kText) out.parts.push_back({false, lines_of(r.text), {}});
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  fs::remove_all(dir);
  fs::remove_all(state_dir);
  // Paths under the case's directory print as ${dir}, so expectations can name them.
  for (auto& p : out.parts) {
    for (auto& l : p.lines) mask_dir(l, dir);
    for (auto& l : p.rows) mask_dir(l, dir);
  }
  mask_dir(out.error, dir);
  return out;
}

}  // namespace clink::test
