#pragma once
// Grouping keys of the SQL aggregations: the key columns, the grouping sets over them,
// and the bytes a group is keyed by in state.
//
// One grouping set (plain GROUP BY): the RowKeyEncoder bytes of the key columns, the
// same bytes `sql_columns:<keys>` hashes when it routes a row, so state lands in the key
// group the row was routed to (keyed state, rescaling). No keys (a global aggregate):
// the single byte 0x01. Several grouping sets: the set's index byte, then the bytes of
// the keys in that set; such groups do not follow the routing, so the op runs at
// parallelism 1 (the planner expands rows before an exchange for parallel grouping sets,
// as Flink's Expand does).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

class SqlOpParams;

struct SqlGrouping {
  std::vector<std::size_t> keys;          // input columns
  std::vector<std::vector<bool>> in_set;  // per grouping set: whether each key is in it
  // "grouping_set_column": each output row ends with the index of its grouping set (INT
  // NOT NULL), which the planner's GROUPING / GROUPING_ID read.
  bool set_column = false;

  // "keys" and "grouping_sets" ([[index into keys]]; absent: one set of every key).
  static SqlGrouping parse(const SqlOpParams& p, const Schema& input);
  std::size_t num_sets() const { return in_set.size(); }
  // Whether groups follow the hash routing on the keys (one set with at least one key).
  bool routed() const { return in_set.size() == 1 && !keys.empty(); }

  void encode(const ColumnBatch& batch, std::size_t row, std::size_t set, std::string& out) const;
  // Appends the key columns of a key (NULL for keys outside its set) to out's columns
  // [0, keys.size()); returns the key's grouping set.
  std::size_t decode(std::string_view key, ColumnBatch& out) const;
  // With set_column: appends `set` to out's last column.
  void append_set_column(std::size_t set, ColumnBatch& out) const;
  // With set_column: the field of that column (after the operator's other fields).
  void set_column_field(std::vector<RowField>& out) const;
  // The output fields of the keys: the input's, nullable where some set leaves them out.
  void key_fields(const Schema& input, std::vector<RowField>& out) const;
};

// The declared output schema must have the derived fields' types (names are the planner's).
void check_output_types(const Schema& declared, const std::vector<RowField>& derived, const SqlOpParams& p);

}  // namespace clink::sql
