// The acceptance test of ML_PREDICT's failure handling: a streaming job (datagen, 3000 rows
// at 150 rows/s) calls the iris model server, which is killed with SIGKILL mid-stream and
// started again. With on_error = 'fail' the job fails, restarts from its last checkpoint
// (the rows in flight are in it) until the server answers, and the exactly-once file sink
// holds every row once with the model's exact prediction: no gap, no duplicate. With
// on_error = 'null' the job keeps running and the rows of the outage carry NULL outputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../support/clink_process.hpp"
#include "../tools/clink_runner.hpp"
#include "model_server.hpp"

namespace clink::test {
namespace {

using json = nlohmann::json;
constexpr int kRows = 3000;

// The features of row `id`, as the script computes them: CAST(a + MOD(id, m) AS DOUBLE) / 10.
json features(int id) {
  auto f = [&](int a, int m) { return json::parse(fmt::format("{}.{}", (a + id % m) / 10, (a + id % m) % 10)); };
  return {{"sepal_length", f(43, 37)}, {"sepal_width", f(20, 13)}, {"petal_length", f(10, 59)}, {"petal_width", f(1, 24)}};
}

class MlPredictOutageTest : public ClinkCliTest {
 protected:
  MlPredictOutageTest() : ClinkCliTest("clink_ml_outage_") {}

  std::string script(int port, const std::string& on_error) {
    return write("job.sql", fmt::format(R"(
CREATE TABLE ids (id INT) WITH ('connector' = 'datagen', 'rows-per-second' = '150',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{rows}');
CREATE VIEW flowers AS SELECT id,
  CAST(43 + MOD(id, 37) AS DOUBLE) / 10 AS sl, CAST(20 + MOD(id, 13) AS DOUBLE) / 10 AS sw,
  CAST(10 + MOD(id, 59) AS DOUBLE) / 10 AS pl, CAST(1 + MOD(id, 24) AS DOUBLE) / 10 AS pw FROM ids;
CREATE MODEL iris
  INPUT (sepal_length DOUBLE, sepal_width DOUBLE, petal_length DOUBLE, petal_width DOUBLE)
  OUTPUT (species STRING, class_id INT, probability DOUBLE)
  WITH ('provider' = 'http', 'endpoint' = 'http://127.0.0.1:{port}/predict', 'max_batch_size' = '8',
        'max-retries' = '1', 'retry-backoff' = '50ms', 'request-timeout' = '2s', 'on_error' = '{on_error}');
CREATE TABLE out (id INT, species STRING, class_id INT, probability DOUBLE)
  WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json');
INSERT INTO out SELECT id, species, class_id, probability
FROM ML_PREDICT(TABLE flowers, MODEL iris, DESCRIPTOR(sl, sw, pl, pw));
)",
                                                  fmt::arg("rows", kRows), fmt::arg("port", port),
                                                  fmt::arg("on_error", on_error), fmt::arg("out", (dir_ / "out").string())));
  }

  // The committed rows of the sink (its part files; in-progress ones are hidden).
  std::vector<json> committed() {
    std::vector<json> rows;
    if (!std::filesystem::exists(dir_ / "out")) return rows;
    for (const auto& e : std::filesystem::directory_iterator(dir_ / "out")) {
      if (e.path().filename().string().front() == '.') continue;
      std::ifstream in(e.path());
      for (std::string l; std::getline(in, l);)
        if (!l.empty()) rows.push_back(json::parse(l));
    }
    return rows;
  }

  // Runs the job, killing the server once output arrived and starting it again 1 s later.
  std::vector<json> run_with_outage(int port, const std::string& on_error, std::string& err) {
    ModelServer server(port, dir_);
    const std::string job = script(port, on_error);
    ClinkProcess p({"run", "-q", "--checkpoint-dir", (dir_ / "chk").string(), "--checkpoint-interval", "300",
                    "--restart-attempts", "1000", "--restart-delay", "200", job},
                   dir_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (committed().size() < 300 && std::chrono::steady_clock::now() < deadline && !p.wait_for(50)) {
    }
    server.kill();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    server.start();  // training again takes a few seconds: the outage
    auto code = p.wait_for(5 * 60 * 1000);
    err = slurp(dir_ / "run.err");
    EXPECT_EQ(code, std::optional<int>(0)) << err;
    return committed();
  }

  std::map<int, json> expected() {
    std::vector<std::string> rows;
    for (int id = 1; id <= kRows; ++id) rows.push_back(features(id).dump());
    auto preds = model_expect(dir_, rows);
    std::map<int, json> out;
    for (int id = 1; id <= kRows; ++id) out[id] = json::parse(preds[static_cast<std::size_t>(id - 1)]);
    return out;
  }
};

TEST_F(MlPredictOutageTest, OnErrorFailRestartsFromTheCheckpointWithoutGapOrDuplicate) {
  std::string err;
  auto rows = run_with_outage(18610, "fail", err);
  EXPECT_THAT(err, ::testing::HasSubstr("model `iris`"));  // the failure behind the restarts
  auto want = expected();
  std::map<int, int> seen;
  for (const auto& r : rows) {
    const int id = r["id"].get<int>();
    ++seen[id];
    ASSERT_FALSE(r["species"].is_null()) << r.dump();
    EXPECT_EQ(r["species"], want[id]["species"]) << id;
    EXPECT_EQ(r["class_id"], want[id]["class_id"]) << id;
    EXPECT_EQ(r["probability"], want[id]["probability"]) << id;
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kRows)) << "a gap";
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << "row " << id << " duplicated";
}

TEST_F(MlPredictOutageTest, OnErrorNullGivesNullsDuringTheOutage) {
  std::string err;
  auto rows = run_with_outage(18611, "null", err);
  auto want = expected();
  std::map<int, int> seen;
  int nulls = 0, last_null = 0;
  for (const auto& r : rows) {
    const int id = r["id"].get<int>();
    ++seen[id];
    if (r["species"].is_null()) {
      EXPECT_TRUE(r["class_id"].is_null() && r["probability"].is_null()) << r.dump();
      ++nulls;
      last_null = std::max(last_null, id);
      continue;
    }
    EXPECT_EQ(r["species"], want[id]["species"]) << id;
    EXPECT_EQ(r["probability"], want[id]["probability"]) << id;
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kRows));
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << "row " << id << " duplicated";
  EXPECT_GT(nulls, 0) << "the outage left no NULL rows";
  EXPECT_LT(last_null, kRows) << "the rows after the outage have predictions again";
}

}  // namespace
}  // namespace clink::test
