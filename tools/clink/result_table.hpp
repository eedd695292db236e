#pragma once
// How the CLI shows query results.
//   TableauPrinter   Flink SQL client's tableau mode for a streaming query: a header,
//                    then one line per changelog row with its `op` (+I -U +U -D), column
//                    widths fixed up front from the types (rows arrive one by one), and
//                    "Received a total of N rows" at the end.
//   MaterializedTable  the rows a changelog leaves (+I/+U add a row, -U/-D take an equal
//                    one away), for the shell's live table that updates in place.
#include <cstdio>
#include <string>
#include <vector>

#include "result_stream.hpp"

namespace clink::cli {

// A box table: +---+ rules, | cells |, right-aligned as Flink's tableau mode.
std::string render_rule(const std::vector<std::size_t>& widths);
std::string render_line(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths);
// A cell's text: "<NULL>" for NULL; cut to `width` with a trailing "..." when longer.
std::string fit_cell(const std::optional<std::string>& cell, std::size_t width);
// Flink's column width for a type (PrintUtils.columnWidthsByType), at least the name's.
std::size_t column_width(const ResultColumn& column);

class TableauPrinter {
 public:
  TableauPrinter(std::vector<ResultColumn> columns, std::FILE* out);
  void header();
  void rows(const std::vector<ResultRow>& rows);
  void footer();
  std::size_t count() const { return count_; }

 private:
  std::vector<ResultColumn> columns_;
  std::vector<std::size_t> widths_;  // op first
  std::FILE* out_;
  std::size_t count_ = 0;
};

class MaterializedTable {
 public:
  explicit MaterializedTable(std::vector<ResultColumn> columns) : columns_(std::move(columns)) {}
  void apply(const std::vector<ResultRow>& changes);
  const std::vector<std::vector<std::optional<std::string>>>& rows() const { return rows_; }
  std::size_t changes() const { return changes_; }
  // The whole table, widths from the data (at most `max_width` per column); when it has
  // more than `max_rows` rows, the last ones and a line saying how many are hidden.
  std::string render(std::size_t max_rows, std::size_t max_width = 40) const;

 private:
  std::vector<ResultColumn> columns_;
  std::vector<std::vector<std::optional<std::string>>> rows_;
  std::size_t changes_ = 0;
};

}  // namespace clink::cli
