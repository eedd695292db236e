#include "clink/connectors/sql/filesystem_partitions.hpp"

#include "clink/core/error.hpp"
#include "clink/formats/sql_text_values.hpp"
#include "clink/sql/expression/expr_compiler.hpp"

namespace clink::sql {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The directories of `file` below `base` (views into `file`), outermost first; false when
// `file` is not below `base`.
bool directories_below(const std::string& base, const std::string& file, std::vector<std::string_view>& dirs) {
  dirs.clear();
  std::string_view rest(file);
  std::string_view b(base);
  while (b.size() > 1 && b.back() == '/') b.remove_suffix(1);
  if (!rest.starts_with(b) || rest.size() == b.size() || rest[b.size()] != '/') return false;
  rest.remove_prefix(b.size() + 1);
  for (auto slash = rest.find('/'); slash != std::string_view::npos; slash = rest.find('/')) {
    if (slash > 0) dirs.push_back(rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
  }
  return true;
}

}  // namespace

std::string unescape_partition_value(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    // As Java's unescapePathName: "%XY" needs two more characters after the '%'.
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = hex_digit(text[i + 1]), lo = hex_digit(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

FilePartitions::FilePartitions(std::string base, SchemaPtr output, std::vector<std::pair<std::size_t, std::string>> columns,
                               std::size_t depth, std::string default_name)
    : base_(std::move(base)), output_(std::move(output)), columns_(std::move(columns)), depth_(depth),
      default_name_(std::move(default_name)), rows_(output_) {
  for (const auto& [c, name] : columns_)
    if (output_->type(c).is_nested())
      throw ClinkError("partition column `" + name + "` is " + output_->type(c).to_string() +
                       ": a partition value must be of a scalar type");
}

std::vector<std::string> FilePartitions::in_partitions(const std::vector<std::string>& files) const {
  std::vector<std::string> out;
  std::vector<std::string_view> dirs;
  for (const auto& f : files)
    if (directories_below(base_, f, dirs) && dirs.size() >= depth_) out.push_back(f);
  return out;
}

void FilePartitions::assign(const std::vector<std::string>& files) {
  rows_.clear();
  for (const auto& f : files) append_values(f);
}

void FilePartitions::append_values(const std::string& file) {
  if (!directories_below(base_, file, dirs_)) dirs_.clear();
  for (const auto& [c, name] : columns_) {
    Column& col = rows_.column(c);
    bool found = false;
    for (auto d = dirs_.rbegin(); d != dirs_.rend() && !found; ++d) {
      auto eq = d->find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == d->size()) continue;  // as Flink's ([^/]+)=([^/]+)
      if (unescape_partition_value(d->substr(0, eq)) != name) continue;
      found = true;
      value_ = unescape_partition_value(d->substr(eq + 1));
      if (value_ == default_name_) {
        col.append_null();
      } else if (!append_text_value(col, value_, TimestampStandard::kSql, reason_)) {
        throw ClinkError("file " + file + ": partition column `" + name + "` of directory '" + std::string(*d) +
                         "': " + reason_);
      }
    }
    if (!found) col.append_null();
  }
  // The other columns are NULL: the predicate references partition columns only.
  for (std::size_t c = 0; c < rows_.num_columns(); ++c)
    if (rows_.column(c).size() == rows_.size()) rows_.column(c).append_null();
  rows_.commit_rows(1);
}

std::vector<std::string> FilePartitions::prune(const std::vector<std::string>& files, const ExprPtr& filter,
                                               const SessionContext& session) {
  if (!filter || files.empty()) return files;
  std::size_t n = 0;
  try {
    CompiledPredicate predicate(filter, session);
    n = predicate.select(rows_, idx_);
  } catch (const SqlRuntimeError&) {
    return files;  // pruning is an optimisation: the filter above raises it for the rows it concerns
  }
  std::vector<std::string> kept;
  kept.reserve(n);
  for (std::size_t i = 0; i < n; ++i) kept.push_back(files[idx_[i]]);
  return kept;
}

void FilePartitions::fill(std::size_t f, std::size_t n, std::vector<Column>& columns) {
  if (n == 0 || columns_.empty()) return;
  idx_.assign(n, static_cast<std::uint32_t>(f));
  for (const auto& [c, name] : columns_) columns[c].append_gather(rows_.column(c), idx_.data(), n);
}

}  // namespace clink::sql
