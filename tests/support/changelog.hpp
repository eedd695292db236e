#pragma once
// A changelog as the table it describes: what the restore tests and the SQL test matrix
// compare where the order of updates cannot be fixed.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace clink::test {

// Lines "+I[...]", "-U[...]", "+U[...]", "-D[...]" applied in order: the remaining rows as
// "+I[...]", sorted. A retraction of a row that is not there shows as "missing: <line>",
// so lost or repeated rows fail a comparison.
inline std::vector<std::string> materialize(const std::vector<std::string>& changelog) {
  std::map<std::string, int> rows;
  std::vector<std::string> out;
  for (const auto& line : changelog) {
    std::string row = line.substr(2);
    if (line.rfind("+I", 0) == 0 || line.rfind("+U", 0) == 0) {
      ++rows[row];
    } else if (rows[row] > 0) {
      --rows[row];
    } else {
      out.push_back("missing: " + line);
    }
  }
  for (const auto& [row, n] : rows)
    for (int i = 0; i < n; ++i) out.push_back("+I" + row);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace clink::test
