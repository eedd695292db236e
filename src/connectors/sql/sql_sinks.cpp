#include "clink/connectors/sql/sql_sinks.hpp"

#include <algorithm>

#include "clink/runtime/runtime_context.hpp"
#include "clink/sql/common/value_format.hpp"

namespace clink::sql {

std::string SqlPrintSinkOperator::prefix(const std::string& identifier, int subtask, int parallelism) {
  std::string p = identifier;
  if (parallelism > 1) p += (p.empty() ? "" : ":") + std::to_string(subtask + 1);
  if (!p.empty()) p += "> ";
  return p;
}

void SqlPrintSinkOperator::open(RuntimeContext& ctx) {
  StreamOperator::open(ctx);
  prefix_ = prefix(identifier_, ctx.subtask_index(), ctx.parallelism());
}

void SqlPrintSinkOperator::process_batch(int, BatchPtr batch) {
  const auto& b = column_batch_cast(*batch);
  buf_.clear();
  for (std::size_t r = 0; r < b.size(); ++r) {
    buf_ += prefix_;
    buf_ += format_row(b, r, *zone_);
    buf_ += '\n';
  }
  std::fwrite(buf_.data(), 1, buf_.size(), out_);  // one write per batch keeps lines whole
}

namespace {
std::mutex registry_mu;
std::map<std::string, std::shared_ptr<SqlCollectResults>>& registry() {
  static std::map<std::string, std::shared_ptr<SqlCollectResults>> r;
  return r;
}

// "[...]" of a "+I[...]" line: the row without its kind.
std::string body(const std::string& line) { return line.substr(2); }
}  // namespace

std::shared_ptr<SqlCollectResults> SqlCollectResults::get(const std::string& name) {
  std::lock_guard lock(registry_mu);
  auto& slot = registry()[name];
  if (!slot) slot = std::make_shared<SqlCollectResults>();
  return slot;
}

void SqlCollectResults::drop(const std::string& name) {
  std::lock_guard lock(registry_mu);
  registry().erase(name);
}

void SqlCollectResults::configure(Mode mode, std::vector<std::size_t> primary_key) {
  std::lock_guard lock(mu_);
  mode_ = mode;
  key_ = std::move(primary_key);
}

void SqlCollectResults::add(const ColumnBatch& batch, const TimeZone& zone) {
  std::vector<std::string> lines = format_rows(batch, zone);
  std::lock_guard lock(mu_);
  for (std::size_t r = 0; r < lines.size(); ++r) {
    RowKind kind = batch.row_kind(r);
    changelog_.push_back(lines[r]);
    std::string row = "+I" + body(lines[r]);
    // Retract: rows by their text (a multiset); upsert: by the key columns' printed
    // values (NULL apart from the text "null").
    std::string key;
    if (mode_ == Mode::kRetract) {
      key = body(lines[r]);
    } else {
      if (kind == RowKind::kUpdateBefore) continue;  // an upsert sink ignores -U
      for (std::size_t k : key_) {
        const Column& col = batch.column(k);
        if (col.is_null(r)) key += '\x01';
        else append_cell_string(col, r, zone, true, key);
        key += '\x1f';
      }
    }
    auto& at = positions_[key];
    if (mode_ == Mode::kUpsert && kind != RowKind::kDelete && !at.empty()) {
      slots_[at.front()] = row;  // the key's row is replaced in place
    } else if (is_accumulate(kind)) {
      at.push_back(slots_.size());
      slots_.emplace_back(std::move(row));
    } else if (!at.empty()) {  // -U/-D: the earliest equal row (retract) or the key's row (upsert) goes
      slots_[at.front()].reset();
      at.erase(at.begin());
    }
  }
}

std::vector<std::string> SqlCollectResults::changelog() const {
  std::lock_guard lock(mu_);
  return changelog_;
}

std::vector<std::string> SqlCollectResults::rows() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& row : slots_)
    if (row) out.push_back(*row);
  return out;
}

void SqlCollectResults::clear() {
  std::lock_guard lock(mu_);
  changelog_.clear();
  slots_.clear();
  positions_.clear();
}

}  // namespace clink::sql
