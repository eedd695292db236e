// ML_PREDICT's durability: its op (the asynchronous lookup join through the model lookup
// source) over the restore jobs' rows (t, k, v), the iris model server's features all v,
// run failure-free at parallelism 1 and 2, stopped with a savepoint and resumed (1 -> 1,
// 1 -> 2, 2 -> 1) and with an injected failure, on the memory and RocksDB backends; then
// the requests in flight themselves: while the server holds every request for 1.5 s, a
// savepoint is taken with rows of two steps in flight, and the resumed job emits each of
// them exactly once with the model's prediction.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../sql_ops/restore_harness.hpp"
#include "../support/print_form.hpp"
#include "../support/temp_dir.hpp"
#include "clink/connectors/ml/register_ml_models.hpp"
#include "clink/connectors/sql/lookup_source.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/lookup_join_spec.hpp"
#include "clink/sql/spec/model_provider.hpp"
#include "model_server.hpp"

namespace clink::test {
namespace {

using namespace std::chrono_literals;
// The model server's port: one the system picks, so that ctest may run this suite's
// tests (each a process with its own server) side by side.
int server_port = 0;

const char* const kFeatures[] = {"sepal_length", "sepal_width", "petal_length", "petal_width"};

SchemaPtr model_schema() {
  std::vector<sql::RowField> f;
  for (const char* n : kFeatures) f.push_back({n, LogicalType::double_type()});
  f.push_back({"species", LogicalType::string()});
  f.push_back({"class_id", LogicalType::int_type()});
  f.push_back({"probability", LogicalType::double_type()});
  return std::make_shared<sql::Schema>(f);
}

SchemaPtr joined_schema() {
  std::vector<sql::RowField> f = kv_schema()->fields();
  const SchemaPtr model = model_schema();  // held: fields() refers into it
  for (const auto& m : model->fields()) f.push_back(m);
  return std::make_shared<sql::Schema>(f);
}

// inj's rows LEFT JOIN the model ON every feature = CAST(v AS DOUBLE).
json predict_op(const std::string& mode) {
  using namespace sql;
  json keys = json::array();
  for (int i = 0; i < 4; ++i)
    keys.push_back({{"column", i},
                    {"value", expr_to_json(*expr::cast(expr::column(2, LogicalType::bigint(), "v"), LogicalType::double_type()))}});
  json params = {{"input_schemas", json::array({schema_json(kv_schema())})},
                 {"schema", schema_json(joined_schema())},
                 {"join_type", "left"},
                 {"table", "iris"},
                 {"lookup", kLookupFunctionSource},
                 {"options", {{"lookup_function", kMlPredictLookupFunction}, {kMlModelNameOption, "iris"},
                              {"lookup.max-retries", "0"}, {"provider", "http"}, {"max_batch_size", "4"},
                              {"endpoint", "http://127.0.0.1:" + std::to_string(server_port) + "/predict"}}},
                 {"dim_schema", schema_json(model_schema())},
                 {"dim_columns", {0, 1, 2, 3, 4, 5, 6}},
                 {"keys", keys},
                 {"async", {{"capacity", 100}, {"output_mode", mode}, {"timeout_ms", 60000}}}};
  return {{"id", "predict"},
          {"type", kSqlLookupJoin},
          {"params", std::move(params)},
          {"inputs", json::array({{{"from", "inj"}, {"partitioning", "rebalance"}}})}};
}

std::string number(double v) {
  std::string s = fmt::format("{}", v);
  return s.find('.') == std::string::npos ? s + ".0" : s;
}

class MlPredictRestore : public SqlRestoreHarness {
 protected:
  static void SetUpTestSuite() {
    sql::register_ml_models();
    scratch_ = new TempDir();
    server_ = new ModelServer(0, scratch_->path);
    server_port = server_->port();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete scratch_;
  }

  std::vector<std::string> expected_rows() {
    std::map<int, json> pred;
    std::vector<std::string> rows;
    const int vs[] = {1, 2, 4, 8, 16};
    for (int v : vs) rows.push_back(json({{"sepal_length", v}, {"sepal_width", v}, {"petal_length", v}, {"petal_width", v}}).dump());
    auto preds = model_expect(scratch_->path, rows);
    EXPECT_EQ(preds.size(), 5u);
    if (preds.size() != 5) return {};
    for (std::size_t i = 0; i < 5; ++i) pred[vs[i]] = json::parse(preds[i]);
    std::vector<std::string> out;
    for (std::string k : {"a", "b", "c", "d", "e", "f"})
      for (auto [t, v] : {std::pair{1, 1}, {12, 2}, {15, 4}, {21, 8}, {29, 16}}) {
        const json& p = pred[v];
        const std::string f = number(v);
        out.push_back(fmt::format("+I[{}, {}, {}, {}, {}, {}, {}, {}, {}, {}]", print_timestamp_ms(t), k, v, f, f, f, f,
                                  p["species"].get<std::string>(), p["class_id"].get<int>(),
                                  number(p["probability"].get<double>())));
      }
    return sorted(out);
  }

  void delay(int ms) {
    const std::string cmd = "'" + venv_python() + "' -c \"import urllib.request; urllib.request.urlopen(urllib.request.Request("
                            "'http://127.0.0.1:" + std::to_string(server_port) + "/admin/delay', data=b'{\\\"ms\\\": " +
                            std::to_string(ms) + "}', headers={'Content-Type':'application/json'}))\"";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  static TempDir* scratch_;
  static ModelServer* server_;
};
TempDir* MlPredictRestore::scratch_ = nullptr;
ModelServer* MlPredictRestore::server_ = nullptr;

INSTANTIATE_TEST_SUITE_P(Backends, MlPredictRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(MlPredictRestore, Ordered) {
  expect_restores(single_op_job("predict", predict_op("ORDERED"), rising_steps(watermarks_between_steps())), {},
                  expected_rows());
}

TEST_P(MlPredictRestore, Unordered) {
  expect_restores(single_op_job("predict", predict_op("ALLOW_UNORDERED"), rising_steps(watermarks_between_steps())), {},
                  expected_rows());
}

// Requests in flight at the savepoint (the server holds each for 1.5 s): their rows are in
// its state and come out of the resumed job once, at the same parallelism and at another.
TEST_P(MlPredictRestore, RequestsInFlightSurviveASavepoint) {
  for (auto [p1, p2] : {std::pair{1, 1}, {1, 2}}) {
    RestoreJob job = single_op_job("predict", predict_op("ORDERED"), rising_steps(watermarks_between_steps()));
    auto s = fresh(job.steps);
    auto graph = [&](int p) { return from_spec(job.spec(name_, p), test_registry()); };
    TempDir dir;
    std::filesystem::path savepoint;
    {
      s->pause_at = 1;
      auto handle = execute_async(graph(p1), checkpointing(dir.path, 0));
      while (s->emitted.load() < 1 && !handle.wait_for(1ms)) {
      }
      std::this_thread::sleep_for(500ms);  // step 0's rows answered
      delay(1500);
      s->pause_at = 3;
      while (s->emitted.load() < 3 && !handle.wait_for(1ms)) {
      }
      std::this_thread::sleep_for(200ms);  // the rows of steps 1 and 2 reach the op and wait
      ASSERT_EQ(handle.status(), JobStatus::kRunning) << handle.error();
      savepoint = handle.stop_with_savepoint(dir.path / "sp");
    }
    delay(0);
    const std::size_t before = s->sink->values().size();
    EXPECT_LE(before, 6u) << "only step 0's rows can have been predicted before the delay";
    s->pause_at = kNoPause;
    auto o = checkpointing(dir.path, 0);
    o.restore = RestoreSettings{savepoint};
    auto handle = execute_async(graph(p2), o);
    handle.wait_for(std::chrono::minutes(1));
    ASSERT_EQ(handle.status(), JobStatus::kFinished) << handle.error();
    EXPECT_EQ(sorted(s->sink->values()), expected_rows()) << p1 << " -> " << p2;
  }
}

// A C++ closure provider (register_model_function): y = 2 * x over whole batches, behind
// the same op, restored the same way.
json closure_op() {
  using namespace sql;
  auto dim = make_schema({{"x", LogicalType::double_type()}, {"y", LogicalType::double_type()}});
  std::vector<RowField> out = kv_schema()->fields();
  for (const auto& f : dim->fields()) out.push_back(f);
  json params = {
      {"input_schemas", json::array({schema_json(kv_schema())})},
      {"schema", schema_json(std::make_shared<Schema>(out))},
      {"join_type", "left"},
      {"table", "doubler"},
      {"lookup", kLookupFunctionSource},
      {"options", {{"lookup_function", kMlPredictLookupFunction}, {kMlModelNameOption, "doubler"},
                   {"lookup.max-retries", "0"}, {"provider", "test_doubler"}}},
      {"dim_schema", schema_json(dim)},
      {"dim_columns", {0, 1}},
      {"keys", json::array({{{"column", 0},
                             {"value", expr_to_json(*expr::cast(expr::column(2, LogicalType::bigint(), "v"),
                                                                LogicalType::double_type()))}}})},
      {"async", {{"capacity", 100}, {"output_mode", "ORDERED"}, {"timeout_ms", 60000}}}};
  return {{"id", "predict"},
          {"type", kSqlLookupJoin},
          {"params", std::move(params)},
          {"inputs", json::array({{{"from", "inj"}, {"partitioning", "rebalance"}}})}};
}

TEST_P(MlPredictRestore, ClosureProvider) {
  sql::register_model_function("test_doubler", [](const sql::ColumnBatch& features, sql::ColumnBatch& outputs) {
    const sql::Column& x = features.column(0);
    for (std::size_t r = 0; r < features.size(); ++r) outputs.column(0).append_value(sql::Value(2 * x.value_at(r).as_double()));
    outputs.commit_rows(features.size());
  });
  std::vector<std::string> expected;
  for (std::string k : {"a", "b", "c", "d", "e", "f"})
    for (auto [t, v] : {std::pair{1, 1}, {12, 2}, {15, 4}, {21, 8}, {29, 16}})
      expected.push_back(fmt::format("+I[{}, {}, {}, {}, {}]", print_timestamp_ms(t), k, v, number(v), number(2 * v)));
  expect_restores(single_op_job("predict", closure_op(), rising_steps(watermarks_between_steps())), {},
                  sorted(expected));
}

}  // namespace
}  // namespace clink::test
