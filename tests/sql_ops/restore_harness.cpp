#include "restore_harness.hpp"


#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"

namespace clink::test {

SchemaPtr kv_schema() {
  return sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()}});
}

ColumnBatch spread(std::int64_t v, std::int64_t t, bool scale_by_key) {
  std::vector<Row> rows;
  for (int i = 0; i < 6; ++i)
    rows.push_back(Row{{Value(t * 1000), Value(kRestoreKeys[i]), Value(scale_by_key ? v * (i + 1) : v)}, RowKind::kInsert, t});
  return batch(kv_schema(), rows);
}

std::vector<BatchStep> rising_steps(const std::vector<std::optional<EventTime>>& watermarks, bool scale_by_key) {
  const std::pair<std::int64_t, std::int64_t> rows[] = {{1, 1}, {12, 2}, {15, 4}, {21, 8}, {29, 16}};  // (t, v)
  std::vector<BatchStep> steps;
  for (std::size_t i = 0; i < 5; ++i) steps.push_back({spread(rows[i].second, rows[i].first, scale_by_key), watermarks.at(i)});
  return steps;
}

const std::vector<std::optional<EventTime>>& watermarks_between_steps() {
  static const std::vector<std::optional<EventTime>> w = {5, 14, 16, 25, std::nullopt};
  return w;
}

const std::vector<std::optional<EventTime>>& watermarks_one_step_behind() {
  static const std::vector<std::optional<EventTime>> w = {std::nullopt, 5, 12, 16, std::nullopt};
  return w;
}

json restore_job_spec(const std::string& name, const std::string& script, const std::vector<json>& ops,
                      const std::string& last, int parallelism) {
  json src = {{"id", "src"}, {"type", "sql_test_source"}, {"parallelism", 1},
              {"params", {{"script", script}, {"schema", schema_json(kv_schema())}}}};
  json inj = {{"id", "inj"}, {"type", "sql_test_injector"}, {"parallelism", 1},
              {"params", {{"script", script}, {"schema", schema_json(kv_schema())}}},
              {"inputs", json::array({{{"from", "src"}}})}};
  json sink = {{"id", "sink"}, {"type", "sql_test_sink"}, {"params", {{"script", script}}},
               {"inputs", json::array({{{"from", last}}})}};
  json all = json::array({src, inj});
  for (const auto& o : ops) {
    if (o["id"] == last && o.contains("parallelism")) sink["parallelism"] = o["parallelism"];
    all.push_back(o);
  }
  all.push_back(sink);
  return {{"name", name}, {"config", {{"parallelism", parallelism}}}, {"ops", all}};
}

json keyed_op(const std::string& id, const std::string& type, const SchemaPtr& out, json params) {
  params["input_schemas"] = json::array({schema_json(kv_schema())});
  params["schema"] = schema_json(out);
  return {{"id", id},
          {"type", type},
          {"params", std::move(params)},
          {"inputs", json::array({{{"from", "inj"}, {"partitioning", "hash"}, {"key", "sql_columns:1"}}})}};
}

RestoreJob pipeline_job(const std::string& name, std::vector<json> ops, const std::string& last,
                        std::vector<BatchStep> steps, SinkView view) {
  return {[name, ops = std::move(ops), last](const std::string& script, int p) {
            return restore_job_spec(name, script, ops, last, p);
          },
          std::move(steps), std::move(view)};
}

RestoreJob single_op_job(const std::string& name, const json& op, std::vector<BatchStep> steps, SinkView view) {
  return pipeline_job(name, {op}, op.at("id").get<std::string>(), std::move(steps), std::move(view));
}

std::vector<std::string> sorted_rows(std::vector<std::string> lines) { return sorted(std::move(lines)); }

std::shared_ptr<Script> SqlRestoreHarness::fresh(const std::vector<BatchStep>& steps) {
  auto s = std::make_shared<Script>();
  s->steps = steps;
  put_script(name_, s);
  return s;
}

RestorableJob SqlRestoreHarness::restorable(const RestoreJob& job, const std::shared_ptr<Script>& s) const {
  return {[this, &job](int p) { return from_spec(job.spec(name_, p), test_registry()); }, s, s};
}

std::vector<std::string> SqlRestoreHarness::failure_free(const RestoreJob& job, int p) {
  auto s = fresh(job.steps);
  run_failure_free(restorable(job, s), p);
  return s->sink->values();
}

std::vector<std::string> SqlRestoreHarness::with_savepoint(const RestoreJob& job, std::size_t at, int p1, int p2) {
  auto s = fresh(job.steps);
  run_with_savepoint(restorable(job, s), at, p1, p2);
  return s->sink->values();
}

std::vector<std::string> SqlRestoreHarness::with_failure(const RestoreJob& job, std::size_t at, int p) {
  auto s = fresh(job.steps);
  run_with_failure(restorable(job, s), at, p);
  return s->sink->values();
}

void SqlRestoreHarness::expect_restores(const RestoreJob& job, const RestorePlan& plan,
                                     const std::vector<std::string>& expected) {
  for (int p : plan.failure_free_parallelisms) EXPECT_EQ(job.view(failure_free(job, p)), expected) << "parallelism " << p;
  for (std::size_t at : plan.savepoint_steps)
    for (auto [p1, p2] : plan.rescales)
      EXPECT_EQ(job.view(with_savepoint(job, at, p1, p2)), expected)
          << "savepoint after step " << at << ", " << p1 << " -> " << p2;
  EXPECT_EQ(job.view(with_failure(job, plan.failure_step, plan.failure_parallelism)), expected) << "injected failure";
}

}  // namespace clink::test
