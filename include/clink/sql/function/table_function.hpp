#pragma once
// User table functions: `LATERAL TABLE(f(args))` in FROM (Flink's TableFunction, run by
// the Correlate operator). Per input row the function gets the row's argument values and
// appends any number of rows; the Correlate joins each to the input row (INNER: a row
// without any is dropped; LEFT JOIN ... ON TRUE: it is kept once with NULLs).
//
//   TableFunctionDef split;
//   split.params = {LogicalType::string(), LogicalType::string()};
//   split.columns = {{"word", LogicalType::string()}, {"len", LogicalType::int_type()}};
//   split.eval = [](const TableFunctionArgs& in, TableFunctionOutput& out) {
//     if (in.is_null(0)) return;
//     for (std::string_view w : words_of(in.string_at(0), in.string_at(1))) {
//       out.add_row();
//       out.set_string(0, w);
//       out.set_int(1, static_cast<std::int32_t>(w.size()));
//     }
//   };
//   TableFunctionRegistry::process().add("SPLIT", std::move(split));
//
// Register at startup, before the jobs that call the function are planned and run (as
// user aggregates: registration is not synchronised with lookups). Arguments are cast to
// `params` implicitly (Flink's implicit casts) by the planner; `eval` reads them typed.
// Values are written straight into the output columns: no per-row allocation.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/common/column.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::sql {

// The argument values of one input row, in the types of TableFunctionDef::params.
class TableFunctionArgs {
 public:
  explicit TableFunctionArgs(std::vector<const Column*> columns) : columns_(std::move(columns)) {}
  void set_row(std::size_t row) { row_ = row; }
  std::size_t size() const { return columns_.size(); }
  bool is_null(std::size_t i) const { return columns_[i]->is_null(row_); }
  bool bool_at(std::size_t i) const { return columns_[i]->values<std::uint8_t>()[row_] != 0; }
  std::int32_t int_at(std::size_t i) const { return columns_[i]->values<std::int32_t>()[row_]; }
  std::int64_t bigint_at(std::size_t i) const { return columns_[i]->values<std::int64_t>()[row_]; }
  double double_at(std::size_t i) const { return columns_[i]->values<double>()[row_]; }
  std::string_view string_at(std::size_t i) const { return columns_[i]->string_at(row_); }
  const Column& column(std::size_t i) const { return *columns_[i]; }
  std::size_t row() const { return row_; }

 private:
  std::vector<const Column*> columns_;
  std::size_t row_ = 0;
};

// Where a table function appends its rows: add_row() starts one, the setters fill its
// columns (typed as TableFunctionDef::columns); a column left unset is NULL.
class TableFunctionOutput {
 public:
  explicit TableFunctionOutput(std::vector<Column*> columns) : columns_(std::move(columns)) {}
  void add_row() {
    finish_row();
    ++rows_;
  }
  void set_null(std::size_t c) { column(c, nullptr).append_null(); }
  void set_bool(std::size_t c, bool v) { column(c, TypeKind::kBoolean).append<std::uint8_t>(v ? 1 : 0); }
  void set_int(std::size_t c, std::int32_t v) { column(c, TypeKind::kInt).append(v); }
  void set_bigint(std::size_t c, std::int64_t v) { column(c, TypeKind::kBigInt).append(v); }
  void set_double(std::size_t c, double v) { column(c, TypeKind::kDouble).append(v); }
  void set_string(std::size_t c, std::string_view v) { column(c, TypeKind::kVarChar).append_string(v); }

  // The framework's side: rows appended so far, and NULLs for the unset columns.
  std::size_t rows() const { return rows_; }
  void finish_row();

 private:
  // Column c of the current row, checked: a row started, c unset in it, of kind `kind`.
  Column& column(std::size_t c, TypeKind kind) {
    Column& col = column(c, nullptr);
    if (!col.type().is(kind)) wrong_kind(c, kind);
    return col;
  }
  Column& column(std::size_t c, std::nullptr_t);
  [[noreturn]] void wrong_kind(std::size_t c, TypeKind kind) const;
  std::vector<Column*> columns_;
  std::size_t rows_ = 0;
};

// The types TableFunctionArgs reads and TableFunctionOutput writes: BOOLEAN, INT, BIGINT,
// DOUBLE, STRING (also the column types of process table functions).
bool table_function_type_supported(const LogicalType& t);

struct TableFunctionDef {
  std::vector<LogicalType> params;
  std::vector<RowField> columns;  // the rows' columns (AS T(a, b) renames them)
  std::function<void(const TableFunctionArgs&, TableFunctionOutput&)> eval;
};

class TableFunctionRegistry {
 public:
  // The registry of this process (the planner and the Correlate operator look names up here).
  static TableFunctionRegistry& process();
  // Names are case-insensitive. Throws ClinkError for an invalid definition.
  void add(std::string_view name, TableFunctionDef def);
  const TableFunctionDef* find(std::string_view name) const;  // null when unknown

 private:
  std::map<std::string, TableFunctionDef> functions_;
};

}  // namespace clink::sql
