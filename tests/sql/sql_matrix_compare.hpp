#pragma once
// The matrix's check: a case run as a variant (parallelism 2 or 4, restore, RocksDB)
// gives the plain run's result. Compared where order cannot be fixed: each SELECT's
// changelog applied (insert-only results: the multiset of their rows), text in order,
// and the error; at another parallelism an error's subtask "(i/n)" is not compared.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sql_case_run.hpp"
#include "sql_test_case.hpp"

namespace clink::test {

// CLINK_SQLTEST_SEED when set, else a fresh random seed (printed by a failing test).
std::uint64_t matrix_seed();

// The run as the matrix compares it: per part a header, then its rows (a SELECT's
// changelog applied: materialize) or text lines; the error last.
std::vector<std::string> comparable(const CaseOutput& run, bool ignore_subtasks);

// Runs `c` plainly and as `variant` in `dir` and expects equal comparables (gtest
// failures name what differs). `seed` picks the restore variant's failure points.
void expect_variant_matches(const SqlTestCase& c, const std::string& variant, std::uint64_t seed,
                            const std::filesystem::path& dir);

}  // namespace clink::test
