#pragma once
// The soak job's output check (Flink's all-round job idea): the input is the sequence
// 0..n-1, key = seq mod kSoakKeys, so every key's sequence is k, k + kSoakKeys, ...
// The committed output must hold each key's sequence once, in full: a gap or a repeat
// is reported with the key and the numbers, as is state that a restore got wrong (a
// running count or sum, or a window's count, that is not what the failure-free run has).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace clink::test {

inline constexpr std::int64_t kSoakKeys = 16;
inline constexpr std::int64_t kSoakWindowMs = 1000;  // one seq per ms of event time

// Every committed line of the part files in `dir` (staged files start with '.').
inline std::vector<std::string> committed_lines(const std::filesystem::path& dir) {
  std::vector<std::string> lines;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return lines;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.starts_with(".") || name.starts_with("_")) continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// The OVER job's rows "k,seq,n,total": per key, seq must run k, k+K, ... to the end of
// 0..n-1, n must count the key's rows so far and total sum their seqs. Returns the
// problems found (at most `max_problems`), empty when the output is exact.
inline std::vector<std::string> check_running(const std::vector<std::string>& lines, std::int64_t n,
                                              std::size_t max_problems = 20) {
  std::vector<std::string> problems;
  auto report = [&](std::string p) {
    if (problems.size() < max_problems) problems.push_back(std::move(p));
  };
  struct Row {
    std::int64_t n, total;
  };
  std::map<std::int64_t, std::map<std::int64_t, std::vector<Row>>> by_key;  // key -> seq -> rows
  for (const auto& line : lines) {
    std::int64_t k, seq, cnt, total;
    if (std::sscanf(line.c_str(), "%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%" SCNd64, &k, &seq, &cnt, &total) != 4) {
      report("running: malformed line '" + line + "'");
      continue;
    }
    if (k != seq % kSoakKeys) report("running: seq " + std::to_string(seq) + " under key " + std::to_string(k));
    by_key[k][seq].push_back({cnt, total});
  }
  for (std::int64_t k = 0; k < kSoakKeys && k < n; ++k) {
    const auto& seqs = by_key[k];
    std::int64_t expected = k;
    for (const auto& [seq, rows] : seqs) {
      if (seq != expected)
        report("running: key " + std::to_string(k) + ": gap after seq " + std::to_string(expected - kSoakKeys) +
               ": " + std::to_string(seq) + " follows (" + std::to_string((seq - expected) / kSoakKeys) +
               " missing, first " + std::to_string(expected) + ")");
      if (rows.size() > 1)
        report("running: key " + std::to_string(k) + ": seq " + std::to_string(seq) + " repeated " +
               std::to_string(rows.size()) + " times");
      // The state's view, as the failure-free run has it: seq is the key's i-th row.
      const std::int64_t i = (seq - k) / kSoakKeys + 1;
      const std::int64_t count = i, sum = i * k + kSoakKeys * i * (i - 1) / 2;
      for (const Row& r : rows)
        if (r.n != count || r.total != sum)
          report("running: key " + std::to_string(k) + " seq " + std::to_string(seq) + ": count " +
                 std::to_string(r.n) + ", sum " + std::to_string(r.total) + "; expected " + std::to_string(count) +
                 ", " + std::to_string(sum));
      expected = seq + kSoakKeys;
    }
    if (expected < n)
      report("running: key " + std::to_string(k) + ": ends at seq " + std::to_string(expected - kSoakKeys) +
             ", missing " + std::to_string((n - 1 - expected) / kSoakKeys + 1) + " from " + std::to_string(expected));
  }
  return problems;
}

struct SoakWindow {
  std::int64_t count = 0, lo = 0, hi = -1;
};
// Key k's rows in tumbling window w of 0..n-1: how many, the lowest and highest seq.
inline SoakWindow expected_window(std::int64_t k, std::int64_t w, std::int64_t n) {
  const std::int64_t first = w * kSoakWindowMs, last = std::min(n, first + kSoakWindowMs) - 1;
  SoakWindow x;
  x.lo = first + ((k - first % kSoakKeys) % kSoakKeys + kSoakKeys) % kSoakKeys;
  x.hi = last - ((last % kSoakKeys - k) % kSoakKeys + kSoakKeys) % kSoakKeys;
  x.count = x.hi >= x.lo ? (x.hi - x.lo) / kSoakKeys + 1 : 0;
  return x;
}

// The TUMBLE job's rows "k,count,lo,hi" (one per key and 1 s window): every window of
// every key once, with the count, lowest and highest seq of the failure-free run.
inline std::vector<std::string> check_windows(const std::vector<std::string>& lines, std::int64_t n,
                                              std::size_t max_problems = 20) {
  std::vector<std::string> problems;
  auto report = [&](std::string p) {
    if (problems.size() < max_problems) problems.push_back(std::move(p));
  };
  std::map<std::pair<std::int64_t, std::int64_t>, int> seen;  // (key, window) -> rows
  for (const auto& line : lines) {
    std::int64_t k, c, lo, hi;
    if (std::sscanf(line.c_str(), "%" SCNd64 ",%" SCNd64 ",%" SCNd64 ",%" SCNd64, &k, &c, &lo, &hi) != 4) {
      report("windows: malformed line '" + line + "'");
      continue;
    }
    const std::int64_t w = lo / kSoakWindowMs;
    const SoakWindow want = expected_window(k, w, n);
    if (c != want.count || lo != want.lo || hi != want.hi)
      report("windows: key " + std::to_string(k) + " window " + std::to_string(w) + ": count " + std::to_string(c) +
             " seq " + std::to_string(lo) + ".." + std::to_string(hi) + "; expected " + std::to_string(want.count) +
             " seq " + std::to_string(want.lo) + ".." + std::to_string(want.hi));
    if (++seen[{k, w}] == 2) report("windows: key " + std::to_string(k) + " window " + std::to_string(w) + " repeated");
  }
  for (std::int64_t w = 0; w * kSoakWindowMs < n; ++w)
    for (std::int64_t k = 0; k < kSoakKeys; ++k)
      if (expected_window(k, w, n).count > 0 && !seen.count({k, w}))
        report("windows: key " + std::to_string(k) + " window " + std::to_string(w) + " (seq " +
               std::to_string(w * kSoakWindowMs) + "..) missing");
  return problems;
}

}  // namespace clink::test
