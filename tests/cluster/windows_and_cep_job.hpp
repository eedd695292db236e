#pragma once
// The job the cluster's acceptance tests run: 13 keys x 1 s tumbling windows, and a
// MATCH_RECOGNIZE per key of 7, over a datagen sequence with event time id * 10 ms,
// into exactly-once filesystem sinks `<out>/win` and `<out>/cep`.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace clink::test {

inline std::string windows_and_cep_script(const std::filesystem::path& out, long long rows, long long rows_per_second) {
  const std::string n = std::to_string(rows);
  return "CREATE TABLE nums (id BIGINT NOT NULL, ts AS TO_TIMESTAMP_LTZ(id * 10, 3), "
         "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '" + n +
         "', 'rows-per-second' = '" + std::to_string(rows_per_second) +
         "', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '" + n + "');\n"
         "CREATE TABLE win (k BIGINT, ws TIMESTAMP(3), c BIGINT, s BIGINT) WITH ('connector' = 'filesystem', "
         "'path' = '" + (out / "win").string() + "', 'format' = 'csv');\n"
         "CREATE TABLE cep (k BIGINT, a BIGINT, c BIGINT, n BIGINT) WITH ('connector' = 'filesystem', "
         "'path' = '" + (out / "cep").string() + "', 'format' = 'csv');\n"
         "EXECUTE STATEMENT SET BEGIN\n"
         "INSERT INTO win SELECT MOD(id, 13), window_start, COUNT(*), SUM(id) FROM TABLE(TUMBLE(TABLE nums, "
         "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY MOD(id, 13), window_start, window_end;\n"
         "INSERT INTO cep SELECT * FROM (SELECT MOD(id, 7) AS k, id, ts FROM nums) MATCH_RECOGNIZE (PARTITION BY k "
         "ORDER BY ts MEASURES A.id AS a, C.id AS c, COUNT(B.id) AS n ONE ROW PER MATCH AFTER MATCH SKIP PAST "
         "LAST ROW PATTERN (A B+ C) DEFINE A AS MOD(A.id, 11) = 0, B AS MOD(B.id, 11) <> 0, C AS MOD(C.id, 5) = 0);\n"
         "END;\n";
}

// Every committed line under `dir` (files whose names do not start with '.' or '_':
// in-progress files are hidden), sorted.
inline std::vector<std::string> committed_output(const std::filesystem::path& dir) {
  std::vector<std::string> lines;
  if (!std::filesystem::exists(dir)) return lines;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    auto name = e.path().filename().string();
    if (!e.is_regular_file() || name.empty() || name[0] == '.' || name[0] == '_') continue;
    std::ifstream f(e.path());
    for (std::string l; std::getline(f, l);) lines.push_back(l);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace clink::test
