#include "clink/connectors/sql/sql_sinks.hpp"

#include <algorithm>

#include "clink/runtime/runtime_context.hpp"
#include "clink/state/state_codec.hpp"
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
  std::fflush(out_);  // an unbounded job's rows show as they come, also when stdout is a file or pipe
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

std::vector<SqlCollectResults::Entry> SqlCollectResults::entries(const ColumnBatch& batch, const TimeZone& zone) const {
  std::vector<std::string> lines = format_rows(batch, zone);
  std::vector<Entry> out(lines.size());
  std::lock_guard lock(mu_);
  for (std::size_t r = 0; r < lines.size(); ++r) {
    Entry& e = out[r];
    e.kind = batch.row_kind(r);
    // Retract: rows by their text (a multiset); upsert: by the key columns' printed
    // values (NULL apart from the text "null").
    if (mode_ == Mode::kRetract) {
      e.key = body(lines[r]);
    } else {
      for (std::size_t k : key_) {
        const Column& col = batch.column(k);
        if (col.is_null(r)) e.key += '\x01';
        else append_cell_string(col, r, zone, true, e.key);
        e.key += '\x1f';
      }
    }
    e.line = std::move(lines[r]);
  }
  return out;
}

void SqlCollectResults::apply(const std::vector<Entry>& rows) {
  std::lock_guard lock(mu_);
  apply_locked(rows);
}

void SqlCollectResults::commit(const std::string& transaction, const std::vector<Entry>& rows) {
  std::lock_guard lock(mu_);
  if (committed_.insert(transaction).second) apply_locked(rows);
}

void SqlCollectResults::apply_locked(const std::vector<Entry>& rows) {
  for (const Entry& e : rows) {
    changelog_.push_back(e.line);
    if (mode_ == Mode::kUpsert && e.kind == RowKind::kUpdateBefore) continue;  // an upsert sink ignores -U
    std::string row = "+I" + body(e.line);
    auto& at = positions_[e.key];
    if (mode_ == Mode::kUpsert && e.kind != RowKind::kDelete && !at.empty()) {
      slots_[at.front()] = row;  // the key's row is replaced in place
    } else if (is_accumulate(e.kind)) {
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
  committed_.clear();
}

// ---- sql_collect_sink ------------------------------------------------------------------

namespace {

std::string encode_transaction(const std::string& id, const std::vector<SqlCollectResults::Entry>& rows) {
  std::string item;
  StateCodec<std::string>::encode(id, item);
  StateCodec<std::int64_t>::encode(static_cast<std::int64_t>(rows.size()), item);
  for (const auto& e : rows) {
    StateCodec<std::int64_t>::encode(static_cast<std::int64_t>(e.kind), item);
    StateCodec<std::string>::encode(e.line, item);
    StateCodec<std::string>::encode(e.key, item);
  }
  return item;
}

std::pair<std::string, std::vector<SqlCollectResults::Entry>> decode_transaction(std::string_view in) {
  std::string id = StateCodec<std::string>::decode(in);
  std::vector<SqlCollectResults::Entry> rows(static_cast<std::size_t>(StateCodec<std::int64_t>::decode(in)));
  for (auto& e : rows) {
    e.kind = static_cast<RowKind>(StateCodec<std::int64_t>::decode(in));
    e.line = StateCodec<std::string>::decode(in);
    e.key = StateCodec<std::string>::decode(in);
  }
  return {std::move(id), std::move(rows)};
}
class CollectWriter final : public TransactionalSinkWriter<ColumnBatch> {
 public:
  CollectWriter(std::shared_ptr<SqlCollectResults> results, TimeZonePtr zone, int subtask)
      : results_(std::move(results)), zone_(std::move(zone)), subtask_(subtask) {}
  void open(RuntimeContext& ctx) override { transactional_ = ctx.checkpointing_enabled(); }
  void begin_transaction(std::int64_t transaction_id) override {
    id_ = std::to_string(subtask_) + ":" + std::to_string(transaction_id);
  }
  void write(const ColumnBatch& batch) override {
    if (!transactional_) {
      results_->add(batch, *zone_);
      return;
    }
    auto rows = results_->entries(batch, *zone_);
    open_.insert(open_.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
  }
  std::string pre_commit() override {
    std::string committable = open_.empty() ? std::string() : encode_transaction(id_, open_);
    open_.clear();
    return committable;
  }
  void commit(const std::string& committable) override {
    if (committable.empty()) return;
    auto [id, rows] = decode_transaction(committable);
    results_->commit(id, rows);
  }

 private:
  std::shared_ptr<SqlCollectResults> results_;
  TimeZonePtr zone_;
  int subtask_;
  bool transactional_ = false;
  std::string id_;                               // "<subtask>:<transaction id>"
  std::vector<SqlCollectResults::Entry> open_;  // the open transaction's rows
};

}  // namespace

std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> SqlCollectSink::create_writer(int subtask, int) const {
  return std::make_unique<CollectWriter>(results_, zone_, subtask);
}

}  // namespace clink::sql
