#pragma once
// Runs one case of tests/sql/*.test: its inputs written to a directory, its file's setup
// and its own statements through the StatementRunner, every job on the real executor,
// as the plain run or as a variant of the matrix (docs/sql-tests.md).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sql_test_case.hpp"

namespace clink::test {

struct RunSettings {
  int parallelism = 1;  // > 1: SET 'parallelism.default' before the setup
  std::string state_backend = "memory";
  // Wraps the sources (source_pacing.hpp): counts each job's batches; with `restore`,
  // a checkpoint after every batch and a failure after step fail_at[job] (0: none).
  bool wrap_sources = false;
  bool restore = false;
  std::vector<std::int64_t> fail_at;
  // Every job on a cluster in this process (tests/support/local_cluster.hpp): deployed
  // to 3 workers over the control plane, its channels over the network shuffle.
  bool cluster = false;
};

struct JobRecord {
  std::int64_t batches = 0;   // non-empty source batches (all attempts)
  bool failure_injected = false;
  std::int64_t restarts = 0;
  std::int64_t checkpoints = 0;  // completed
};

struct CaseOutput {
  // In statement order: a SELECT's changelog, or a statement's text (SHOW, EXPLAIN, SET).
  struct Part {
    bool select = false;
    std::vector<std::string> lines;
    std::vector<std::string> rows;  // a SELECT's rows as its collect sink materialised them
  };
  std::vector<Part> parts;
  std::string error;  // empty unless a statement failed
  std::vector<JobRecord> jobs;

  // The output as a case's expectation states it: changelogs (`final`: the
  // materialised rows, sorted) and text, in statement order.
  std::vector<std::string> lines(SqlTestCase::Expect expect) const;
};

// Runs `c` in `dir` (created empty; the case's ${dir}); checkpoints and state go to a
// directory beside it. Paths under `dir` in the output and the error print as ${dir}.
CaseOutput run_sql_case(const SqlTestCase& c, const std::filesystem::path& dir, const RunSettings& settings = {});

}  // namespace clink::test
