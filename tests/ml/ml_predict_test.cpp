// ML_PREDICT and CREATE MODEL end to end: `clink run` scripts calling a real model server
// (tests/ml/model_server.py: a scikit-learn LogisticRegression on iris, a TF-IDF + SVD
// embedding and a TF-IDF sentiment classifier, trained when it starts) on loopback. The
// expected outputs come from the same models (model_server.py --expect).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../tools/clink_runner.hpp"
#include "model_server.hpp"

namespace clink::test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

// Ports 18600-18699 are the ML tests'; each test its own.
constexpr int kBasePort = 18600;

// Iris-like flowers: id, then the four features.
const std::vector<std::vector<double>> kFlowers = {
    {5.1, 3.5, 1.4, 0.2}, {4.9, 3.0, 1.4, 0.2}, {7.0, 3.2, 4.7, 1.4}, {6.4, 3.2, 4.5, 1.5}, {6.3, 3.3, 6.0, 2.5},
    {5.8, 2.7, 5.1, 1.9}, {5.7, 2.8, 4.1, 1.3}, {6.7, 3.0, 5.2, 2.3}, {5.0, 3.4, 1.5, 0.2}, {6.0, 2.2, 5.0, 1.5},
    {5.1, 3.5, 1.4, 0.2}, {5.5, 2.5, 4.0, 1.3}};

std::string number(double v) {
  std::string s = fmt::format("{}", v);
  return s.find('.') == std::string::npos ? s + ".0" : s;
}

class MlPredictTest : public ClinkCliTest {
 protected:
  MlPredictTest() : ClinkCliTest("clink_ml_") {}

  std::string flowers_csv() {
    std::string csv;
    for (std::size_t i = 0; i < kFlowers.size(); ++i) {
      csv += std::to_string(i + 1);
      for (double v : kFlowers[i]) csv += "," + number(v);
      csv += "\n";
    }
    return write("flowers.csv", csv);
  }

  std::string iris_model(int port, const std::string& extra = "") {
    return "CREATE MODEL iris\n"
           "INPUT (sepal_length DOUBLE, sepal_width DOUBLE, petal_length DOUBLE, petal_width DOUBLE)\n"
           "OUTPUT (species STRING, class_id INT, probability DOUBLE)\n"
           "WITH ('provider' = 'http', 'endpoint' = 'http://127.0.0.1:" + std::to_string(port) + "/predict'" + extra +
           ");\n";
  }

  std::string flowers_table() {
    return "CREATE TABLE flowers (id INT, sl DOUBLE, sw DOUBLE, pl DOUBLE, pw DOUBLE) WITH ("
           "'connector' = 'filesystem', 'path' = '" + flowers_csv() + "', 'format' = 'csv');\n";
  }

  // The iris model's answer per flower, as the print sink shows `id, species, class_id, probability`.
  std::vector<std::string> expected_flowers() {
    std::vector<std::string> rows;
    for (const auto& f : kFlowers)
      rows.push_back(json({{"sepal_length", f[0]}, {"sepal_width", f[1]}, {"petal_length", f[2]}, {"petal_width", f[3]}}).dump());
    auto preds = model_expect(dir_, rows);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < preds.size(); ++i) {
      auto p = json::parse(preds[i]);
      out.push_back(fmt::format("+I[{}, {}, {}, {}]", i + 1, p["species"].get<std::string>(), p["class_id"].get<int>(),
                                number(p["probability"].get<double>())));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // `clink run` of the flowers through the iris model (`extra` model options) FROM `call`,
  // printing id and the OUTPUT columns.
  Result run_flowers(int port, const std::string& extra, const std::string& call) {
    return clink("run -q " + write("s.sql", flowers_table() + iris_model(port, extra) +
                                                "CREATE TABLE out (id INT, species STRING, class_id INT, probability DOUBLE) "
                                                "WITH ('connector' = 'print');\n"
                                                "INSERT INTO out SELECT id, species, class_id, probability FROM " + call +
                                                ";\n"));
  }

  // GET /admin/stats or POST /admin/fail through the venv's Python.
  json admin(int port, const std::string& path, const std::string& body = "") {
    const auto out = dir_ / "admin.out";
    const std::string script = write("admin.py", "import sys, urllib.request\n"
                                                 "body = sys.argv[2].encode() if len(sys.argv) > 2 else None\n"
                                                 "r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=body, "
                                                 "headers={'Content-Type': 'application/json'}))\n"
                                                 "sys.stdout.write(r.read().decode())\n");
    std::string cmd = "'" + venv_python() + "' '" + script + "' 'http://127.0.0.1:" + std::to_string(port) + path + "'" +
                      (body.empty() ? "" : " '" + body + "'") + " > '" + out.string() + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return json::parse(slurp(out));
  }
};

TEST_F(MlPredictTest, HttpProviderOneRowPerRequest) {
  ModelServer server(kBasePort + 1, dir_);
  Result r = run_flowers(server.port(), "", "ML_PREDICT(TABLE flowers, MODEL iris, DESCRIPTOR(sl, sw, pl, pw))");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.sorted_lines(), expected_flowers());
  // One request per distinct feature row (two flowers are the same).
  EXPECT_EQ(admin(server.port(), "/admin/stats")["requests"], kFlowers.size() - 1);
}

TEST_F(MlPredictTest, HttpProviderBatchesRowsPerRequest) {
  ModelServer server(kBasePort + 2, dir_);
  Result r = run_flowers(server.port(), ", 'max_batch_size' = '4'",
                         "TABLE(ML_PREDICT(TABLE flowers, MODEL iris, DESCRIPTOR(sl, sw, pl, pw)))");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.sorted_lines(), expected_flowers());
  const json stats = admin(server.port(), "/admin/stats");
  EXPECT_EQ(stats["rows"], kFlowers.size() - 1);
  EXPECT_LE(stats["requests"].get<int>(), 3) << "11 distinct rows in requests of at most 4";
}

// 'SELECT *': the input's columns, then the OUTPUT columns; a config map overrides the model's options.
TEST_F(MlPredictTest, SelectStarAndConfigMap) {
  ModelServer server(kBasePort + 3, dir_);
  const std::string script =
      write("s.sql", flowers_table() + iris_model(server.port()) +
                         "CREATE TABLE out (id INT, sl DOUBLE, sw DOUBLE, pl DOUBLE, pw DOUBLE, species STRING, "
                         "class_id INT, probability DOUBLE) WITH ('connector' = 'print');\n"
                         "INSERT INTO out SELECT * FROM ML_PREDICT(TABLE flowers, MODEL iris, DESCRIPTOR(sl, sw, pl, pw),\n"
                         "  MAP['async', 'true', 'max_batch_size', '8', 'max-concurrent-operations', '2', 'timeout', '30s']);\n");
  Result r = clink("run -q " + script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto expected = expected_flowers();
  std::vector<std::string> got;
  for (const auto& l : r.lines()) {
    // Drop the four feature columns to compare with the expected (id, outputs).
    std::vector<std::string> cells;
    std::string inner = l.substr(3, l.size() - 4);
    for (std::size_t b = 0;;) {
      std::size_t e = inner.find(", ", b);
      cells.push_back(inner.substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) break;
      b = e + 2;
    }
    ASSERT_EQ(cells.size(), 8u) << l;
    got.push_back("+I[" + cells[0] + ", " + cells[5] + ", " + cells[6] + ", " + cells[7] + "]");
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
  EXPECT_LE(admin(server.port(), "/admin/stats")["requests"].get<int>(), 2);
}

// Transient failures (503) are retried with backoff; with the retries spent, on_error = 'null'
// gives NULL outputs and 'fail' fails the job naming the model and the status.
TEST_F(MlPredictTest, RetriesThenOnError) {
  ModelServer server(kBasePort + 4, dir_);
  const std::string tail =
      "CREATE TABLE out (id INT, species STRING) WITH ('connector' = 'print');\n"
      "INSERT INTO out SELECT id, species FROM ML_PREDICT(TABLE flowers, MODEL iris, DESCRIPTOR(sl, sw, pl, pw), "
      "MAP['max_batch_size', '16']);\n";
  admin(server.port(), "/admin/fail", R"({"count": 2, "status": 503})");
  Result r = clink("run -q " + write("a.sql", flowers_table() + iris_model(server.port(), ", 'max-retries' = '3', 'retry-backoff' = '20ms'") + tail));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines().size(), kFlowers.size());
  for (const auto& l : r.lines()) EXPECT_THAT(l, ::testing::Not(HasSubstr("null"))) << l;

  admin(server.port(), "/admin/fail", R"({"count": 1, "status": 429})");
  r = clink("run -q " + write("b.sql", flowers_table() + iris_model(server.port(), ", 'max-retries' = '0', 'on_error' = 'null'") + tail));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines().size(), kFlowers.size());
  for (const auto& l : r.lines()) EXPECT_THAT(l, HasSubstr(", null]")) << l;

  admin(server.port(), "/admin/fail", R"({"count": 1, "status": 400})");
  r = clink("run -q " + write("c.sql", flowers_table() + iris_model(server.port(), ", 'max-retries' = '5'") + tail));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("model `iris`: HTTP 400 from http://127.0.0.1:" + std::to_string(server.port()) + "/predict"));
}

// provider 'openai': /v1/embeddings -> ARRAY<FLOAT>, /v1/chat/completions -> STRING.
TEST_F(MlPredictTest, OpenAiEmbeddingsAndChat) {
  ModelServer server(kBasePort + 5, dir_);
  const std::vector<std::string> texts = {"checkpoints make state exactly once", "a model server answers predictions",
                                          "great fast and reliable", "terrible slow and broken",
                                          "sql queries run over unbounded tables"};
  std::string csv;
  for (std::size_t i = 0; i < texts.size(); ++i) csv += std::to_string(i + 1) + "," + texts[i] + "\n";
  const std::string table = "CREATE TABLE docs (id INT, body STRING) WITH ('connector' = 'filesystem', 'path' = '" +
                            write("docs.csv", csv) + "', 'format' = 'csv');\n";
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(server.port()) + "/v1/";
  Result r = clink("run -q " + write("e.sql", table +
      "CREATE MODEL embed INPUT (text STRING) OUTPUT (embedding ARRAY<FLOAT>) WITH ('provider' = 'openai', "
      "'endpoint' = '" + endpoint + "embeddings', 'api-key' = 'test-key', 'model' = 'tfidf-svd');\n"
      "CREATE MODEL sentiment INPUT (text STRING) OUTPUT (label STRING) WITH ('provider' = 'openai', "
      "'endpoint' = '" + endpoint + "chat/completions', 'api-key' = 'test-key', 'model' = 'tfidf-lr', "
      "'system-prompt' = 'Classify the sentiment.');\n"
      "CREATE TABLE out (id INT, embedding ARRAY<FLOAT>) WITH ('connector' = 'print');\n"
      "CREATE TABLE out2 (id INT, label STRING) WITH ('connector' = 'print');\n"
      "EXECUTE STATEMENT SET BEGIN\n"
      "INSERT INTO out SELECT id, embedding FROM ML_PREDICT(TABLE docs, MODEL embed, DESCRIPTOR(body));\n"
      "INSERT INTO out2 SELECT id, label FROM ML_PREDICT(TABLE docs, MODEL sentiment, DESCRIPTOR(body));\n"
      "END;\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> rows;
  for (const auto& t : texts) rows.push_back(json({{"text", t}}).dump());
  auto vectors = model_expect(dir_, rows, "embeddings");
  auto labels = model_expect(dir_, rows, "chat");
  std::vector<std::string> expected;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::string v;
    const json vector = json::parse(vectors[i]);
    for (const auto& x : vector["embedding"]) v += (v.empty() ? "" : ", ") + number(x.get<double>());
    expected.push_back(fmt::format("+I[{}, [{}]]", i + 1, v));
    expected.push_back(fmt::format("+I[{}, {}]", i + 1, json::parse(labels[i])["content"].get<std::string>()));
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(r.sorted_lines(), expected);
}

// Models persist in the catalog directory: SHOW MODELS / SHOW CREATE MODEL in a later run,
// then DROP MODEL removes the file.
TEST_F(MlPredictTest, ModelsPersistInTheCatalog) {
  const std::string catalog = (dir_ / "catalog").string();
  Result r = clink("run -q --catalog-dir " + catalog + " " +
                   write("a.sql", iris_model(kBasePort + 6) +
                                      "CREATE TEMPORARY MODEL tmp INPUT (x STRING) OUTPUT (y STRING) WITH ('provider' = 'http', "
                                      "'endpoint' = 'http://127.0.0.1:1/');\n"
                                      "CREATE MODEL IF NOT EXISTS iris INPUT (x INT) OUTPUT (y INT) WITH ('provider' = 'http');\n"
                                      "SHOW MODELS;\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| model name |"));
  EXPECT_THAT(r.out, HasSubstr("|        tmp |"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "catalog/models/iris.json"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "catalog/models/tmp.json"));
  r = clink("run -q --catalog-dir " + catalog + " " + write("b.sql", "SHOW MODELS;\nSHOW CREATE MODEL iris;\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("|       iris |"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("tmp")));
  EXPECT_THAT(r.out, HasSubstr("CREATE MODEL `default_catalog`.`default_database`.iris\nINPUT (\n  sepal_length DOUBLE,"));
  EXPECT_THAT(r.out, HasSubstr("  'provider' = 'http',\n"));
  r = clink("run -q --catalog-dir " + catalog + " " + write("c.sql", "DROP MODEL iris;\nDROP MODEL IF EXISTS iris;\nSHOW MODELS;\n"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Empty set"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "catalog/models/iris.json"));
}

// Rejected forms, each with its position.
TEST_F(MlPredictTest, ErrorsNameTheProblemAndItsPosition) {
  const std::string model = iris_model(kBasePort + 7);  // lines 1-4
  auto err = [&](const std::string& name, const std::string& sql) {
    Result r = clink("run -q " + write(name, flowers_table() + model + sql));
    EXPECT_NE(r.exit_code, 0) << sql;
    return r.err;
  };
  // line 1: flowers, 2-5: the model, 6: the statement
  EXPECT_THAT(err("a.sql", "SELECT * FROM ML_PREDICT(TABLE flowers, MODEL nope, DESCRIPTOR(sl, sw, pl, pw));\n"),
              HasSubstr("a.sql: line 6, column 41: Model `nope` not found"));
  EXPECT_THAT(err("b.sql", "SELECT * FROM ML_PREDICT(TABLE flowers, MODEL iris, DESCRIPTOR(sl, sw));\n"),
              HasSubstr("b.sql: line 6, column 53: ML_PREDICT: the DESCRIPTOR has 2 columns but model `iris` has 4 INPUT columns"));
  EXPECT_THAT(err("c.sql", "CREATE TABLE t2 (s STRING, a DOUBLE, b DOUBLE, c DOUBLE) WITH ('connector' = 'datagen');\n"
                           "SELECT * FROM ML_PREDICT(TABLE t2, MODEL iris, DESCRIPTOR(s, a, b, c));\n"),
              HasSubstr("c.sql: line 7, column 48: ML_PREDICT: the DESCRIPTOR column `s` is STRING, model `iris`'s INPUT column "
                        "`sepal_length` is DOUBLE"));
  EXPECT_THAT(err("d.sql", "SELECT * FROM ML_PREDICT(TABLE flowers, MODEL iris, DESCRIPTOR(sl, sw, pl, nope));\n"),
              HasSubstr("d.sql: line 6, column 53: Column 'nope' not found in any table"));
  EXPECT_THAT(err("e.sql", "CREATE MODEL m2 INPUT (x INT) OUTPUT (y INT)\nWITH ('provider' = 'tensorflow');\n"),
              HasSubstr("e.sql: line 7, column 7: Unknown model provider 'tensorflow' for model `m2` (known providers: http, openai)"));
  EXPECT_THAT(err("f.sql", "CREATE MODEL m3 INPUT (x INT) OUTPUT (y INT) WITH ('task' = 'classification');\n"),
              HasSubstr("f.sql: line 6, column 46: Model `m3` needs the option 'provider'"));
  EXPECT_THAT(err("g.sql", "SELECT * FROM ML_PREDICT(TABLE flowers, MODEL iris, DESCRIPTOR(sl, sw, pl, pw), MAP['colour', 'red']);\n"),
              HasSubstr("g.sql: line 6, column 85: Unsupported ML_PREDICT config option 'colour'"));
  EXPECT_THAT(err("h.sql", "DROP MODEL nope;\n"), HasSubstr("h.sql: line 6, column 1: Model `nope` does not exist"));
  EXPECT_THAT(err("i.sql", "CREATE MODEL iris INPUT (x INT) OUTPUT (y INT) WITH ('provider' = 'http');\n"),
              HasSubstr("i.sql: line 6, column 1: Model `iris` already exists"));
}

}  // namespace
}  // namespace clink::test
