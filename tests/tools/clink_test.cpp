// The `clink` binary, run as a user would: exit codes, stdout and stderr.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink_runner.hpp"

namespace clink::test {

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class Clink : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("clink_tool_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `clink <args>` in the source directory (the examples use relative paths).
  Result clink(const std::string& args) { return run_clink(args, dir_); }
  std::string write_file(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  std::filesystem::path dir_;
};

// Each subtask prints its part in order: "<n>> line"; returns subtask -> lines.
std::map<std::string, std::vector<std::string>> by_subtask(const std::vector<std::string>& lines) {
  std::map<std::string, std::vector<std::string>> m;
  for (const auto& l : lines) {
    auto p = l.find("> ");
    EXPECT_NE(p, std::string::npos) << l;
    if (p != std::string::npos) m[l.substr(0, p)].push_back(l.substr(p + 2));
  }
  return m;
}

TEST_F(Clink, RunsTheWordCountExample) {
  Result r = clink("run examples/word_count.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Sorted: which subtask counts a word is fixed by the stable key hash.
  EXPECT_EQ(r.sorted_lines(),
            (std::vector<std::string>{
                "1> (a,3)",        "1> (ache,1)",     "1> (against,1)",  "1> (arms,1)",         "1> (arrows,1)",
                "1> (ay,1)",       "1> (by,2)",       "1> (devoutly,1)", "1> (die,2)",          "1> (dream,1)",
                "1> (end,2)",      "1> (heart,1)",    "1> (is,2)",       "1> (mind,1)",         "1> (more,1)",
                "1> (natural,1)",  "1> (no,1)",       "1> (nobler,1)",   "1> (opposing,1)",     "1> (or,2)",
                "1> (question,1)", "1> (rub,1)",      "1> (s,1)",        "1> (say,1)",          "1> (the,6)",
                "1> (there,1)",    "1> (to,13)",      "1> (troubles,1)", "1> (whether,1)",      "2> (and,4)",
                "2> (be,3)",       "2> (consummation,1)", "2> (d,1)",    "2> (flesh,1)",        "2> (fortune,1)",
                "2> (heir,1)",     "2> (in,1)",       "2> (not,1)",      "2> (of,2)",           "2> (outrageous,1)",
                "2> (perchance,1)", "2> (sea,1)",     "2> (shocks,1)",   "2> (sleep,4)",        "2> (slings,1)",
                "2> (suffer,1)",   "2> (take,1)",     "2> (that,2)",     "2> (them,1)",         "2> (thousand,1)",
                "2> (tis,2)",      "2> (we,1)",       "2> (wish,1)"}));
  // Within a subtask the final counts come sorted by word.
  for (auto& [subtask, lines] : by_subtask(r.lines()))
    EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end())) << "subtask " << subtask;
}

TEST_F(Clink, RunsTheEventTimeExample) {
  Result r = clink("run examples/event_time_counts.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 10000 events k0..k3 at 0, 7, 14, ... ms: 7 buckets of 10 s per key.
  EXPECT_EQ(r.sorted_lines(),
            (std::vector<std::string>{
                "1> (k2,0,357)",     "1> (k2,10000,357)", "1> (k2,20000,357)", "1> (k2,30000,358)",
                "1> (k2,40000,357)", "1> (k2,50000,357)", "1> (k2,60000,357)", "1> (k3,0,357)",
                "1> (k3,10000,357)", "1> (k3,20000,357)", "1> (k3,30000,357)", "1> (k3,40000,357)",
                "1> (k3,50000,358)", "1> (k3,60000,357)", "2> (k0,0,358)",     "2> (k0,10000,357)",
                "2> (k0,20000,357)", "2> (k0,30000,357)", "2> (k0,40000,357)", "2> (k0,50000,357)",
                "2> (k0,60000,357)", "2> (k1,0,357)",     "2> (k1,10000,358)", "2> (k1,20000,357)",
                "2> (k1,30000,357)", "2> (k1,40000,357)", "2> (k1,50000,357)", "2> (k1,60000,357)"}));
  // Each subtask emits in timer order: by bucket, then key.
  for (auto& [subtask, lines] : by_subtask(r.lines())) {
    std::vector<std::pair<long, std::string>> order;
    for (const auto& l : lines) {
      auto c1 = l.find(','), c2 = l.rfind(',');
      order.push_back({std::stol(l.substr(c1 + 1, c2 - c1 - 1)), l.substr(1, c1 - 1)});
    }
    EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << "subtask " << subtask;
  }
}

TEST_F(Clink, MetricsGoToStderrOnRequest) {
  Result r = clink("run examples/event_time_counts.json --metrics");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines().size(), 28u);
  EXPECT_THAT(r.err, HasSubstr("records_in"));
  EXPECT_THAT(r.err, HasSubstr("records_out"));
  EXPECT_THAT(r.err, ::testing::ContainsRegex("events +0 +10000"));
  EXPECT_THAT(r.err, ::testing::ContainsRegex("count +10000 +28"));
}

TEST_F(Clink, SetOverridesParamsAndParallelism) {
  Result r = clink("run examples/word_count.json -p 1 --set count.parallelism_unused=1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown param 'parallelism_unused'"));

  std::string spec = write_file("wc.json", R"({"ops": [
      {"id": "lines", "type": "file_source", "params": {"path": "examples/data/words.txt"}},
      {"id": "tokenize", "type": "tokenize", "inputs": [{"from": "lines"}]},
      {"id": "count", "type": "count", "inputs": [{"from": "tokenize", "partitioning": "hash", "key": "string.self"}]},
      {"id": "print", "type": "print", "inputs": [{"from": "count"}]}]})");
  r = clink("run '" + spec + "' --set count.emit=every");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = r.lines();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "(to,1)");  // parallelism 1: no subtask prefix, input order
  EXPECT_EQ(lines[1], "(be,1)");
  EXPECT_EQ(lines[2], "(or,1)");
  EXPECT_EQ(lines.back(), "(rub,1)");

  r = clink("explain '" + spec + "' -p 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("default parallelism 3"));
}

TEST_F(Clink, ExplainPrintsChainsEdgesTypesAndTheSpec) {
  Result r = clink("explain examples/word_count.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("task 1: lines -> tokenize  (parallelism 1)"));
  EXPECT_THAT(r.out, HasSubstr("task 2: count -> print  (parallelism 2)"));
  EXPECT_THAT(r.out, HasSubstr("tokenize -> count  hash(string.self)  string"));
  EXPECT_THAT(r.out, HasSubstr("lines -> tokenize  forward, chained  string"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("count +count +string -> word_count"));
  // The normalized spec follows, as JSON.
  auto spec_at = r.out.find("\nspec:\n");
  ASSERT_NE(spec_at, std::string::npos);
  EXPECT_THAT(r.out.substr(spec_at), HasSubstr("\"emit\": \"final\""));
  EXPECT_THAT(r.out.substr(spec_at), HasSubstr("\"key\": \"string.self\""));

  r = clink("explain examples/event_time_counts.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("task 1: events -> watermarks  (parallelism 1)"));
  EXPECT_THAT(r.out, HasSubstr("task 2: count -> print  (parallelism 2)"));
  EXPECT_THAT(r.out, HasSubstr("watermarks -> count  hash(event.key)  event"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("count +event_time_count +event -> window_count"));
}

TEST_F(Clink, ABadSpecExitsOneNamingTheProblem) {
  std::string spec = write_file("bad.json", R"({"ops": [
      {"id": "src", "type": "datagen", "params": {"end": 10}},
      {"id": "cnt", "type": "event_time_count", "params": {"size_ms": 10}, "inputs": [{"from": "src"}]},
      {"id": "out", "type": "print", "inputs": [{"from": "cnt"}]}]})");
  Result r = clink("run '" + spec + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("error: "));
  EXPECT_THAT(r.err, HasSubstr("op 'cnt' (event_time_count): input record type must be event, got 'int64'"));

  r = clink("explain '" + write_file("typo.json", R"({"ops": [{"id": "x", "type": "tokenise"}]})") + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("unknown operator type 'tokenise'"));

  r = clink("run '" + write_file("broken.json", "{\"ops\": [") + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("is not valid JSON"));

  r = clink("run does/not/exist.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: cannot open job spec 'does/not/exist.json'\n");

  r = clink("run examples/word_count.json --set nonsense");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("expected key=value"));
  r = clink("run examples/word_count.json --set nosuchop.x=1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("the job has no op 'nosuchop'"));
}

TEST_F(Clink, AFailingJobExitsOneWithTheOperatorsMessage) {
  // Datagen without event_time_* options: the watermark assigner sees no event time.
  std::string spec = write_file("no_time.json", R"({"ops": [
      {"id": "src", "type": "datagen", "params": {"type": "event", "end": 10}},
      {"id": "wm", "type": "watermark_assigner", "inputs": [{"from": "src"}]},
      {"id": "out", "type": "blackhole", "inputs": [{"from": "wm"}]}]})");
  Result r = clink("run '" + spec + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("error: "));
  EXPECT_THAT(r.err, HasSubstr("wm"));
  EXPECT_THAT(r.err, HasSubstr("record has no event time"));
  EXPECT_THAT(r.err, HasSubstr("event_time_start_ms"));
}

TEST_F(Clink, BenchNeedsABenchmarkName) {
  Result r = clink("bench");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("subcommand"));
}

TEST_F(Clink, Version) {
  Result r = clink("version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("clink ") + CLINK_VERSION + "\n");
}

TEST_F(Clink, Help) {
  Result r = clink("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* cmd : {"run", "explain", "sql", "bench", "version"}) EXPECT_THAT(r.out, HasSubstr(cmd));
  for (const char* cmd : {"run", "explain", "sql", "bench", "version"}) {
    r = clink(std::string(cmd) + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_THAT(r.out, HasSubstr("Usage: clink " + std::string(cmd))) << cmd;
  }
  r = clink("run --help");
  EXPECT_THAT(r.out, HasSubstr("--parallelism"));
  EXPECT_THAT(r.out, HasSubstr("--set"));
  EXPECT_THAT(r.out, HasSubstr("--metrics"));
}

TEST_F(Clink, UsageErrorsExitTwo) {
  Result r = clink("");
  EXPECT_EQ(r.exit_code, 2);
  r = clink("run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("job"));
  r = clink("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace

}  // namespace clink::test
