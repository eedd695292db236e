// Runs the SQL tests in tests/sql/*.test (format: docs/sql-tests.md): one gtest per
// case, registered with RegisterTest when the binary starts. A case runs its file's
// setup statements and its own through the planner's StatementRunner; every job runs to
// completion on the real executor and connectors (inputs are written to temporary files
// the DDL names with ${input:Name}); the output (SELECT changelogs, SHOW / DESCRIBE /
// EXPLAIN text) or the error is compared exactly.
//
// The matrix: every case that runs a job is registered again per variant (parallelism 2
// and 4, checkpoints after every batch with a failure and a restore, the RocksDB state
// backend) as SqlMatrix_<file>.L<line>_<name>_<variant>, which must give the plain run's
// result, compared where order cannot be fixed (sql_matrix_compare.hpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/example_udafs.hpp"
#include "../support/example_udtfs.hpp"
#include "sql_case_run.hpp"
#include "sql_matrix_compare.hpp"
#include "sql_test_case.hpp"

namespace clink::test {

namespace {

namespace fs = std::filesystem;

fs::path case_dir(const SqlTestCase& c, const std::string& variant) {
  return fs::temp_directory_path() / ("clink_sqltest_" + std::to_string(::getpid()) + "_" + c.file + "_" +
                                      std::to_string(c.line) + (variant.empty() ? "" : "_" + variant));
}

class SqlCaseTest : public ::testing::Test {
 public:
  explicit SqlCaseTest(SqlTestCase c) : c_(std::move(c)) {}
  void TestBody() override {
    auto run = run_sql_case(c_, case_dir(c_, ""));
    auto out = run.lines(c_.expect);
    SCOPED_TRACE(c_.file + ".test:" + std::to_string(c_.line) + " (" + c_.name + ")");
    // CLINK_SQLTEST_ACTUAL=<dir>: each case's actual output goes to <dir>/<file>.<line>.out
    // (a review aid when an output format changes; the expectations stay hand-checked).
    if (const char* actual_dir = std::getenv("CLINK_SQLTEST_ACTUAL")) {
      std::ofstream f(fs::path(actual_dir) / (c_.file + "." + std::to_string(c_.line) + ".out"));
      if (!run.error.empty()) f << "@error\n" << run.error << "\n";
      for (const auto& l : out) f << l << "\n";
    }
    if (c_.expect == SqlTestCase::Expect::kError) {
      std::string expected;
      for (const auto& l : c_.expected) expected += (expected.empty() ? "" : "\n") + l;
      EXPECT_EQ(run.error, expected);
      return;
    }
    ASSERT_EQ(run.error, "") << "the case failed";
    auto expected = c_.expected;
    if (c_.expect == SqlTestCase::Expect::kUnordered || c_.expect == SqlTestCase::Expect::kFinal) {
      std::sort(out.begin(), out.end());
      std::sort(expected.begin(), expected.end());
    }
    EXPECT_EQ(out, expected);
  }

 private:
  SqlTestCase c_;
};

class SqlMatrixTest : public ::testing::Test {
 public:
  SqlMatrixTest(SqlTestCase c, std::string variant) : c_(std::move(c)), variant_(std::move(variant)) {}
  void TestBody() override {
    const std::uint64_t seed = matrix_seed();
    std::string where = c_.file + ".test:" + std::to_string(c_.line) + " (" + c_.name + "), variant " + variant_;
    if (variant_ == "restore")  // the seed picks the failure points
      where += ", seed " + std::to_string(seed) + " (rerun with CLINK_SQLTEST_SEED=" + std::to_string(seed) + ")";
    SCOPED_TRACE(where);
    expect_variant_matches(c_, variant_, seed, case_dir(c_, variant_));
  }

 private:
  SqlTestCase c_;
  std::string variant_;
};

std::string test_name(const std::string& s, int line) {
  std::string n;
  for (char ch : s) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return "L" + std::to_string(line) + "_" + n;
}

bool register_sql_tests() {
  register_example_udafs();  // udaf.test calls them
  register_example_udtfs();  // unnest.test calls them
  fs::path root = fs::path(CLINK_SOURCE_DIR) / "tests" / "sql";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().extension() == ".test") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    for (auto& c : parse_sql_test_file(f)) {
      std::string name = test_name(c.name, c.line);
      ::testing::RegisterTest(("SqlTest_" + c.file).c_str(), name.c_str(), nullptr, nullptr, f.c_str(), c.line,
                              [c]() -> ::testing::Test* { return new SqlCaseTest(c); });
      if (!runs_a_job(c)) continue;
      for (const auto& variant : matrix_variants()) {
        if (c.matrix_excluded.count(variant)) continue;
        if (variant == "cluster" && c.matrix_excluded.count("p4")) continue;  // the cluster runs at parallelism 4
        ::testing::RegisterTest(("SqlMatrix_" + c.file).c_str(), (name + "_" + variant).c_str(), nullptr, nullptr,
                                f.c_str(), c.line,
                                [c, variant]() -> ::testing::Test* { return new SqlMatrixTest(c, variant); });
      }
    }
  }
  return true;
}

const bool kRegistered = register_sql_tests();

}  // namespace

}  // namespace clink::test
