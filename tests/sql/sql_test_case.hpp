#pragma once
// A case of tests/sql/*.test (format: docs/sql-tests.md) and the parser of those files.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace clink::test {

struct SqlTestInput {
  std::string name;
  std::string ext;  // csv / json / txt
  std::string text;
};

// The variants the matrix runs a case in besides the plain run (docs/sql-tests.md).
inline const std::vector<std::string>& matrix_variants() {
  static const std::vector<std::string> v = {"p2", "p4", "restore", "rocksdb", "cluster"};
  return v;
}

struct SqlTestCase {
  std::string file;  // the file's stem
  int line = 0;
  std::string name;
  std::vector<SqlTestInput> inputs;  // the file's, then the case's
  std::string setup;
  std::string sql;
  enum class Expect { kOrdered, kUnordered, kFinal, kError } expect = Expect::kOrdered;
  std::vector<std::string> expected;
  // Variants excluded by `@matrix` (the file's and the case's), with their reasons.
  std::set<std::string> matrix_excluded;
  std::vector<std::string> matrix_reasons;
};

// Throws std::runtime_error "<path>:<line>: <problem>" for a malformed file.
std::vector<SqlTestCase> parse_sql_test_file(const std::filesystem::path& path);

// Whether the setup or the case holds a statement that runs a job (a query, an INSERT,
// a statement set): the cases the matrix reruns. Told by each statement's first word
// (parsing every case with clink's parser would cost each test process ~0.1 s).
bool runs_a_job(const SqlTestCase& c);

}  // namespace clink::test
