// Materialized tables through the `clink` process (docs/materialized-tables.md): the
// definition and schedule persisted in --catalog-dir across processes, the refresh
// scheduler of `clink run --keep-refreshing`, the atomic swap under a concurrent reader,
// and the restore of a continuous maintenance job killed mid-run.
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink_runner.hpp"
#include "../support/clink_process.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<std::string> sorted_file_lines(const fs::path& p) {
  std::vector<std::string> v;
  std::istringstream in(slurp(p));
  for (std::string l; std::getline(in, l);) v.push_back(l);
  std::sort(v.begin(), v.end());
  return v;
}

class ClinkMaterialized : public ClinkCliTest {
 protected:
  ClinkMaterialized() : ClinkCliTest("clink_mt_test_") {}

  // Waits (at most 60 s) until `pred` holds.
  template <class F>
  static bool eventually(F pred) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  std::string orders(const std::string& rows) { return write("orders.json", rows); }
};

const char* kOrders =
    "{\"id\": 1, \"shop\": \"a\", \"amount\": 10}\n"
    "{\"id\": 2, \"shop\": \"b\", \"amount\": 20}\n"
    "{\"id\": 3, \"shop\": \"a\", \"amount\": 5}\n";

// A FULL table created by one process is read, refreshed and dropped by others: the
// definition, the backing and the refresh count live in the catalog directory.
TEST_F(ClinkMaterialized, PersistsAcrossProcessesWithCatalogDir) {
  std::string src = orders(kOrders);
  std::string cat = (dir_ / "catalog").string();
  write("create.sql", "CREATE TABLE orders (id INT, shop STRING, amount BIGINT) WITH ('connector' = 'filesystem', "
                      "'path' = '" + src + "', 'format' = 'json');\n"
                      "CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '1' HOUR AS "
                      "SELECT shop, SUM(amount) AS total FROM orders GROUP BY shop;\n");
  auto r = clink("run -q --catalog-dir " + cat + " " + (dir_ / "create.sql").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path backing = fs::path(cat) / "materialized" / "totals" / "part-0.json";
  EXPECT_EQ(sorted_file_lines(backing),
            (std::vector<std::string>{R"({"shop":"a","total":15})", R"({"shop":"b","total":20})"}));
  auto def = slurp(fs::path(cat) / "materialized" / "totals.json");
  EXPECT_THAT(def, HasSubstr("\"refresh_mode\": \"FULL\""));
  EXPECT_THAT(def, HasSubstr("\"freshness_ms\": 3600000"));

  // A new process: new rows, a manual refresh, the backing read as a source.
  orders(std::string(kOrders) + "{\"id\": 4, \"shop\": \"c\", \"amount\": 1}\n");
  write("refresh.sql", "ALTER MATERIALIZED TABLE totals REFRESH;\nSELECT * FROM totals;\n");
  r = clink("run -q --catalog-dir " + cat + " " + (dir_ / "refresh.sql").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| +I |                              c |                    1 |"));
  EXPECT_EQ(sorted_file_lines(backing), (std::vector<std::string>{R"({"shop":"a","total":15})", R"({"shop":"b","total":20})",
                                                                  R"({"shop":"c","total":1})"}));
  EXPECT_THAT(slurp(fs::path(cat) / "materialized" / "totals.json"), HasSubstr("\"refreshes\": 2"));

  write("drop.sql", "DROP MATERIALIZED TABLE totals;\nSHOW TABLES;\n");
  r = clink("run -q --catalog-dir " + cat + " " + (dir_ / "drop.sql").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("totals")));
  EXPECT_FALSE(fs::exists(fs::path(cat) / "materialized" / "totals.json"));
  EXPECT_FALSE(fs::exists(fs::path(cat) / "materialized" / "totals"));
}

// ALTER MATERIALIZED TABLE ... ADD / DROP (Flink 2.3's schema changes) persist in the
// catalog directory: a new process reads the computed column, refreshes without the
// dropped key (the snapshot then keeps a multiset) and shows the changed definition.
TEST_F(ClinkMaterialized, SchemaChangesPersistAcrossProcesses) {
  std::string src = orders(kOrders);
  std::string cat = (dir_ / "catalog").string();
  write("create.sql", "CREATE TABLE orders (id INT, shop STRING, amount BIGINT) WITH ('connector' = 'filesystem', "
                      "'path' = '" + src + "', 'format' = 'json');\n"
                      "CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '1' HOUR AS "
                      "SELECT shop, SUM(amount) AS total FROM orders GROUP BY shop;\n"
                      "ALTER MATERIALIZED TABLE totals ADD (doubled AS total * 2);\n"
                      "ALTER MATERIALIZED TABLE totals DROP PRIMARY KEY;\n");
  auto r = clink("run -q --catalog-dir " + cat + " " + (dir_ / "create.sql").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(slurp(fs::path(cat) / "materialized" / "totals.json"), HasSubstr("\"primary_key\": []"));

  orders(std::string(kOrders) + "{\"id\": 4, \"shop\": \"c\", \"amount\": 1}\n");
  write("read.sql", "ALTER MATERIALIZED TABLE totals REFRESH;\nSELECT shop, total, doubled FROM totals WHERE shop = 'c';\n"
                    "DESCRIBE totals;\n");
  r = clink("run -q --catalog-dir " + cat + " " + (dir_ / "read.sql").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| +I |                              c |                    1 |                    2 |"));
  EXPECT_THAT(r.out, HasSubstr("| doubled | BIGINT |  TRUE |     | AS `total` * 2 |           |"));
  EXPECT_THAT(r.out, HasSubstr("|    shop | STRING | FALSE |     |                |           |"));
  EXPECT_EQ(sorted_file_lines(fs::path(cat) / "materialized" / "totals" / "part-0.json"),
            (std::vector<std::string>{R"({"shop":"a","total":15})", R"({"shop":"b","total":20})",
                                      R"({"shop":"c","total":1})"}));
}

// `--keep-refreshing` refreshes an ACTIVATED FULL table on its freshness until stopped;
// a SUSPENDED one is left alone. A reader polling the backing meanwhile only ever sees a
// complete snapshot (the rename is atomic): never a torn or empty file.
TEST_F(ClinkMaterialized, KeepRefreshingRefreshesOnTheFreshnessAndReadersNeverSeeATornFile) {
  std::string rows;
  for (int i = 0; i < 2000; ++i) rows += "{\"id\": " + std::to_string(i) + ", \"shop\": \"s\", \"amount\": 1}\n";
  std::string src = orders(rows);
  std::string cat = (dir_ / "catalog").string();
  write("create.sql", "CREATE TABLE orders (id INT, shop STRING, amount BIGINT) WITH ('connector' = 'filesystem', "
                      "'path' = '" + src + "', 'format' = 'json');\n"
                      "CREATE MATERIALIZED TABLE copy FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = FULL AS "
                      "SELECT id, amount FROM orders;\n"
                      "CREATE MATERIALIZED TABLE frozen FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = FULL AS "
                      "SELECT id FROM orders;\n"
                      "ALTER MATERIALIZED TABLE frozen SUSPEND;\n");
  const fs::path backing = fs::path(cat) / "materialized" / "copy" / "part-0.json";
  ClinkProcess run({"run", "-q", "--catalog-dir", cat, "--keep-refreshing", (dir_ / "create.sql").string()}, dir_);
  ASSERT_TRUE(eventually([&] { return fs::exists(backing); })) << run.err();
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0}, torn{0};
  std::thread reader([&] {
    while (!stop.load()) {
      std::string text = slurp(backing);
      std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
      if (lines != 2000 || (!text.empty() && text.back() != '\n')) ++torn;
      ++reads;
    }
  });
  auto refreshes = [&] {
    auto t = slurp(fs::path(cat) / "materialized" / "copy.json");
    auto at = t.find("\"refreshes\": ");
    return at == std::string::npos ? 0 : std::stoi(t.substr(at + 13));
  };
  EXPECT_TRUE(eventually([&] { return refreshes() >= 3; })) << run.err();
  stop = true;
  reader.join();
  run.kill(SIGTERM);
  EXPECT_EQ(run.wait_for(60'000), 0) << run.err();
  EXPECT_GT(reads.load(), 10);
  EXPECT_EQ(torn.load(), 0);
  EXPECT_THAT(slurp(fs::path(cat) / "materialized" / "frozen.json"), HasSubstr("\"refreshes\": 1"));
  EXPECT_THAT(run.err(), Not(HasSubstr("refreshed materialized table frozen")));
}

// The continuous maintenance job of a keyed GROUP BY, killed mid-run and restarted from
// its latest checkpoint: the backing holds exactly the failure-free result.
TEST_F(ClinkMaterialized, AContinuousJobKilledAndRestoredLeavesTheExactBacking) {
  const int n = 20000;
  auto script = write("mt.sql",
                      "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '4000', "
                      "'number-of-rows' = '" + std::to_string(n) + "', 'fields.id.kind' = 'sequence', "
                      "'fields.id.start' = '0', 'fields.id.end' = '" + std::to_string(n - 1) + "');\n"
                      "CREATE MATERIALIZED TABLE counts WITH ('path' = '" + (dir_ / "counts").string() +
                      "') FRESHNESS = INTERVAL '1' SECOND AS SELECT k, COUNT(*) AS c, SUM(id) AS s FROM "
                      "(SELECT MOD(id, 5) AS k, id FROM gen) GROUP BY k;\n");
  auto ckpt = dir_ / "ckpt";
  ClinkProcess run({"run", "-q", script, "--checkpoint-dir", ckpt.string(), "--checkpoint-interval", "100"}, dir_);
  const fs::path backing = dir_ / "counts" / "part-0.json";
  ASSERT_TRUE(eventually([&] { return fs::exists(backing); })) << run.err();
  run.kill(SIGKILL);
  auto mid = sorted_file_lines(backing);
  EXPECT_FALSE(mid.empty());
  auto r = clink("run -q " + script + " --from-checkpoint " + ckpt.string() + " --checkpoint-dir " + ckpt.string() +
                 " --checkpoint-interval 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected;
  for (int k = 0; k < 5; ++k) {
    long long sum = 0;
    for (int id = k; id < n; id += 5) sum += id;
    expected.push_back("{\"k\":" + std::to_string(k) + ",\"c\":" + std::to_string(n / 5) + ",\"s\":" + std::to_string(sum) + "}");
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted_file_lines(backing), expected);
}

// The append arm: the maintenance job's filesystem sink commits part files at each
// checkpoint. Restarted from the checkpoint after a SIGKILL, no row is lost and none is
// written twice (a run from scratch would write the rows committed before the kill again).
TEST_F(ClinkMaterialized, AContinuousAppendJobKilledAndRestoredHasNoLossOrDuplicate) {
  const int n = 20000;
  auto script = write("mt.sql",
                      "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '4000', "
                      "'number-of-rows' = '" + std::to_string(n) + "', 'fields.id.kind' = 'sequence', "
                      "'fields.id.start' = '0', 'fields.id.end' = '" + std::to_string(n - 1) + "');\n"
                      "CREATE MATERIALIZED TABLE evens WITH ('path' = '" + (dir_ / "evens").string() +
                      "') FRESHNESS = INTERVAL '1' SECOND AS SELECT id FROM gen WHERE MOD(id, 2) = 0;\n");
  auto ckpt = dir_ / "ckpt";
  ClinkProcess run({"run", "-q", script, "--checkpoint-dir", ckpt.string(), "--checkpoint-interval", "100"}, dir_);
  auto committed = [&] {
    std::vector<std::string> lines;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_ / "evens", ec)) {
      if (e.path().filename().string().rfind("part-", 0) != 0) continue;
      auto part = sorted_file_lines(e.path());
      lines.insert(lines.end(), part.begin(), part.end());
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  ASSERT_TRUE(eventually([&] { return committed().size() > 100; })) << run.err();
  run.kill(SIGKILL);
  ASSERT_LT(committed().size(), static_cast<std::size_t>(n / 2)) << "killed before the end";
  auto r = clink("run -q " + script + " --from-checkpoint " + ckpt.string() + " --checkpoint-dir " + ckpt.string() +
                 " --checkpoint-interval 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected;
  for (int id = 0; id < n; id += 2) expected.push_back("{\"id\":" + std::to_string(id) + "}");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(committed(), expected);
}

}  // namespace
}  // namespace clink::test
