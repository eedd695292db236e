// The jdbc table source (include/clink/connectors/jdbc/jdbc_source.hpp).
#include "clink/connectors/jdbc/jdbc_source.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include "clink/connectors/jdbc/pg_table_info.hpp"
#include "clink/connectors/jdbc/pg_values.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"

namespace clink::sql {

std::vector<std::pair<std::int64_t, std::int64_t>> jdbc_partition_ranges(std::int64_t lower, std::int64_t upper,
                                                                          std::int64_t num) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (num <= 0 || lower > upper) return out;
  const std::int64_t count = upper - lower + 1;
  num = std::min(num, count);
  const std::int64_t size = (count + num - 1) / num;
  const std::int64_t big = count - (size - 1) * num;  // the first `big` ranges hold `size` values
  std::int64_t start = lower;
  for (std::int64_t i = 0; i < num; ++i) {
    const std::int64_t end = start + size - 1 - (i >= big ? 1 : 0);
    out.emplace_back(start, end);
    start = end + 1;
  }
  return out;
}

namespace {

constexpr std::int64_t kDefaultFetchSize = 1000;

struct SplitPosition {
  std::size_t split = 0;
  std::int64_t emitted = 0;  // rows of the split already emitted
};

class JdbcReader final : public SqlSourceReader {
 public:
  JdbcReader(const JdbcSqlSource& source, int subtask, int parallelism) : source_(source) {
    for (std::size_t s = 0; s < source_.num_splits(); ++s)
      if (static_cast<int>(s % static_cast<std::size_t>(parallelism)) == subtask) splits_.push_back({s, 0});
  }
  ~JdbcReader() override { close(); }

  void open(RuntimeContext& ctx) override { ctx_ = &ctx; }

  Status poll(ColumnBatch& out, std::size_t max_rows) override {
    while (!splits_.empty()) {
      if (!cursor_open_) start_split();
      const std::size_t rows = fetch(out, max_rows);
      if (rows > 0) {
        splits_.front().emitted += static_cast<std::int64_t>(rows);
        return Status::kMore;
      }
      finish_split();
    }
    return Status::kEnd;
  }

  std::vector<std::string> snapshot_splits() const override {
    std::vector<std::string> out;
    for (const auto& s : splits_) out.push_back(std::to_string(s.split) + " " + std::to_string(s.emitted));
    return out;
  }
  void restore_splits(std::vector<std::string> splits) override {
    close();
    splits_.clear();
    for (const auto& s : splits) {
      SplitPosition p;
      std::size_t space = s.find(' ');
      try {
        if (space == std::string::npos) throw std::invalid_argument("no offset");
        p.split = std::stoull(s.substr(0, space));
        p.emitted = std::stoll(s.substr(space + 1));
      } catch (const std::exception&) {
        throw ClinkError("sql_jdbc_source: a checkpointed split '" + s + "' is not '<split> <rows emitted>'");
      }
      if (p.split >= source_.num_splits())
        throw ClinkError("sql_jdbc_source: the checkpoint has split " + std::to_string(p.split) + " of table '" +
                         source_.config().table_name + "' but the table is read in " +
                         std::to_string(source_.num_splits()) +
                         " splits now: the scan.partition.* options must stay as they were");
      splits_.push_back(p);
    }
  }

  void close() override {
    if (conn_ && cursor_open_ && conn_->ok()) {
      try {
        conn_->exec("ROLLBACK");
      } catch (const std::exception&) {  // closing anyway
      }
    }
    cursor_open_ = false;
    conn_.reset();
  }

 private:
  const JdbcSourceConfig& c() const { return source_.config(); }

  PgConnection& connection() {
    if (!conn_ || !conn_->ok()) {
      conn_ = std::make_unique<PgConnection>(c().connection);
      // A repeatable order without ORDER BY: heap order, never a scan joined midway
      // (synchronized scans) or split over workers.
      conn_->exec("SET synchronize_seqscans = off; SET max_parallel_workers_per_gather = 0");
      check_table();
    }
    return *conn_;
  }

  // The table exists and has every projected column; its primary key orders the splits.
  void check_table() {
    const std::string quoted = quote_pg_table_name(c().table_name);
    auto info = describe_pg_table(*conn_, quoted);
    if (!info)
      throw ClinkError("jdbc source: table '" + c().table_name + "' does not exist in " +
                       conn_->describe());
    for (std::size_t i : c().projected) {
      std::string name = c().table_schema->name(i);
      std::string folded = name;
      std::transform(folded.begin(), folded.end(), folded.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (!info->column(folded))
        throw ClinkError("jdbc source: table '" + c().table_name + "' has no column '" +
                         folded + "' (its columns: " + info->column_names() + ")");
    }
    order_by_.clear();
    if (info->has_primary_key)
      for (const auto& k : info->unique_keys.front()) order_by_.push_back(quote_pg_identifier(k));
  }

  void start_split() {
    PgConnection& conn = connection();
    const SplitPosition& p = splits_.front();
    query_ = source_.split_query(p.split, order_by_, p.emitted);
    conn.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    conn.exec("DECLARE clink_scan NO SCROLL CURSOR FOR " + query_);
    cursor_open_ = true;
    const std::int64_t n = c().fetch_size > 0 ? c().fetch_size : kDefaultFetchSize;
    fetch_sql_ = "FETCH FORWARD " + std::to_string(n) + " FROM clink_scan";
    pending_ = PgResult();
    pending_row_ = 0;
  }

  void finish_split() {
    if (cursor_open_) conn_->exec("COMMIT");
    cursor_open_ = false;
    splits_.pop_front();
  }

  // Up to max_rows rows of the current split into `out`: 0 once the split is done.
  std::size_t fetch(ColumnBatch& out, std::size_t max_rows) {
    std::size_t rows = 0;
    const std::size_t ncols = c().projected.size();
    while (rows < max_rows) {
      if (pending_row_ >= pending_.rows()) {
        if (pending_.raw() && pending_.rows() == 0) break;  // the cursor is exhausted
        pending_ = conn_->exec(fetch_sql_);
        pending_row_ = 0;
        if (pending_.rows() == 0) break;
      }
      const int r = pending_row_++;
      for (std::size_t col = 0; col < ncols; ++col) {
        Column& column = out.column(col);
        if (pending_.is_null(r, static_cast<int>(col))) {
          column.append_null();
          continue;
        }
        try {
          append_pg_text_value(column, pending_.value(r, static_cast<int>(col)));
        } catch (const PgValueError& e) {
          throw ClinkError("jdbc source: table '" + c().table_name + "', column " + out.schema()->name(col) + ", row " +
                           std::to_string(splits_.front().emitted + static_cast<std::int64_t>(rows) + 1) +
                           " of split " + std::to_string(splits_.front().split) + ": " + e.what());
        }
      }
      ++rows;
    }
    if (rows > 0) out.commit_rows(rows);
    return rows;
  }

  const JdbcSqlSource& source_;
  RuntimeContext* ctx_ = nullptr;
  std::deque<SplitPosition> splits_;  // the front one is being read
  std::unique_ptr<PgConnection> conn_;
  std::vector<std::string> order_by_;
  bool cursor_open_ = false;
  std::string query_, fetch_sql_;
  PgResult pending_;  // the last FETCH, read from pending_row_ on
  int pending_row_ = 0;
};

}  // namespace

JdbcSqlSource::JdbcSqlSource(JdbcSourceConfig config) : config_(std::move(config)) {
  std::vector<RowField> fields;
  for (std::size_t i : config_.projected) {
    if (i >= config_.table_schema->size())
      throw ClinkError("projected field " + std::to_string(i) + " is not a field of " + config_.table_schema->to_string());
    fields.push_back(config_.table_schema->field(i));
  }
  output_schema_ = make_schema(std::move(fields));
}

std::string JdbcSqlSource::split_query(std::size_t split, const std::vector<std::string>& order_by,
                                       std::int64_t offset) const {
  std::string q = "SELECT ";
  for (std::size_t k = 0; k < config_.projected.size(); ++k) {
    if (k) q += ", ";
    q += quote_pg_column_name(config_.table_schema->name(config_.projected[k]));
  }
  if (config_.projected.empty()) q += "1";
  q += " FROM " + quote_pg_table_name(config_.table_name);
  std::vector<std::string> conditions;
  if (!config_.partitions.empty()) {
    const auto& [lo, hi] = config_.partitions.at(split);
    conditions.push_back(config_.partition_column + " BETWEEN " + std::to_string(lo) + " AND " + std::to_string(hi));
  }
  if (!config_.where.empty()) conditions.push_back(config_.where);
  for (std::size_t i = 0; i < conditions.size(); ++i) q += (i ? " AND (" : " WHERE (") + conditions[i] + ")";
  for (std::size_t i = 0; i < order_by.size(); ++i) q += (i ? ", " : " ORDER BY ") + order_by[i];
  if (offset > 0) q += " OFFSET " + std::to_string(offset);
  return q;
}

std::unique_ptr<SqlSourceReader> JdbcSqlSource::create_reader(int subtask, int parallelism) const {
  return std::make_unique<JdbcReader>(*this, subtask, parallelism);
}

}  // namespace clink::sql
