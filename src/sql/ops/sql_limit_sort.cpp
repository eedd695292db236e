// sql_limit: LIMIT n OFFSET m over an insert-only stream (parallelism 1): skips the first
// m rows, passes the next n, drops the rest. Its position (rows seen) is operator state.
// sql_sort: ORDER BY on bounded input: buffers every row, sorts at the end of input by the
// keys (NULLS FIRST / LAST as given; Flink's default is FIRST for ASC, LAST for DESC),
// stable, then emits the first `limit` rows. The buffer is operator state (the batch
// encoding of column_serde.hpp), so a restore resumes with the rows already received.
// With 'temporal' it is Flink's temporal sort on an unbounded input (the first key is an
// ascending time attribute, no LIMIT): 'rowtime' (RowTimeSortOperator) buffers the rows and
// emits those a watermark passes, sorted; as Flink's, it drops a row not after the last time
// it emitted (starting at 0), not after the watermark. 'proctime' (ProcTimeSortOperator)
// emits each arriving batch sorted.
#include <algorithm>
#include <memory>
#include <numeric>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_serde.hpp"
#include "clink/sql/common/temporal.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/state/state_codec.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

void check_parallelism(RuntimeContext& ctx, const std::string& where) {
  if (ctx.parallelism() != 1)
    throw ClinkError(where + ": runs at parallelism 1 (it sees every row), got " + std::to_string(ctx.parallelism()));
}

class SqlLimitOperator final : public StreamOperator {
 public:
  SqlLimitOperator(std::string where, std::int64_t limit, std::int64_t offset)
      : where_(std::move(where)), limit_(limit), offset_(offset) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    check_parallelism(ctx, where_);
    auto& items = ctx.operator_state().list(kState);
    if (!items.empty()) {
      std::string_view in(items.front());
      seen_ = StateCodec<std::int64_t>::decode(in);
    }
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    idx_.clear();
    for (std::size_t r = 0; r < in.size(); ++r) {
      if (in.row_kind(r) != RowKind::kInsert)
        throw ClinkError(where_ + ": LIMIT consumes insert-only input, row " + std::to_string(r) + " is " +
                         std::string(row_kind_short_string(in.row_kind(r))));
      const std::int64_t i = seen_++;
      if (i >= offset_ && i - offset_ < limit_) idx_.push_back(static_cast<std::uint32_t>(r));
    }
    if (idx_.empty()) return;
    if (idx_.size() == in.size()) {
      output().emit(std::move(batch));
      return;
    }
    output().emit(std::make_unique<ColumnBatch>(in.gather(idx_.data(), idx_.size())));
  }

  void snapshot_state(std::int64_t) override {
    auto& items = ctx().operator_state().list(kState);
    items.assign(1, std::string());
    StateCodec<std::int64_t>::encode(seen_, items.front());
  }

 private:
  static constexpr const char* kState = "sql-limit-seen";
  std::string where_;
  std::int64_t limit_, offset_;
  std::int64_t seen_ = 0;
  std::vector<std::uint32_t> idx_;
};

struct SortKey {
  std::size_t column;
  bool descending;
  bool nulls_first;
};

// -1, 0, 1 comparing rows a and b of one column (both non-NULL).
int compare_values(const Column& c, std::size_t a, std::size_t b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (c.type().kind()) {
    case TypeKind::kBoolean: return cmp(c.values<std::uint8_t>()[a], c.values<std::uint8_t>()[b]);
    case TypeKind::kTinyInt: return cmp(c.values<std::int8_t>()[a], c.values<std::int8_t>()[b]);
    case TypeKind::kSmallInt: return cmp(c.values<std::int16_t>()[a], c.values<std::int16_t>()[b]);
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: return cmp(c.values<std::int32_t>()[a], c.values<std::int32_t>()[b]);
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: return cmp(c.values<std::int64_t>()[a], c.values<std::int64_t>()[b]);
    case TypeKind::kFloat: return cmp(c.values<float>()[a], c.values<float>()[b]);
    case TypeKind::kDouble: return cmp(c.values<double>()[a], c.values<double>()[b]);
    case TypeKind::kDecimal: return cmp(c.values<Int128>()[a], c.values<Int128>()[b]);
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: {
      int r = c.string_at(a).compare(c.string_at(b));
      return r < 0 ? -1 : (r > 0 ? 1 : 0);
    }
    default: break;
  }
  throw ClinkError("ORDER BY over " + c.type().to_string() + " is not supported");
}

class SqlSortOperator final : public StreamOperator {
 public:
  enum class Temporal { kNone, kRowtime, kProctime };
  SqlSortOperator(std::string where, SchemaPtr schema, std::vector<SortKey> keys, std::int64_t limit, Temporal temporal)
      : where_(std::move(where)),
        schema_(std::move(schema)),
        keys_(std::move(keys)),
        limit_(limit),
        temporal_(temporal),
        rows_(schema_) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    check_parallelism(ctx, where_);
    for (const auto& item : ctx.operator_state().list(kEmittedState)) {
      std::string_view in(item);
      emitted_ = StateCodec<std::int64_t>::decode(in);
    }
    for (const auto& item : ctx.operator_state().list(kState)) {
      ColumnBatch b = deserialize_batch(schema_, item);
      std::vector<std::uint32_t> all(b.size());
      std::iota(all.begin(), all.end(), 0u);
      rows_.append_gather(b, all.data(), all.size());
    }
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    for (std::size_t r = 0; r < in.size(); ++r)
      if (in.row_kind(r) != RowKind::kInsert)
        throw ClinkError(where_ + ": ORDER BY consumes insert-only input, row " + std::to_string(r) + " is " +
                         std::string(row_kind_short_string(in.row_kind(r))));
    all_.clear();
    for (std::size_t r = 0; r < in.size(); ++r)  // a rowtime sort drops late rows
      if (temporal_ != Temporal::kRowtime || (!in.column(keys_[0].column).is_null(r) && time_ms(in, r) > emitted_))
        all_.push_back(static_cast<std::uint32_t>(r));
    rows_.append_gather(in, all_.data(), all_.size());
    if (temporal_ == Temporal::kProctime) emit_sorted(rows_.size());
  }

  void process_watermark(Watermark wm) override {
    if (temporal_ == Temporal::kRowtime && !wm.idle) {
      // The rows at or before the watermark leave, sorted; the rest wait.
      std::vector<std::uint32_t> waiting;
      all_.clear();
      for (std::size_t r = 0; r < rows_.size(); ++r) {
        const std::int64_t t = time_ms(rows_, r);
        if (t <= wm.timestamp) {
          all_.push_back(static_cast<std::uint32_t>(r));
          emitted_ = std::max(emitted_, t);
        } else {
          waiting.push_back(static_cast<std::uint32_t>(r));
        }
      }
      if (!all_.empty()) {
        ColumnBatch rest = rows_.gather(waiting.data(), waiting.size());
        rows_ = rows_.gather(all_.data(), all_.size());
        emit_sorted(rows_.size());
        rows_ = std::move(rest);
      }
    }
    StreamOperator::process_watermark(wm);
  }

  void snapshot_state(std::int64_t) override {
    auto& items = ctx().operator_state().list(kState);
    items.assign(1, serialize_batch(rows_));
    auto& emitted = ctx().operator_state().list(kEmittedState);
    emitted.assign(1, std::string());
    StateCodec<std::int64_t>::encode(emitted_, emitted.front());
  }

  void finish() override { emit_sorted(rows_.size()); }

 private:
  // A row's time attribute in milliseconds (the column holds microseconds).
  std::int64_t time_ms(const ColumnBatch& b, std::size_t r) const {
    return floor_div(b.column(keys_[0].column).values<std::int64_t>()[r], 1000);
  }

  // Emits the buffered rows sorted (the first `limit` of them) and clears the buffer.
  void emit_sorted(std::size_t count) {
    std::vector<std::uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [this](std::uint32_t a, std::uint32_t b) { return less(a, b); });
    if (limit_ >= 0 && static_cast<std::size_t>(limit_) < order.size()) order.resize(static_cast<std::size_t>(limit_));
    for (std::size_t begin = 0; begin < order.size(); begin += kDefaultBatchSize) {
      std::size_t n = std::min(kDefaultBatchSize, order.size() - begin);
      output().emit(std::make_unique<ColumnBatch>(rows_.gather(order.data() + begin, n)));
    }
    rows_.clear();
  }

  bool less(std::uint32_t a, std::uint32_t b) const {
    for (const auto& k : keys_) {
      const Column& c = rows_.column(k.column);
      const bool na = c.is_null(a), nb = c.is_null(b);
      if (na || nb) {
        if (na && nb) continue;
        return na == k.nulls_first;
      }
      int r = compare_values(c, a, b);
      if (r != 0) return k.descending ? r > 0 : r < 0;
    }
    return false;
  }

  static constexpr const char* kState = "sql-sort-buffer";
  static constexpr const char* kEmittedState = "sql-sort-emitted";
  std::string where_;
  SchemaPtr schema_;
  std::vector<SortKey> keys_;
  std::int64_t limit_;
  Temporal temporal_;
  std::int64_t emitted_ = 0;  // the largest time a rowtime sort emitted
  ColumnBatch rows_;
  std::vector<std::uint32_t> all_;
};

}  // namespace

void register_sql_limit_sort(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_limit",
      .description = "sql_row -> sql_row: LIMIT / OFFSET over insert-only input (parallelism 1)",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_limit", {"limit", "offset"});
        SchemaPtr in = p.input_schema(0);
        check_schema_equal(*in, *p.output_schema(), p.where() + ": param 'schema'");
        std::int64_t limit = p.require_int("limit", 0);
        std::int64_t offset = p.get_int("offset", 0, 0);
        return [where = p.where(), limit, offset] { return std::make_unique<SqlLimitOperator>(where, limit, offset); };
      }});
  r.add(OperatorFactoryInfo{
      .name = "sql_sort",
      .description = "sql_row -> sql_row: ORDER BY (with an optional LIMIT) on bounded input, emitted at its end",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_sort", {"keys", "limit", "temporal"});
        SchemaPtr in = p.input_schema(0);
        check_schema_equal(*in, *p.output_schema(), p.where() + ": param 'schema'");
        const auto& keys = p.require("keys");
        if (!keys.is_array() || keys.empty()) p.fail("param 'keys' must be a non-empty array, got " + keys.dump());
        std::vector<SortKey> sort_keys;
        for (std::size_t i = 0; i < keys.size(); ++i) {
          const auto& k = keys[i];
          const std::string what = "param 'keys'[" + std::to_string(i) + "]";
          if (!k.is_object() || !k.contains("column")) p.fail(what + " needs a 'column', got " + k.dump());
          for (const auto& [name, v] : k.items())
            if (name != "column" && name != "descending" && name != "nulls_first")
              p.fail(what + ": unknown field '" + name + "' (known: column, descending, nulls_first)");
          SortKey sk;
          sk.column = p.column(k.at("column"), *in, what + ".column");
          if (in->type(sk.column).is_nested()) p.fail(what + ": cannot order by " + in->type(sk.column).to_string());
          sk.descending = k.value("descending", false);
          sk.nulls_first = k.contains("nulls_first") ? k.at("nulls_first").get<bool>() : !sk.descending;
          sort_keys.push_back(sk);
        }
        std::int64_t limit = p.get_int("limit", -1, 0);
        using Temporal = SqlSortOperator::Temporal;
        Temporal temporal = Temporal::kNone;
        const std::string mode = p.get_choice("temporal", "none", {"none", "rowtime", "proctime"});
        if (mode != "none") {
          temporal = mode == "rowtime" ? Temporal::kRowtime : Temporal::kProctime;
          const TypeKind k = in->type(sort_keys[0].column).kind();
          if (sort_keys[0].descending || (k != TypeKind::kTimestamp && k != TypeKind::kTimestampLtz))
            p.fail("param 'temporal': the first key must be an ascending TIMESTAMP or TIMESTAMP_LTZ column");
          if (limit >= 0) p.fail("param 'temporal' takes no 'limit'");
        }
        return [where = p.where(), in, sort_keys, limit, temporal] {
          return std::make_unique<SqlSortOperator>(where, in, sort_keys, limit, temporal);
        };
      }});
}

}  // namespace clink::sql
