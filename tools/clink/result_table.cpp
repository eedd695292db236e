#include "result_table.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "clink/sql/common/types.hpp"

namespace clink::cli {
namespace {

constexpr std::size_t kMaxColumnWidth = 30;  // Flink's DEFAULT_MAX_COLUMN_WIDTH
constexpr std::string_view kNull = "<NULL>";

// Display width in code points (UTF-8 continuation bytes do not count).
std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// The byte length of the first `cps` code points of `s`.
std::size_t prefix_bytes(std::string_view s, std::size_t cps) {
  std::size_t i = 0, seen = 0;
  while (i < s.size()) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == cps) break;
      ++seen;
    }
    ++i;
  }
  return i;
}

std::size_t type_width(const std::string& type_text) {
  sql::LogicalType t;
  try {
    t = sql::parse_logical_type(type_text);
  } catch (const std::exception&) {
    return kMaxColumnWidth;
  }
  std::size_t w = kMaxColumnWidth;
  using K = sql::TypeKind;
  switch (t.kind()) {
    case K::kBoolean: w = 5; break;
    case K::kTinyInt: w = 4; break;
    case K::kSmallInt: w = 6; break;
    case K::kInt: w = 11; break;
    case K::kBigInt: w = 20; break;
    case K::kDecimal: w = static_cast<std::size_t>(t.precision()) + 2; break;
    case K::kDate: w = 10; break;
    case K::kTime: w = 8 + (t.precision() > 0 ? static_cast<std::size_t>(t.precision()) + 1 : 0); break;
    case K::kTimestamp:
    case K::kTimestampLtz: w = 19 + (t.precision() > 0 ? static_cast<std::size_t>(t.precision()) + 1 : 0); break;
    case K::kChar:
    case K::kVarChar: w = std::min<std::size_t>(kMaxColumnWidth, static_cast<std::size_t>(std::max(1, t.length()))); break;
    default: w = kMaxColumnWidth; break;
  }
  if (t.nullable()) w = std::max(w, kNull.size());
  return w;
}

}  // namespace

std::size_t column_width(const ResultColumn& column) {
  return std::max(display_width(column.name), type_width(column.type));
}

std::string render_rule(const std::vector<std::size_t>& widths) {
  std::string s = "+";
  for (std::size_t w : widths) s += std::string(w + 2, '-') + "+";
  return s + "\n";
}

std::string render_line(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths) {
  std::string s = "|";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::size_t w = display_width(cells[i]);
    s += " " + std::string(widths[i] > w ? widths[i] - w : 0, ' ') + cells[i] + " |";
  }
  return s + "\n";
}

std::string fit_cell(const std::optional<std::string>& cell, std::size_t width) {
  std::string_view text = cell ? std::string_view(*cell) : kNull;
  std::string s;
  // Line breaks would break the table.
  for (char c : text) s += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (display_width(s) <= width) return s;
  if (width <= 3) return s.substr(0, prefix_bytes(s, width));
  return s.substr(0, prefix_bytes(s, width - 3)) + "...";
}

TableauPrinter::TableauPrinter(std::vector<ResultColumn> columns, std::FILE* out)
    : columns_(std::move(columns)), out_(out) {
  widths_.push_back(2);
  for (const auto& c : columns_) widths_.push_back(column_width(c));
}

void TableauPrinter::header() {
  std::vector<std::string> names = {"op"};
  for (const auto& c : columns_) names.push_back(c.name);
  std::string s = render_rule(widths_) + render_line(names, widths_) + render_rule(widths_);
  std::fputs(s.c_str(), out_);
  std::fflush(out_);
}

void TableauPrinter::rows(const std::vector<ResultRow>& rows) {
  std::string s;
  std::vector<std::string> cells(widths_.size());
  for (const auto& r : rows) {
    cells[0] = std::string(sql::row_kind_short_string(r.kind));
    for (std::size_t i = 0; i < r.cells.size(); ++i) cells[i + 1] = fit_cell(r.cells[i], widths_[i + 1]);
    s += render_line(cells, widths_);
  }
  count_ += rows.size();
  std::fputs(s.c_str(), out_);
  std::fflush(out_);
}

void TableauPrinter::footer() {
  std::string s = render_rule(widths_);
  s += count_ == 1 ? "Received a total of 1 row\n" : fmt::format("Received a total of {} rows\n", count_);
  std::fputs(s.c_str(), out_);
  std::fflush(out_);
}

void MaterializedTable::apply(const std::vector<ResultRow>& changes) {
  for (const auto& c : changes) {
    ++changes_;
    if (c.kind == sql::RowKind::kInsert || c.kind == sql::RowKind::kUpdateAfter) {
      rows_.push_back(c.cells);
      continue;
    }
    // A retraction takes away the latest equal row: an update then lands where the row was.
    auto it = std::find(rows_.rbegin(), rows_.rend(), c.cells);
    if (it != rows_.rend()) rows_.erase(std::next(it).base());
  }
}

std::string MaterializedTable::render(std::size_t max_rows, std::size_t max_width) const {
  std::vector<std::size_t> widths;
  for (const auto& c : columns_) widths.push_back(display_width(c.name));
  std::size_t first = rows_.size() > max_rows ? rows_.size() - max_rows : 0;
  for (std::size_t r = first; r < rows_.size(); ++r)
    for (std::size_t i = 0; i < rows_[r].size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], std::min(max_width, display_width(rows_[r][i] ? *rows_[r][i] : std::string(kNull))));
  std::vector<std::string> names;
  for (const auto& c : columns_) names.push_back(c.name);
  std::string s = render_rule(widths) + render_line(names, widths) + render_rule(widths);
  std::vector<std::string> cells(widths.size());
  for (std::size_t r = first; r < rows_.size(); ++r) {
    for (std::size_t i = 0; i < widths.size(); ++i) cells[i] = fit_cell(i < rows_[r].size() ? rows_[r][i] : std::nullopt, widths[i]);
    s += render_line(cells, widths);
  }
  s += render_rule(widths);
  if (first > 0) s += fmt::format("({} earlier rows not shown)\n", first);
  s += fmt::format("{} row{} ({} change{} received)\n", rows_.size(), rows_.size() == 1 ? "" : "s", changes_,
                   changes_ == 1 ? "" : "s");
  return s;
}

}  // namespace clink::cli
