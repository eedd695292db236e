// Run-to-run determinism on bounded input (issue 15): the same files give the same output
// on every run and at every parallelism. The inputs hold rows that arrive late in their
// own file, behind its watermark; before lateness was judged per input channel
// (runtime/lateness.hpp) whether a window join or a parallel window aggregate dropped
// them depended on how far the other input had got: runs of these jobs gave 477 to 481
// joined rows. Each job runs 50 times here, at parallelism 1, 2 and 4 in turn, against
// rows computed from the inputs' definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "clink_runner.hpp"

namespace clink::test {

namespace {

// Table l: kRowsL rows 100 ms apart (id = i % kIds), then kLate rows of the first
// seconds, whose windows closed thousands of rows earlier: late in any batching. Table r
// the same, 200 ms apart from 50 ms.
constexpr int kRowsL = 3000, kRowsR = 1500, kIds = 5, kLate = 20;
constexpr std::int64_t kWindowMs = 5000;

std::string timestamp(std::int64_t ms) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "2024-01-01 %02lld:%02lld:%02lld.%03lld", static_cast<long long>(ms / 3600000),
                static_cast<long long>(ms / 60000 % 60), static_cast<long long>(ms / 1000 % 60),
                static_cast<long long>(ms % 1000));
  return buf;
}

// As the print sink shows a whole-second TIMESTAMP (Java's LocalDateTime: no zero seconds).
std::string printed_timestamp(std::int64_t ms) {
  std::string s = timestamp(ms).substr(0, 19);
  s[10] = 'T';
  if (s.compare(16, 3, ":00") == 0) s.resize(16);
  return s;
}

struct Row {
  int id;
  int v;
  std::int64_t ts;
};

std::vector<Row> rows(int n, std::int64_t step, std::int64_t offset, int late_v) {
  std::vector<Row> out;
  for (int i = 0; i < n; ++i) out.push_back({i % kIds, i, offset + i * step});
  for (int k = 0; k < kLate; ++k) out.push_back({k % kIds, late_v + k, k * 1000 + 7});
  return out;
}

std::string json_lines(const std::vector<Row>& rs, const char* value) {
  std::string s;
  for (const Row& r : rs)
    s += "{\"id\":" + std::to_string(r.id) + ",\"" + value + "\":" + std::to_string(r.v) + ",\"ts\":\"" +
         timestamp(r.ts) + "\"}\n";
  return s;
}

// The print sink's lines, without the subtask prefix ("2> ") it adds at parallelism > 1.
std::vector<std::string> printed(const Result& r) {
  std::vector<std::string> v;
  for (std::string l : r.lines()) {
    if (auto gt = l.find("> "); gt != std::string::npos && l[0] != '+' && l[0] != '-') l = l.substr(gt + 2);
    v.push_back(l);
  }
  std::sort(v.begin(), v.end());
  return v;
}

class ClinkDeterminismTest : public ClinkCliTest {
 protected:
  ClinkDeterminismTest() : ClinkCliTest("clink_determinism_") {}

  void SetUp() override {
    ClinkCliTest::SetUp();
    l_ = rows(kRowsL, 100, 0, 100000);
    r_ = rows(kRowsR, 200, 50, 200000);
    tables_ = "CREATE TABLE l (id INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH "
              "('connector' = 'filesystem', 'path' = '" + write("l.json", json_lines(l_, "v")) + "', 'format' = 'json');\n"
              "CREATE TABLE r (id INT, w INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH "
              "('connector' = 'filesystem', 'path' = '" + write("r.json", json_lines(r_, "w")) + "', 'format' = 'json');\n";
  }

  // Runs the script 50 times at parallelism 1, 2, 4 in turn; every output must be `expected`.
  void expect_every_run(const std::string& script, const std::vector<std::string>& expected) {
    const std::string path = write("job.sql", tables_ + script);
    for (int run = 0; run < 50; ++run) {
      const int p = run % 3 == 0 ? 1 : run % 3 == 1 ? 2 : 4;
      Result res = clink("run -p " + std::to_string(p) + " " + path);
      ASSERT_EQ(res.exit_code, 0) << res.err;
      auto got = printed(res);
      ASSERT_EQ(got.size(), expected.size()) << "run " << run << " at parallelism " << p;
      ASSERT_EQ(got, expected) << "run " << run << " at parallelism " << p;
    }
  }

  static std::int64_t window_of(std::int64_t ts) { return ts / kWindowMs * kWindowMs; }
  // The rows not late: the late tail is dropped, every other row is in order.
  static std::vector<Row> on_time(const std::vector<Row>& rs) { return {rs.begin(), rs.end() - kLate}; }

  std::vector<Row> l_, r_;
  std::string tables_;
};

TEST_F(ClinkDeterminismTest, AWindowJoinOfTwoFilesGivesTheSameRowsOnEveryRun) {
  std::multimap<std::pair<int, std::int64_t>, int> right;  // (id, window) -> w
  for (const Row& r : on_time(r_)) right.emplace(std::make_pair(r.id, window_of(r.ts)), r.v);
  std::vector<std::string> expected;
  for (const Row& l : on_time(l_)) {
    auto [from, to] = right.equal_range({l.id, window_of(l.ts)});
    for (auto it = from; it != to; ++it)
      expected.push_back("+I[" + std::to_string(l.id) + ", " + std::to_string(l.v) + ", " + std::to_string(it->second) +
                         "]");
  }
  std::sort(expected.begin(), expected.end());
  ASSERT_EQ(expected.size(), 15000u);
  expect_every_run(
      "CREATE TABLE out_t (id INT, v INT, w INT) WITH ('connector' = 'print');\n"
      "INSERT INTO out_t SELECT L.id, L.v, R.w FROM\n"
      "  (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L JOIN\n"
      "  (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R\n"
      "  ON L.id = R.id AND L.window_start = R.window_start AND L.window_end = R.window_end;\n",
      expected);
}

TEST_F(ClinkDeterminismTest, AWindowAggregateBehindAShuffleGivesTheSameRowsOnEveryRun) {
  std::map<std::pair<int, std::int64_t>, std::int64_t> counts;
  for (const Row& l : on_time(l_)) ++counts[{l.id, window_of(l.ts)}];
  std::vector<std::string> expected;
  for (const auto& [key, c] : counts)
    expected.push_back("+I[" + std::to_string(key.first) + ", " + printed_timestamp(key.second) + ", " +
                       std::to_string(c) + "]");
  std::sort(expected.begin(), expected.end());
  expect_every_run(
      "CREATE TABLE out_t (id INT, ws TIMESTAMP(3), c BIGINT) WITH ('connector' = 'print');\n"
      "INSERT INTO out_t SELECT id, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '5' "
      "SECOND)) GROUP BY id, window_start, window_end;\n",
      expected);
}

}  // namespace

}  // namespace clink::test
