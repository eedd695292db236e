#include "sql_matrix_compare.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <regex>

#include "../support/changelog.hpp"

namespace clink::test {

namespace {

RunSettings variant_settings(const std::string& variant) {
  RunSettings s;
  s.wrap_sources = true;
  if (variant == "p2") s.parallelism = 2;
  else if (variant == "p4") s.parallelism = 4;
  else if (variant == "rocksdb") s.state_backend = "rocksdb";
  else if (variant == "restore") s.restore = true;
  else if (variant == "cluster") s.parallelism = 4, s.cluster = true;
  else ADD_FAILURE() << "unknown matrix variant " << variant;
  return s;
}

// Per job, a step in [1, 2 * batches]: after one of its batches or after the checkpoint
// that followed it (source_pacing.hpp); 0 for a job whose sources emitted nothing.
std::vector<std::int64_t> failure_points(const CaseOutput& plain, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> at;
  for (const auto& job : plain.jobs)
    at.push_back(job.batches == 0 ? 0 : 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(2 * job.batches)));
  return at;
}

}  // namespace

std::uint64_t matrix_seed() {
  if (const char* s = std::getenv("CLINK_SQLTEST_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

std::vector<std::string> comparable(const CaseOutput& run, bool ignore_subtasks) {
  std::vector<std::string> out;
  for (const auto& p : run.parts) {
    if (p.select) {
      out.push_back("-- SELECT (changelog applied)");
      auto rows = materialize(p.lines);
      out.insert(out.end(), rows.begin(), rows.end());
    } else {
      out.push_back("-- text");
      out.insert(out.end(), p.lines.begin(), p.lines.end());
    }
  }
  if (!run.error.empty()) {
    static const std::regex subtask(R"(\(\d+/\d+\))");
    out.push_back("-- error");
    out.push_back(ignore_subtasks ? std::regex_replace(run.error, subtask, "(i/n)") : run.error);
  }
  return out;
}

void expect_variant_matches(const SqlTestCase& c, const std::string& variant, std::uint64_t seed,
                            const std::filesystem::path& dir) {
  RunSettings plain_settings;
  plain_settings.wrap_sources = true;  // counts each job's batches
  CaseOutput plain = run_sql_case(c, dir, plain_settings);
  RunSettings s = variant_settings(variant);
  if (s.restore) s.fail_at = failure_points(plain, seed);
  std::string points;
  for (auto p : s.fail_at) points += (points.empty() ? "" : ", ") + std::to_string(p);
  SCOPED_TRACE(s.restore ? "failure after step (per job): " + points : "");
  CaseOutput run = run_sql_case(c, dir, s);
  const bool other_parallelism = s.parallelism != plain_settings.parallelism;
  EXPECT_EQ(comparable(run, other_parallelism), comparable(plain, other_parallelism));
  if (!s.restore || !run.error.empty()) return;
  for (std::size_t j = 0; j < run.jobs.size() && j < s.fail_at.size(); ++j) {
    if (s.fail_at[j] == 0) continue;
    EXPECT_TRUE(run.jobs[j].failure_injected) << "job " << j << ": no failure at step " << s.fail_at[j] << " of "
                                              << 2 * run.jobs[j].batches;
    EXPECT_GE(run.jobs[j].restarts, 1) << "job " << j;
  }
}

}  // namespace clink::test
