// The catalog queries behind describe_pg_table (include/clink/connectors/jdbc/pg_table_info.hpp).
#include "clink/connectors/jdbc/pg_table_info.hpp"

#include <algorithm>

namespace clink::sql {

const PgColumnInfo* PgTableInfo::column(std::string_view name) const {
  for (const auto& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

std::string PgTableInfo::column_names() const {
  std::string out;
  for (const auto& c : columns) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

bool PgTableInfo::has_unique_key(const std::vector<std::string>& wanted) const {
  std::vector<std::string> w = wanted;
  std::sort(w.begin(), w.end());
  for (auto key : unique_keys) {
    std::sort(key.begin(), key.end());
    if (key == w) return true;
  }
  return false;
}

std::optional<PgTableInfo> describe_pg_table(PgConnection& conn, const std::string& quoted_table) {
  const char* name[] = {quoted_table.c_str()};
  PgResult exists = conn.exec_params("SELECT to_regclass($1) IS NOT NULL", 1, name);
  if (exists.value(0, 0) != "t") return std::nullopt;
  PgTableInfo info;
  PgResult cols = conn.exec_params(
      "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a "
      "WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
      1, name);
  for (int r = 0; r < cols.rows(); ++r)
    info.columns.push_back({std::string(cols.value(r, 0)), std::string(cols.value(r, 1)), cols.value(r, 2) == "t"});
  PgResult keys = conn.exec_params(
      "SELECT i.indexrelid, i.indisprimary, a.attname FROM pg_index i "
      "CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n) "
      "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
      "WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL "
      "ORDER BY i.indisprimary DESC, i.indexrelid, k.n",
      1, name);
  std::string_view current;
  for (int r = 0; r < keys.rows(); ++r) {
    if (keys.value(r, 0) != current) {
      current = keys.value(r, 0);
      info.unique_keys.emplace_back();
      if (keys.value(r, 1) == "t") info.has_primary_key = true;
    }
    info.unique_keys.back().emplace_back(keys.value(r, 2));
  }
  return info;
}

}  // namespace clink::sql
