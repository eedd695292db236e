// The jdbc sink's statements (jdbc_statements.hpp).
#include "jdbc_statements.hpp"

#include <algorithm>

#include "clink/connectors/jdbc/pg_values.hpp"

namespace clink::sql {

JdbcStatements::JdbcStatements(std::string quoted_table, std::vector<std::string> quoted_columns,
                               std::vector<std::size_t> key_columns)
    : table_(std::move(quoted_table)), columns_(std::move(quoted_columns)), key_(std::move(key_columns)) {
  std::string cols;
  for (const auto& c : columns_) cols += (cols.empty() ? "" : ", ") + c;
  insert_head_ = "INSERT INTO " + table_ + " (" + cols + ") VALUES ";
  copy_ = "COPY " + table_ + " (" + cols + ") FROM STDIN";
  if (key_.empty()) return;
  std::string keys, sets;
  for (auto k : key_) keys += (keys.empty() ? "" : ", ") + columns_[k];
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (std::find(key_.begin(), key_.end(), i) != key_.end()) continue;
    sets += (sets.empty() ? "" : ", ") + columns_[i] + " = EXCLUDED." + columns_[i];
  }
  // Flink's PostgresDialect updates every column; the key's own columns need no update,
  // and a table of key columns only has nothing to update.
  conflict_tail_ = " ON CONFLICT (" + keys + ") DO " + (sets.empty() ? "NOTHING" : "UPDATE SET " + sets);
  delete_head_ = "DELETE FROM " + table_ + " WHERE " + (key_.size() == 1 ? keys : "(" + keys + ")") + " IN (";
  staging_create_ = "CREATE TEMP TABLE IF NOT EXISTS clink_staging ON COMMIT DELETE ROWS AS SELECT " + cols +
                    ", false AS clink_delete FROM " + table_ + " WITH NO DATA";
  staging_copy_ = "COPY clink_staging (" + cols + ", clink_delete) FROM STDIN";
  std::string match;
  for (auto k : key_) match += (match.empty() ? "" : " AND ") + table_ + "." + columns_[k] + " = s." + columns_[k];
  staging_merge_ = "INSERT INTO " + table_ + " (" + cols + ") SELECT " + cols +
                   " FROM clink_staging WHERE NOT clink_delete" + conflict_tail_ + ";\nDELETE FROM " + table_ +
                   " USING clink_staging s WHERE s.clink_delete AND " + match + ";\nCOMMIT";
}

void JdbcStatements::append_staging_rows(const ColumnBatch& batch, const std::uint32_t* rows, std::size_t n,
                                         bool deleted, std::string& out) const {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      append_pg_copy_field(batch.column(c), rows[i], out);
      out += '\t';
    }
    out += deleted ? "t\n" : "f\n";
  }
}

void JdbcStatements::append_insert(const ColumnBatch& batch, const std::uint32_t* rows, std::size_t n, bool upsert,
                                   std::string& out) const {
  if (n == 0) return;
  out += insert_head_;
  for (std::size_t i = 0; i < n; ++i) {
    out += i ? ", (" : "(";
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (c) out += ", ";
      append_pg_literal(batch.column(c), rows[i], out);
    }
    out += ')';
  }
  if (upsert) out += conflict_tail_;
  out += ";\n";
}

void JdbcStatements::append_delete(const ColumnBatch& batch, const std::uint32_t* rows, std::size_t n,
                                   std::string& out) const {
  if (n == 0) return;
  out += delete_head_;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    if (key_.size() > 1) out += '(';
    for (std::size_t k = 0; k < key_.size(); ++k) {
      if (k) out += ", ";
      append_pg_literal(batch.column(key_[k]), rows[i], out);
    }
    if (key_.size() > 1) out += ')';
  }
  out += ");\n";
}

void JdbcStatements::append_copy_rows(const ColumnBatch& batch, const std::uint32_t* rows, std::size_t n,
                                      std::string& out) const {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (c) out += '\t';
      append_pg_copy_field(batch.column(c), rows[i], out);
    }
    out += '\n';
  }
}

}  // namespace clink::sql
