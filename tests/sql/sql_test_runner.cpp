// Runs the SQL tests in tests/sql/*.test (format: docs/sql-tests.md): one gtest per
// case, registered with RegisterTest when the binary starts. A case runs its file's
// setup statements and its own through the planner's StatementRunner; every job runs to
// completion on the real executor and connectors (inputs are written to temporary files
// the DDL names with ${input:Name}); the output (SELECT changelogs, SHOW / DESCRIBE /
// EXPLAIN text) or the error is compared exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../support/example_udafs.hpp"
#include "../support/example_udtfs.hpp"
#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"

namespace {

namespace fs = std::filesystem;

struct Input {
  std::string name;
  std::string ext;  // csv / json / txt
  std::string text;
};

struct Case {
  std::string file;
  int line = 0;
  std::string name;
  std::vector<Input> inputs;  // the file's, then the case's
  std::string setup;
  std::string sql;
  enum class Expect { kOrdered, kUnordered, kFinal, kError } expect = Expect::kOrdered;
  std::vector<std::string> expected;
};

std::string trim_right(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
  return s;
}

std::vector<Case> parse_test_file(const fs::path& path) {
  std::ifstream in(path);
  std::vector<Case> cases;
  std::vector<Input> file_inputs;
  std::string setup;
  enum class Section { kNone, kInput, kSetup, kSql, kExpect } section = Section::kNone;
  Input* input = nullptr;
  Case* current = nullptr;
  int n = 0;
  auto fail = [&](const std::string& m) {
    throw std::runtime_error(path.string() + ":" + std::to_string(n) + ": " + m);
  };
  for (std::string line; std::getline(in, line);) {
    ++n;
    line = trim_right(line);
    if (line.rfind("@", 0) == 0) {
      std::istringstream words(line.substr(1));
      std::string word;
      words >> word;
      std::string rest;
      std::getline(words, rest);
      rest.erase(0, rest.find_first_not_of(' '));
      if (word == "input") {
        std::istringstream r(rest);
        Input i;
        r >> i.name >> i.ext;
        if (i.name.empty()) fail("@input needs a name (and a format: csv, json)");
        if (i.ext.empty()) i.ext = "csv";
        auto& list = current ? current->inputs : file_inputs;
        list.push_back(i);
        input = &list.back();
        section = Section::kInput;
      } else if (word == "setup") {
        if (current) fail("@setup belongs before the first @case");
        section = Section::kSetup;
      } else if (word == "case") {
        cases.push_back(Case{path.stem().string(), n, rest, file_inputs, setup, "", Case::Expect::kOrdered, {}});
        current = &cases.back();
        section = Section::kSql;
      } else if (word == "expect") {
        if (!current) fail("@expect outside a @case");
        current->expect = rest == "unordered" ? Case::Expect::kUnordered
                          : rest == "final"   ? Case::Expect::kFinal
                                              : Case::Expect::kOrdered;
        if (!rest.empty() && rest != "unordered" && rest != "ordered" && rest != "final")
          fail("@expect [ordered|unordered|final]");
        section = Section::kExpect;
      } else if (word == "error") {
        if (!current) fail("@error outside a @case");
        current->expect = Case::Expect::kError;
        section = Section::kExpect;
      } else {
        fail("unknown directive @" + word);
      }
      continue;
    }
    switch (section) {
      case Section::kNone:
        if (!line.empty() && line[0] != '#') fail("text outside a section");
        break;
      case Section::kInput: input->text += line + "\n"; break;
      case Section::kSetup: setup += line + "\n"; break;
      case Section::kSql: current->sql += line + "\n"; break;
      case Section::kExpect:
        if (!line.empty() && line[0] != '#') current->expected.push_back(line);
        break;
    }
  }
  return cases;
}

std::string substitute_inputs(std::string sql, const std::vector<Input>& inputs, const fs::path& dir) {
  for (const auto& i : inputs) {
    std::string key = "${input:" + i.name + "}";
    std::string path = (dir / (i.name + "." + i.ext)).string();
    for (auto p = sql.find(key); p != std::string::npos; p = sql.find(key, p + path.size())) sql.replace(p, key.size(), path);
  }
  std::string key = "${dir}";
  for (auto p = sql.find(key); p != std::string::npos; p = sql.find(key, p + 1)) sql.replace(p, key.size(), dir.string());
  return sql;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(trim_right(l));
  return out;
}

// Runs setup + case; returns the output lines, or the error message as one line.
// `final`: each SELECT's materialised result (its changelog applied) instead of the
// changelog, sorted: for jobs whose inputs interleave in an order the test cannot fix.
std::vector<std::string> run_case(const Case& c, const fs::path& dir, std::string& error) {
  // A name may hold directories ("t/dt=2024-01-01/x": a file in a partition directory).
  for (const auto& i : c.inputs) {
    fs::create_directories((dir / (i.name + "." + i.ext)).parent_path());
    std::ofstream(dir / (i.name + "." + i.ext)) << i.text;
  }
  clink::sql::Catalog catalog;
  clink::sql::StatementRunner runner(catalog);
  std::vector<std::string> out;
  int selects = 0;
  runner.on_job([&](const nlohmann::json& spec, const clink::sql::ast::Statement& st) {
    std::string name;
    if (st.as<clink::sql::ast::QueryStatement>()) name = "select_" + std::to_string(++selects);
    if (!name.empty()) clink::sql::SqlCollectResults::drop(name);
    clink::JobGraph graph = clink::from_spec(spec, clink::builtin_registry());
    clink::execute(graph);
    if (!name.empty()) {
      auto results = clink::sql::SqlCollectResults::get(name);
      auto lines = c.expect == Case::Expect::kFinal ? results->rows() : results->changelog();
      if (c.expect == Case::Expect::kFinal) std::sort(lines.begin(), lines.end());
      for (auto& l : lines) out.push_back(l);
      clink::sql::SqlCollectResults::drop(name);
    }
  });
  try {
    // The setup is its own script so a case's error positions count from the case's SQL.
    if (!c.setup.empty()) runner.run(substitute_inputs(c.setup, c.inputs, dir));
    for (const auto& r : runner.run(substitute_inputs(c.sql, c.inputs, dir)))
      if (r.kind == clink::sql::StatementResult::Kind::kText)
        for (auto& l : lines_of(r.text)) out.push_back(l);
  } catch (const std::exception& e) {
    error = e.what();
  }
  return out;
}

class SqlCaseTest : public ::testing::Test {
 public:
  explicit SqlCaseTest(Case c) : c_(std::move(c)) {}
  void TestBody() override {
    fs::path dir = fs::temp_directory_path() / ("clink_sqltest_" + std::to_string(::getpid()) + "_" + c_.file + "_" +
                                                std::to_string(c_.line));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::string error;
    auto out = run_case(c_, dir, error);
    fs::remove_all(dir);
    // Paths under the case's directory print as ${dir}, so expectations can name them.
    auto mask = [&](std::string& l) {
      for (auto p = l.find(dir.string()); p != std::string::npos; p = l.find(dir.string(), p)) l.replace(p, dir.string().size(), "${dir}");
    };
    for (auto& l : out) mask(l);
    mask(error);
    SCOPED_TRACE(c_.file + ".test:" + std::to_string(c_.line) + " (" + c_.name + ")");
    // CLINK_SQLTEST_ACTUAL=<dir>: each case's actual output goes to <dir>/<file>.<line>.out
    // (a review aid when an output format changes; the expectations stay hand-checked).
    if (const char* actual_dir = std::getenv("CLINK_SQLTEST_ACTUAL")) {
      std::ofstream f(fs::path(actual_dir) / (c_.file + "." + std::to_string(c_.line) + ".out"));
      if (!error.empty()) f << "@error\n" << error << "\n";
      for (const auto& l : out) f << l << "\n";
    }
    if (c_.expect == Case::Expect::kError) {
      std::string expected;
      for (const auto& l : c_.expected) expected += (expected.empty() ? "" : "\n") + l;
      EXPECT_EQ(error, expected);
      return;
    }
    ASSERT_EQ(error, "") << "the case failed";
    auto expected = c_.expected;
    if (c_.expect == Case::Expect::kUnordered || c_.expect == Case::Expect::kFinal) {
      std::sort(out.begin(), out.end());
      std::sort(expected.begin(), expected.end());
    }
    EXPECT_EQ(out, expected);
  }

 private:
  Case c_;
};

std::string test_name(const std::string& s, int line) {
  std::string n;
  for (char ch : s) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return "L" + std::to_string(line) + "_" + n;
}

bool register_sql_tests() {
  clink::sqltest::register_example_udafs();  // udaf.test calls them
  clink::sqltest::register_example_udtfs();  // unnest.test calls them
  fs::path root = fs::path(CLINK_SOURCE_DIR) / "tests" / "sql";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().extension() == ".test") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    for (auto& c : parse_test_file(f)) {
      std::string suite = "SqlTest_" + c.file;
      std::string name = test_name(c.name, c.line);
      ::testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, nullptr, f.c_str(), c.line,
                              [c]() -> ::testing::Test* { return new SqlCaseTest(c); });
    }
  }
  return true;
}

const bool kRegistered = register_sql_tests();

}  // namespace
