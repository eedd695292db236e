#pragma once
// The SQL text the jdbc sink sends for a set of buffered rows (private to the sink):
// multi-row INSERTs (append), INSERT ... ON CONFLICT DO UPDATE (upsert), DELETE by key,
// and COPY's text rows. Values are inlined as literals (pg_values), so a flush is one
// round trip whatever the row count; PostgreSQL types each literal by its target column.
#include <cstdint>
#include <string>
#include <vector>

#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

class JdbcStatements {
 public:
  // `columns`: the database's column names for the input's columns (quoted);
  // `key_columns`: the upsert key's input columns (empty: append only).
  JdbcStatements(std::string quoted_table, std::vector<std::string> quoted_columns, std::vector<std::size_t> key_columns);

  // INSERT INTO t (a, b) VALUES (..), (..)[ ON CONFLICT (k) DO UPDATE SET b = EXCLUDED.b];
  void append_insert(const ColumnBatch& batch, const std::uint32_t* rows, std::size_t n, bool upsert,
                     std::string& out) const;
  // DELETE FROM t WHERE k IN (..) / WHERE (k1, k2) IN ((..), (..));
  void append_delete(const ColumnBatch& batch, const std::uint32_t* rows, std::size_t n, std::string& out) const;
  // COPY t (a, b) FROM STDIN, and its data rows.
  const std::string& copy_statement() const { return copy_; }
  void append_copy_rows(const ColumnBatch& batch, const std::uint32_t* rows, std::size_t n, std::string& out) const;

  // Upserts of many rows go through a staging table (a session's temporary table, emptied
  // at each commit): COPY the changes in, then one INSERT ... SELECT ... ON CONFLICT and
  // one DELETE ... USING, which parse no literals (several times faster than VALUES).
  const std::string& staging_create() const { return staging_create_; }
  const std::string& staging_copy() const { return staging_copy_; }
  const std::string& staging_merge() const { return staging_merge_; }  // ends with COMMIT
  // COPY rows of the staging table: the row, then whether it is a delete.
  void append_staging_rows(const ColumnBatch& batch, const std::uint32_t* rows, std::size_t n, bool deleted,
                           std::string& out) const;

 private:
  std::string table_;
  std::vector<std::string> columns_;
  std::vector<std::size_t> key_;
  std::string insert_head_;     // INSERT INTO t (a, b) VALUES
  std::string conflict_tail_;   // ON CONFLICT (k) DO UPDATE SET ...
  std::string delete_head_;     // DELETE FROM t WHERE k IN (
  std::string copy_;
  std::string staging_create_, staging_copy_, staging_merge_;
};

}  // namespace clink::sql
