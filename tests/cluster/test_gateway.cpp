// Flink's SQL Gateway REST API on a clink coordinator (docs/sql-gateway.md): REST-level
// tests with Flink's exact bodies (as Flink 2.3's own gateway answers them), and the
// acceptance test: Flink's real `sql-client.sh gateway` runs a CREATE TABLE, an INSERT
// and a streaming SELECT against clink and prints the right rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <regex>

#include "../support/clink_process.hpp"
#include "coordinator_process.hpp"

namespace clink::test {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kString = R"({"type":"VARCHAR","nullable":true,"length":2147483647})";

// A coordinator with its SQL gateway on a free port (the "sql-gateway: http://H:P" line).
class Gateway : public ::testing::Test {
 protected:
  // The coordinator's flags besides the gateway's (default: a worker inside it).
  virtual std::vector<std::string> coordinator_flags() const { return {}; }
  void SetUp() override {
    dir_ = scratch_dir("clink_gateway_test_");
    fs::create_directories(dir_ / "in");
    std::ofstream(dir_ / "in" / "data.csv") << "a,1\nb,2\na,3\n";
    std::vector<std::string> flags{"--sql-gateway-port", "0"};
    for (const auto& f : coordinator_flags()) flags.push_back(f);
    coordinator_ = std::make_unique<CoordinatorProcess>(dir_, flags);
    std::smatch m;
    std::string out = slurp_file(dir_ / "coordinator.out");
    static const std::regex line(R"(sql-gateway: http://([^:\s]+):(\d+)\n)");
    ASSERT_TRUE(std::regex_search(out, m, line)) << out << coordinator_->stderr_text();
    port_ = std::stoi(m[2]);
    http_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    http_->set_read_timeout(30, 0);
  }
  void TearDown() override {
    http_.reset();
    coordinator_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  struct Answer {
    int status = 0;
    json body;
  };
  static Answer answer(const httplib::Result& r) {
    if (!r) return {0, json()};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  Answer get(const std::string& path) { return answer(http_->Get(path)); }
  Answer post(const std::string& path, const json& body = json::object()) {
    return answer(http_->Post(path, body.dump(), "application/json"));
  }
  Answer del(const std::string& path) { return answer(http_->Delete(path)); }

  std::string open_session(const json& body = json::object()) {
    auto a = post("/v4/sessions", body);
    EXPECT_EQ(a.status, 200) << a.body.dump();
    return a.body.value("sessionHandle", "");
  }
  std::string submit(const std::string& session, const std::string& statement) {
    auto a = post("/v4/sessions/" + session + "/statements", json{{"statement", statement}, {"executionTimeout", 0}});
    EXPECT_EQ(a.status, 200) << a.body.dump();
    return a.body.value("operationHandle", "");
  }
  std::string result_path(const std::string& s, const std::string& o, int token, const char* format = "JSON") {
    return "/v4/sessions/" + s + "/operations/" + o + "/result/" + std::to_string(token) + "?rowFormat=" + format;
  }
  // The first page that is not NOT_READY (the statement ran).
  Answer first_page(const std::string& s, const std::string& o, const char* format = "JSON") {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    Answer a;
    do {
      a = get(result_path(s, o, 0, format));
      if (a.status != 200 || a.body.value("resultType", "") != "NOT_READY") return a;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < deadline);
    ADD_FAILURE() << "statement still NOT_READY after 60 s";
    return a;
  }
  // Every page of a query until EOS: its rows as "KIND:field|field", and its pages.
  std::vector<std::string> all_rows(const std::string& s, const std::string& o, int* pages = nullptr, std::string* job = nullptr) {
    std::vector<std::string> rows;
    Answer a = first_page(s, o);
    if (job) *job = a.body.value("jobID", "");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int token = 0; std::chrono::steady_clock::now() < deadline;) {
      EXPECT_EQ(a.status, 200) << a.body.dump();
      if (a.status != 200) break;
      if (pages) ++*pages;
      for (const auto& r : a.body["results"]["data"]) {
        std::string line = r["kind"].get<std::string>() + ":";
        for (std::size_t i = 0; i < r["fields"].size(); ++i) line += (i ? "|" : "") + r["fields"][i].dump();
        rows.push_back(line);
      }
      if (a.body["resultType"] == "EOS") return rows;
      EXPECT_EQ(a.body["nextResultUri"], result_path(s, o, token + 1));
      a = get(result_path(s, o, ++token));
    }
    ADD_FAILURE() << "no EOS";
    return rows;
  }
  void create_tables(const std::string& s) {
    for (const std::string& sql : std::vector<std::string>
         {"SET 'parallelism.default' = '1'",
          "CREATE TABLE src (w STRING, n INT) WITH ('connector' = 'filesystem', 'path' = '" + (dir_ / "in").string() +
              "', 'format' = 'csv')",
          "CREATE TABLE dst (w STRING, n INT) WITH ('connector' = 'filesystem', 'path' = '" + (dir_ / "out").string() +
              "', 'format' = 'csv')"}) {
      auto a = first_page(s, submit(s, sql));
      ASSERT_EQ(a.status, 200) << sql << ": " << a.body.dump();
      ASSERT_EQ(a.body["resultKind"], "SUCCESS") << sql << ": " << a.body.dump();
    }
  }

  fs::path dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  int port_ = 0;
  std::unique_ptr<httplib::Client> http_;
};

// A materialized table created in a gateway session is the coordinator's: every session
// sees it, and its refresh scheduler refreshes it on its freshness (exact rows after a
// source change) until a session SUSPENDs it.
TEST_F(Gateway, AMaterializedTableOfASessionIsRefreshedByTheCoordinator) {
  const std::string s = open_session();
  create_tables(s);
  const fs::path backing = dir_ / "totals" / "part-0.json";
  auto a = first_page(s, submit(s, "CREATE MATERIALIZED TABLE totals WITH ('path' = '" + (dir_ / "totals").string() +
                                       "') FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = FULL AS "
                                       "SELECT w, SUM(n) AS total FROM src GROUP BY w"));
  ASSERT_EQ(a.status, 200) << a.body.dump();
  ASSERT_EQ(a.body["resultKind"], "SUCCESS") << a.body.dump();
  auto rows = [&] {
    std::vector<std::string> v;
    std::istringstream in(slurp_file(backing));
    for (std::string l; std::getline(in, l);) v.push_back(l);
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(rows(), (std::vector<std::string>{R"({"w":"a","total":4})", R"({"w":"b","total":2})"}));
  std::ofstream(dir_ / "in" / "more.csv") << "c,5\n";
  const std::vector<std::string> refreshed{R"({"w":"a","total":4})", R"({"w":"b","total":2})", R"({"w":"c","total":5})"};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (rows() != refreshed && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(rows(), refreshed) << coordinator_->stderr_text();

  const std::string other = open_session();
  EXPECT_EQ(all_rows(other, submit(other, "SHOW MATERIALIZED TABLES")), std::vector<std::string>{"INSERT:\"totals\""});
  a = first_page(other, submit(other, "ALTER MATERIALIZED TABLE totals SUSPEND"));
  ASSERT_EQ(a.body["resultKind"], "SUCCESS") << a.body.dump();
  std::ofstream(dir_ / "in" / "late.csv") << "d,6\n";
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(rows(), refreshed);
}

TEST_F(Gateway, SessionLifecycleWithFlinksBodies) {
  EXPECT_EQ(get("/v1/api_versions").body, json::parse(R"({"versions":["V1","V2","V3","V4"]})"));
  EXPECT_EQ(get("/v2/info").body, json::parse(R"({"productName":"Apache Flink","version":"2.3.0"})"));

  std::string s = open_session(json{{"sessionName", "test"}, {"properties", {{"my.key", "v1"}}}});
  EXPECT_THAT(s, ::testing::MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  auto props = get("/v4/sessions/" + s);
  ASSERT_EQ(props.status, 200);
  EXPECT_EQ(props.body["properties"]["my.key"], "v1");
  EXPECT_EQ(post("/v1/sessions/" + s + "/heartbeat").body, json::object());

  auto configured = post("/v2/sessions/" + s + "/configure-session", json{{"statement", "SET 'pipeline.name' = 'gw'"}});
  EXPECT_EQ(configured.status, 200);
  EXPECT_EQ(configured.body, json::object());
  EXPECT_EQ(get("/v4/sessions/" + s).body["properties"]["pipeline.name"], "gw");
  auto refused = post("/v2/sessions/" + s + "/configure-session", json{{"statement", "SELECT 1"}});
  EXPECT_EQ(refused.status, 500);
  EXPECT_THAT(refused.body["errors"][0].get<std::string>(), ::testing::HasSubstr("Unsupported statement for configuring session: SELECT 1"));

  EXPECT_EQ(del("/v1/sessions/" + s).body, json::parse(R"({"status":"CLOSED"})"));
  auto gone = get("/v1/sessions/" + s);
  EXPECT_EQ(gone.status, 500);
  json gone_body{{"errors", {"Session '" + s + "' does not exist."}}};
  EXPECT_EQ(gone.body, gone_body);
  auto bad = get("/v1/sessions/nope/operations/x/status");
  EXPECT_EQ(bad.status, 400);
  json bad_body{{"errors", {"Bad request, could not parse parameters: Cannot resolve path parameter "
                            "(session_handle) from value \"nope\"."}}};
  EXPECT_EQ(bad.body, bad_body);
  EXPECT_EQ(get("/v1/nothing").status, 404);
  EXPECT_EQ(get("/v1/nothing").body, json::parse(R"({"errors":["Not found: /v1/nothing"]})"));
}

TEST_F(Gateway, DdlAnswersOkAndAnInsertIsAJobWritingItsRows) {
  std::string s = open_session();
  create_tables(s);
  std::string op = submit(s, "CREATE TABLE t2 (x INT) WITH ('connector' = 'datagen')");
  auto ok = first_page(s, op);
  json expected = json::parse(std::string(R"({"resultType":"PAYLOAD","isQueryResult":false,"resultKind":"SUCCESS",
      "results":{"columns":[{"name":"result","logicalType":)") + kString + R"(,"comment":null}],"rowFormat":"JSON",
      "data":[{"kind":"INSERT","fields":["OK"]}]}})");
  expected["nextResultUri"] = result_path(s, op, 1);
  EXPECT_EQ(ok.body, expected);
  EXPECT_EQ(get("/v4/sessions/" + s + "/operations/" + op + "/status").body, json::parse(R"({"status":"FINISHED"})"));
  auto eos = get(result_path(s, op, 1));
  EXPECT_EQ(eos.body["resultType"], "EOS");
  EXPECT_FALSE(eos.body.contains("nextResultUri"));

  // SHOW's rows, in Flink's column.
  auto shown = first_page(s, submit(s, "SHOW TABLES"));
  EXPECT_EQ(shown.body["results"]["columns"],
            json::parse(std::string(R"([{"name":"table name","logicalType":)") + kString + R"(,"comment":null}])"));
  EXPECT_EQ(shown.body["results"]["data"],
            json::parse(R"([{"kind":"INSERT","fields":["dst"]},{"kind":"INSERT","fields":["src"]},{"kind":"INSERT","fields":["t2"]}])"));

  std::string ins = submit(s, "INSERT INTO dst SELECT w, n * 10 FROM src");
  auto job = first_page(s, ins);
  ASSERT_EQ(job.status, 200) << job.body.dump();
  std::string id = job.body.value("jobID", "");
  ASSERT_THAT(id, ::testing::MatchesRegex("[0-9a-f]{32}"));
  json expected_job = json::parse(std::string(R"({"resultType":"PAYLOAD","isQueryResult":false,"jobID":")") + id +
                                  R"(","resultKind":"SUCCESS_WITH_CONTENT","results":{"columns":[{"name":"job id","logicalType":)" +
                                  kString + R"(,"comment":null}],"rowFormat":"JSON","data":[{"kind":"INSERT","fields":[")" + id +
                                  R"("]}]}})");
  expected_job["nextResultUri"] = result_path(s, ins, 1);
  EXPECT_EQ(job.body, expected_job);
  // The job is the coordinator's: Flink's REST API sees it finish.
  EXPECT_EQ(coordinator_->wait_for_state(id, "FINISHED", 60), "FINISHED");
  EXPECT_THAT(committed_lines(dir_ / "out"), ::testing::ElementsAre("a,10", "a,30", "b,20"));
}

TEST_F(Gateway, BoundedSelectIsServedInPagesUntilEos) {
  std::string s = open_session();
  create_tables(s);
  std::string op = submit(s, "SELECT w, n, n > 1 AS big, CAST(n AS DOUBLE) / 2 AS half FROM src");
  auto first = first_page(s, op);
  ASSERT_EQ(first.status, 200) << first.body.dump();
  EXPECT_EQ(first.body["isQueryResult"], true);
  EXPECT_THAT(first.body.value("jobID", ""), ::testing::MatchesRegex("[0-9a-f]{32}"));
  EXPECT_EQ(first.body["resultKind"], "SUCCESS_WITH_CONTENT");
  EXPECT_EQ(first.body["results"]["columns"], json::parse(std::string(R"([{"name":"w","logicalType":)") + kString + R"(,"comment":null},
      {"name":"n","logicalType":{"type":"INTEGER","nullable":true},"comment":null},
      {"name":"big","logicalType":{"type":"BOOLEAN","nullable":true},"comment":null},
      {"name":"half","logicalType":{"type":"DOUBLE","nullable":true},"comment":null}])"));
  // A page asked for again is the same page (a client retrying a lost answer).
  EXPECT_EQ(get(result_path(s, op, 0)).body, first.body);
  int pages = 0;
  EXPECT_THAT(all_rows(s, op, &pages), ::testing::ElementsAre(R"(INSERT:"a"|1|false|0.5)", R"(INSERT:"b"|2|true|1.0)",
                                                               R"(INSERT:"a"|3|true|1.5)"));
  EXPECT_GE(pages, 2);  // rows, then EOS
  // The query is a job of the coordinator, as Flink's REST API shows it.
  EXPECT_EQ(coordinator_->wait_for_state(first.body.value("jobID", ""), "FINISHED", 60), "FINISHED");
  // Tokens go forward one at a time.
  auto skipped = get(result_path(s, op, 100));
  EXPECT_EQ(skipped.status, 500);
  EXPECT_EQ(skipped.body["errors"][0], "Internal server error.");

  // PLAIN_TEXT: the fields as clink prints them.
  std::string op2 = submit(s, "SELECT w, n > 1 FROM src WHERE n = 2");
  auto plain = first_page(s, op2, "PLAIN_TEXT");
  for (int t = 1; plain.body["results"]["data"].empty() && plain.body["resultType"] == "PAYLOAD" && t < 600; ++t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    plain = get(result_path(s, op2, t, "PLAIN_TEXT"));
  }
  EXPECT_EQ(plain.body["results"]["rowFormat"], "PLAIN_TEXT");
  EXPECT_EQ(plain.body["results"]["data"], json::parse(R"([{"kind":"INSERT","fields":["b","TRUE"]}])"));
}

// ROW / ARRAY / MAP values in rowFormat=JSON rows: what Flink 2.3's SQL gateway answers
// for this SELECT (checked against a running Flink gateway): a ROW is an object of its
// fields, an ARRAY an array, a MAP with string keys an object, nested timestamps ISO-8601.
TEST_F(Gateway, NestedValuesInJsonRowsAreFlinksJson) {
  auto s = open_session();
  auto rows = all_rows(s, submit(s, "SELECT ROW(1, 'a') AS r, ARRAY[1, 2] AS a, MAP['k', 1.5] AS m, "
                                    "ARRAY[ROW(2, TIMESTAMP '2020-01-01 10:00:00')] AS ar, CAST(NULL AS ARRAY<INT>) AS n, "
                                    "MAP['z', ARRAY['x']] AS mi, CAST(ROW(3, 'b') AS ROW<x INT, y STRING>) AS named, "
                                    "ARRAY[CAST(NULL AS INT), 3] AS an"));
  EXPECT_EQ(rows, (std::vector<std::string>{
                      R"(INSERT:{"EXPR$0":1,"EXPR$1":"a"}|[1,2]|{"k":1.5}|[{"EXPR$0":2,"EXPR$1":"2020-01-01T10:00:00"}])"
                      R"(|null|{"z":["x"]}|{"x":3,"y":"b"}|[null,3])"}));
}

// Flink 2.3's gateway refuses a positive executionTimeout ("doesn't support timeout
// mechanism now"), as an internal error with the server-side exception; 0 runs.
TEST_F(Gateway, APositiveExecutionTimeoutIsRefusedAsFlinkDoes) {
  auto s = open_session();
  auto a = post("/v4/sessions/" + s + "/statements", json{{"statement", "SELECT 1"}, {"executionTimeout", 1000}});
  EXPECT_EQ(a.status, 500);
  ASSERT_EQ(a.body["errors"].size(), 2u) << a.body.dump();
  EXPECT_EQ(a.body["errors"][0], "Internal server error.");
  EXPECT_NE(a.body["errors"][1].get<std::string>().find(
                "Caused by: java.lang.UnsupportedOperationException: SqlGatewayService doesn't support timeout mechanism now."),
            std::string::npos)
      << a.body.dump();
  EXPECT_EQ(all_rows(s, submit(s, "SELECT 1")), std::vector<std::string>{"INSERT:1"}) << "executionTimeout 0 runs";
}

TEST_F(Gateway, StreamingGroupBySelectServesItsChangelog) {
  std::string s = open_session();
  create_tables(s);
  std::string op = submit(s, "SELECT w, SUM(n) AS total FROM src GROUP BY w");
  EXPECT_THAT(all_rows(s, op), ::testing::ElementsAre(R"(INSERT:"a"|1)", R"(INSERT:"b"|2)", R"(UPDATE_BEFORE:"a"|1)",
                                                      R"(UPDATE_AFTER:"a"|4)"));
  EXPECT_EQ(del("/v4/sessions/" + s + "/operations/" + op + "/close").body, json::parse(R"({"status":"CLOSED"})"));
  EXPECT_EQ(get("/v4/sessions/" + s + "/operations/" + op + "/status").status, 500);
}

TEST_F(Gateway, AnUnboundedSelectIsCancelled) {
  std::string s = open_session();
  std::string op = submit(s, "SELECT 1 AS one FROM (VALUES (1)) AS v(x)");  // warm the session
  first_page(s, op);
  auto c = post("/v4/sessions/" + s + "/statements",
                json{{"statement", "CREATE TABLE gen (x BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10')"}});
  first_page(s, c.body["operationHandle"]);
  std::string q = submit(s, "SELECT x FROM gen");
  ASSERT_EQ(first_page(s, q).status, 200);
  EXPECT_EQ(post("/v4/sessions/" + s + "/operations/" + q + "/cancel").body, json::parse(R"({"status":"CANCELED"})"));
  EXPECT_EQ(get("/v4/sessions/" + s + "/operations/" + q + "/status").body, json::parse(R"({"status":"CANCELED"})"));
  EXPECT_EQ(get(result_path(s, q, 1)).status, 500);
}

TEST_F(Gateway, AFailingStatementReportsItsErrorAsFlinkDoes) {
  std::string s = open_session();
  std::string op = submit(s, "SELECT * FROM missing_table");
  auto a = first_page(s, op);
  EXPECT_EQ(get("/v4/sessions/" + s + "/operations/" + op + "/status").body, json::parse(R"({"status":"ERROR"})"));
  ASSERT_EQ(a.status, 500);
  ASSERT_EQ(a.body["errors"].size(), 2u);
  EXPECT_EQ(a.body["errors"][0], "Internal server error.");
  std::string text = a.body["errors"][1];
  EXPECT_THAT(text, ::testing::StartsWith("<Exception on server side:\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("missing_table"));
  EXPECT_THAT(text, ::testing::HasSubstr("line 1, column 15"));
  EXPECT_THAT(text, ::testing::EndsWith("End of exception on server side>"));

  // The session's SETs are its jobs' options: a bad one fails the INSERT, naming its key.
  create_tables(s);
  ASSERT_EQ(first_page(s, submit(s, "SET 'execution.checkpointing.interval' = 'soon'")).status, 200);
  auto bad = first_page(s, submit(s, "INSERT INTO dst SELECT * FROM src"));
  ASSERT_EQ(bad.status, 500) << bad.body.dump();
  EXPECT_THAT(bad.body["errors"][1].get<std::string>(), ::testing::HasSubstr("execution.checkpointing.interval"));
}

// A coordinator without slots of its own: the query's operators and its collect sink run
// on two worker processes, and the sink posts the rows to the coordinator's gateway.
class GatewayOnWorkers : public Gateway {
 protected:
  std::vector<std::string> coordinator_flags() const override { return {"--local-slots", "0"}; }
};

TEST_F(GatewayOnWorkers, ASelectsRowsTravelFromTheWorkersToTheGateway) {
  std::vector<std::unique_ptr<ClinkProcess>> workers;
  for (int i = 0; i < 2; ++i) {
    fs::path wd = dir_ / ("w" + std::to_string(i));
    fs::create_directories(wd);
    workers.push_back(std::make_unique<ClinkProcess>(
        std::vector<std::string>{"worker", "--slots", "2", "--coordinator", coordinator_->address()}, wd));
    ASSERT_TRUE(workers.back()->wait_for_output("data port", 10'000)) << workers.back()->err();
  }
  // 2000 rows over 20 keys, summed at parallelism 2: the changelog, applied, is the sums.
  std::ofstream big(dir_ / "in" / "more.csv");
  std::map<std::string, long> expected{{"a", 4}, {"b", 2}};
  for (int i = 0; i < 2000; ++i) {
    std::string key = "k" + std::to_string(i % 20);
    big << key << "," << i << "\n";
    expected[key] += i;
  }
  big.close();
  std::string s = open_session();
  create_tables(s);
  auto set = first_page(s, submit(s, "SET 'parallelism.default' = '2'"));
  ASSERT_EQ(set.status, 200) << set.body.dump();
  std::string op = submit(s, "SELECT w, SUM(CAST(n AS BIGINT)) AS total FROM src GROUP BY w");
  std::map<std::string, long> table;
  int inserts = 0, retractions = 0;
  std::string job;
  for (const auto& row : all_rows(s, op, nullptr, &job)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(row, m, std::regex(R"re((\w+):"(\w+)"\|(\d+))re"))) << row;
    std::string kind = m[1];
    if (kind == "INSERT" || kind == "UPDATE_AFTER") {
      table[m[2]] = std::stol(m[3]);
      ++inserts;
    } else {
      EXPECT_EQ(table[m[2]], std::stol(m[3])) << "a retraction of a row not shown: " << row;
      table.erase(m[2]);
      ++retractions;
    }
  }
  EXPECT_EQ(table, expected);
  EXPECT_GT(retractions, 0);
  // The job ran on the two workers (the coordinator has no slots).
  ASSERT_THAT(job, ::testing::MatchesRegex("[0-9a-f]{32}"));
  EXPECT_EQ(coordinator_->wait_for_state(job, "FINISHED", 60), "FINISHED");
  EXPECT_EQ(coordinator_->get("/taskmanagers").body["taskmanagers"].size(), 2u);
}

// sql-gateway.session.idle-timeout from the coordinator's config.yaml.
class GatewayIdleTimeout : public Gateway {
 protected:
  std::vector<std::string> coordinator_flags() const override {
    std::ofstream(dir_ / "config.yaml") << "rest.port: 0\njobmanager.rpc.port: 0\nsql-gateway.session.idle-timeout: 1 s\n";
    return {"--config", (dir_ / "config.yaml").string()};
  }
};

TEST_F(GatewayIdleTimeout, AnIdleSessionIsClosedAndItsQueryCancelled) {
  std::string s = open_session();
  auto c = first_page(s, submit(s, "CREATE TABLE gen (x BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10')"));
  ASSERT_EQ(c.status, 200) << c.body.dump();
  auto q = first_page(s, submit(s, "SELECT x FROM gen"));
  ASSERT_EQ(q.status, 200) << q.body.dump();
  std::string job = q.body.value("jobID", "");
  EXPECT_EQ(coordinator_->get("/jobs/" + job).body.value("state", ""), "RUNNING");
  // Nobody asks for more: within the reaper's 5 s round the session is gone, its job cancelled.
  EXPECT_EQ(coordinator_->wait_for_state(job, "CANCELED", 20), "CANCELED");
  EXPECT_EQ(get("/v1/sessions/" + s).status, 500);
}

// ---- Flink's own SQL client -------------------------------------------------------------

// The venv of tests/flink/setup ($CLINK_FLINK_VENV, else ~/.cache/clink/flink-venv).
fs::path flink_venv() {
  const char* env = std::getenv("CLINK_FLINK_VENV");
  const char* home = std::getenv("HOME");
  return env ? fs::path(env) : fs::path(home ? home : "/root") / ".cache/clink/flink-venv";
}

// Its pyflink bin/ directory, or "" with the reason in `why`.
fs::path flink_bin(std::string& why) {
  fs::path venv = flink_venv();
  std::error_code ec;
  for (const auto& lib : fs::directory_iterator(venv / "lib", ec)) {
    fs::path bin = lib.path() / "site-packages/pyflink/bin";
    if (fs::exists(bin / "sql-client.sh")) {
      bool jar = false;
      for (const auto& f : fs::directory_iterator(bin.parent_path() / "opt", ec))
        jar |= f.path().filename().string().rfind("flink-sql-gateway", 0) == 0;
      if (!jar) why = "no flink-sql-gateway jar in " + (bin.parent_path() / "opt").string() + " (tests/flink/setup fetches it)";
      return jar ? bin : fs::path();
    }
  }
  why = "no pyflink/bin/sql-client.sh under " + venv.string() + " (tests/flink/setup installs apache-flink)";
  return {};
}

TEST_F(Gateway, FlinksSqlClientRunsDdlAnInsertAndAStreamingSelect) {
  std::string why;
  fs::path bin = flink_bin(why);
  ASSERT_FALSE(bin.empty()) << "Flink's SQL client is needed for this test: " << why;
  std::ofstream(dir_ / "script.sql")
      << "SET 'sql-client.execution.result-mode' = 'tableau';\n"
         "SET 'parallelism.default' = '1';\n"
         "CREATE TABLE src (w STRING, n INT) WITH ('connector' = 'filesystem', 'path' = '" + (dir_ / "in").string() +
             "', 'format' = 'csv');\n"
             "CREATE TABLE dst (w STRING, n INT) WITH ('connector' = 'filesystem', 'path' = '" + (dir_ / "out").string() +
             "', 'format' = 'csv');\n"
             "INSERT INTO dst SELECT w, n * 10 FROM src;\n"
             "SELECT w, SUM(n) AS total FROM src GROUP BY w;\n"
             "SELECT * FROM missing_table;\n";
  auto r = run_command("cd '" + dir_.string() + "' && FLINK_LOG_DIR='" + dir_.string() + "' '" + (bin / "sql-client.sh").string() +
                           "' gateway --endpoint 127.0.0.1:" + std::to_string(port_) + " -f script.sql",
                       dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The INSERT: submitted, its job id printed; the coordinator runs it to the end.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("Job ID: ([0-9a-f]{32})"))) << r.out;
  EXPECT_EQ(coordinator_->wait_for_state(m[1].str(), "FINISHED", 60), "FINISHED");
  EXPECT_THAT(committed_lines(dir_ / "out"), ::testing::ElementsAre("a,10", "a,30", "b,20"));
  // The streaming SELECT's changelog, as the client's tableau prints it.
  EXPECT_THAT(r.out, ::testing::HasSubstr("+----+--------------------------------+-------------+\n"
                                          "| op |                              w |       total |\n"
                                          "+----+--------------------------------+-------------+\n"
                                          "| +I |                              a |           1 |\n"
                                          "| +I |                              b |           2 |\n"
                                          "| -U |                              a |           1 |\n"
                                          "| +U |                              a |           4 |\n"
                                          "+----+--------------------------------+-------------+\n"
                                          "Received a total of 4 rows"));
  // A failing statement: the client shows clink's error, with its position, as the reason.
  EXPECT_THAT(r.out, ::testing::HasSubstr("[ERROR] Could not execute SQL statement. Reason:\n"
                                          "org.apache.flink.table.api.TableException: line 1, column 15: "
                                          "Object 'missing_table' not found\x1b[0m"));
  EXPECT_EQ(r.out.find("[ERROR]"), r.out.rfind("[ERROR]")) << "only the last statement fails: " << r.out;
}

// Flink's JDBC driver (the jar tests/flink/setup fetches) runs statements through clink's
// gateway and reads the same rows it reads from Flink's own gateway.
TEST_F(Gateway, FlinksJdbcDriverQueriesClink) {
  std::string why;
  fs::path bin = flink_bin(why);
  ASSERT_FALSE(bin.empty()) << "Flink's jars are needed for this test: " << why;
  fs::path driver = flink_venv() / "share/clink/flink-sql-jdbc-driver-bundle-2.3.0.jar";
  ASSERT_TRUE(fs::exists(driver)) << driver << " is missing (tests/flink/setup fetches it)";
  fs::path dist = bin.parent_path() / "lib/flink-dist-2.3.0.jar";
  std::string cmd = "java -cp '" + driver.string() + ":" + dist.string() + "' '" + CLINK_SOURCE_DIR +
                    "/tests/flink/JdbcProbe.java' 127.0.0.1:" + std::to_string(port_) +
                    " \"SET 'parallelism.default' = '1'\"" +
                    " \"CREATE TABLE src (w STRING, n INT) WITH ('connector' = 'filesystem', 'path' = '" + (dir_ / "in").string() +
                    "', 'format' = 'csv')\"" + " 'SELECT w, n FROM src' 'SELECT w, SUM(n) AS t FROM src GROUP BY w'";
  auto r = run_command(cmd, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  // What the same statements print against Flink 2.3's gateway (the changelog's -U row
  // included: the driver shows every row of it).
  EXPECT_THAT(lines, ::testing::ElementsAre(::testing::StartsWith("OK SET"), ::testing::StartsWith("OK CREATE TABLE src"),
                                            "ROW w=a n=1", "ROW w=b n=2", "ROW w=a n=3", "ROW w=a t=1", "ROW w=b t=2",
                                            "ROW w=a t=1", "ROW w=a t=4"));
}

}  // namespace
}  // namespace clink::test
