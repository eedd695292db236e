#include "clink/connectors/sql/sql_datagen_source.hpp"

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "clink/connectors/datagen.hpp"
#include "clink/connectors/rate_limiter.hpp"
#include "clink/core/error.hpp"
#include "clink/formats/sql_text_values.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/temporal.hpp"

namespace clink::sql {

namespace {

using detail::splitmix64;

// A uniform double in [0, 1) from 53 random bits.
double unit(std::uint64_t r) { return static_cast<double>(r >> 11) * 0x1.0p-53; }

// FLOAT/DOUBLE's range: Flink's default bounds for random floating numbers.
std::pair<double, double> type_range(TypeKind k) {
  if (k == TypeKind::kFloat) return {-3.4028234663852886e38, 3.4028234663852886e38};
  return {-1.7976931348623157e308, 1.7976931348623157e308};
}

class Generator {
 public:
  explicit Generator(const DatagenSqlConfig& c) : c_(c) {}

  // The wall-clock time DATE / TIMESTAMP values are drawn back from. Flink's random
  // generator takes now() per row; the reader sets it per batch, so an unbounded table
  // with a WATERMARK on a TIMESTAMP column sees event time advance and windows close.
  void set_now(std::int64_t now_ms) { now_ms_ = now_ms; }

  // Appends row `row`'s value of every field.
  void append_row(std::vector<Column>& cols, std::uint64_t row) const {
    for (std::size_t f = 0; f < cols.size(); ++f) append(cols[f], c_.fields[f], (f + 1) * 0x51ed27u, row);
  }

 private:
  void append(Column& col, const DatagenFieldSpec& s, std::uint64_t seed, std::uint64_t row) const {
    if (s.null_rate > 0 && unit(splitmix64(seed ^ 0xabcdefu, row)) < s.null_rate) {
      col.append_null();
      return;
    }
    const LogicalType& t = col.type();
    std::uint64_t r = splitmix64(seed, row);
    if (s.kind == DatagenFieldSpec::Kind::kSequence) {
      std::int64_t v = s.start + static_cast<std::int64_t>(row);
      if (t.is_character_string()) {
        col.append_string(std::to_string(v));
        return;
      }
      append_number(col, static_cast<double>(v), v);
      return;
    }
    switch (t.kind()) {
      case TypeKind::kNull: col.append_null(); return;
      case TypeKind::kBoolean: col.append<std::uint8_t>(r & 1); return;
      case TypeKind::kTinyInt:
      case TypeKind::kSmallInt:
      case TypeKind::kInt:
      case TypeKind::kBigInt:
      case TypeKind::kIntervalYearMonth:
      case TypeKind::kIntervalDayTime: {
        auto [ilo, ihi] = int_range(s, t.kind());
        std::uint64_t span = static_cast<std::uint64_t>(ihi) - static_cast<std::uint64_t>(ilo) + 1;  // 0: all 2^64
        std::int64_t v = static_cast<std::int64_t>(static_cast<std::uint64_t>(ilo) + (span == 0 ? r : r % span));
        append_number(col, static_cast<double>(v), v);
        return;
      }
      case TypeKind::kFloat:
      case TypeKind::kDouble: {
        auto [lo, hi] = range(s, t.kind());
        double u = unit(r);
        double v = lo * (1 - u) + hi * u;  // no hi - lo: it overflows for the full range
        append_number(col, v, 0);
        return;
      }
      case TypeKind::kDecimal: {
        // Uniform over the unscaled values in [min, max] (default: the precision's range).
        Int128 lo = -(Decimal128::pow10(t.precision()) - 1), hi = Decimal128::pow10(t.precision()) - 1;
        if (s.has_min) Decimal128::parse(s.min_text, t.precision(), t.scale(), lo);
        if (s.has_max) Decimal128::parse(s.max_text, t.precision(), t.scale(), hi);
        // Unsigned: hi - lo exceeds Int128 for DECIMAL(38, s)'s full range.
        UInt128 span = static_cast<UInt128>(hi) - static_cast<UInt128>(lo) + 1;
        UInt128 wide = (static_cast<UInt128>(r) << 64) | splitmix64(seed + 1, row);
        col.append<Int128>(static_cast<Int128>(static_cast<UInt128>(lo) + wide % span));
        return;
      }
      case TypeKind::kChar:
      case TypeKind::kVarChar:
      case TypeKind::kBinary:
      case TypeKind::kVarBinary: {
        std::int64_t len = s.length >= 0 ? s.length : (t.kind() == TypeKind::kChar || t.kind() == TypeKind::kBinary)
                                                          ? t.length()
                                                          : 100;
        if (t.length() < len) len = t.length();
        if (s.var_len && len > 0) len = 1 + static_cast<std::int64_t>(r % static_cast<std::uint64_t>(len));
        static constexpr char kHex[] = "0123456789abcdef";
        thread_local std::string text;
        text.resize(static_cast<std::size_t>(len));
        for (std::int64_t i = 0; i < len; i += 16) {
          std::uint64_t bits = splitmix64(seed + 2 + static_cast<std::uint64_t>(i), row);
          for (std::int64_t k = i; k < len && k < i + 16; ++k, bits >>= 4)
            text[static_cast<std::size_t>(k)] = t.is_character_string() ? kHex[bits & 15] : static_cast<char>(bits & 0xff);
        }
        col.append_string(text);
        return;
      }
      case TypeKind::kDate: {
        std::int64_t past = s.max_past_ms > 0 ? static_cast<std::int64_t>(r % static_cast<std::uint64_t>(s.max_past_ms)) : 0;
        col.append<std::int32_t>(static_cast<std::int32_t>(floor_div(now_ms_ - past, kMillisPerDay)));
        return;
      }
      case TypeKind::kTime: col.append<std::int32_t>(static_cast<std::int32_t>(r % kMillisPerDay)); return;
      case TypeKind::kTimestamp:
      case TypeKind::kTimestampLtz: {
        std::int64_t past = s.max_past_ms > 0 ? static_cast<std::int64_t>(r % static_cast<std::uint64_t>(s.max_past_ms)) : 0;
        col.append<std::int64_t>((now_ms_ - past) * kMicrosPerMilli);
        return;
      }
      case TypeKind::kArray:
      case TypeKind::kMap: {
        std::int64_t n = s.length >= 0 ? s.length : 3;
        DatagenFieldSpec inner;
        for (std::int64_t i = 0; i < n; ++i) {
          std::uint64_t sub = row * 1315423911u + static_cast<std::uint64_t>(i);
          append(col.child(0), inner, seed * 31 + 7, sub);
          if (t.is(TypeKind::kMap)) append(col.child(1), inner, seed * 31 + 11, sub);
        }
        finish_nested_value(col);
        return;
      }
      case TypeKind::kRow: {
        DatagenFieldSpec inner;
        for (std::size_t i = 0; i < col.num_children(); ++i) append(col.child(i), inner, seed * 31 + 13 + i, row);
        finish_nested_value(col);
        return;
      }
    }
  }

  // Integer bounds exactly (a double cannot hold INT64_MAX); min/max clamped to the type.
  static std::pair<std::int64_t, std::int64_t> int_range(const DatagenFieldSpec& s, TypeKind k) {
    std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
    switch (k) {
      case TypeKind::kTinyInt: lo = -128, hi = 127; break;
      case TypeKind::kSmallInt: lo = -32768, hi = 32767; break;
      case TypeKind::kInt:
      case TypeKind::kIntervalYearMonth: lo = INT32_MIN, hi = INT32_MAX; break;
      default: break;
    }
    auto clamp = [&](double d) {
      if (!(d > static_cast<double>(lo))) return lo;
      if (d >= static_cast<double>(hi)) return hi;
      return static_cast<std::int64_t>(d);
    };
    return {s.has_min ? clamp(std::ceil(s.min)) : lo, s.has_max ? clamp(std::floor(s.max)) : hi};
  }

  std::pair<double, double> range(const DatagenFieldSpec& s, TypeKind k) const {
    auto [lo, hi] = type_range(k);
    return {s.has_min ? s.min : lo, s.has_max ? s.max : hi};
  }

  static void append_number(Column& col, double d, std::int64_t i) {
    switch (col.type().kind()) {
      case TypeKind::kTinyInt: col.append<std::int8_t>(static_cast<std::int8_t>(i)); break;
      case TypeKind::kSmallInt: col.append<std::int16_t>(static_cast<std::int16_t>(i)); break;
      case TypeKind::kInt:
      case TypeKind::kIntervalYearMonth:
      case TypeKind::kDate:
      case TypeKind::kTime: col.append<std::int32_t>(static_cast<std::int32_t>(i)); break;
      case TypeKind::kFloat: col.append<float>(static_cast<float>(d)); break;
      case TypeKind::kDouble: col.append<double>(d); break;
      case TypeKind::kDecimal: {
        auto v = Decimal128::from_int64(i, col.type().precision(), col.type().scale());
        if (v) col.append<Int128>(*v);
        else col.append_null();
        break;
      }
      default: col.append<std::int64_t>(i); break;
    }
  }

  const DatagenSqlConfig& c_;
  std::int64_t now_ms_ = 0;
};

class DatagenReader final : public SqlSourceReader {
 public:
  DatagenReader(const DatagenSqlConfig& c, std::int64_t total, int subtask, int parallelism)
      : gen_(c), total_(total) {
    Split own{static_cast<std::uint64_t>(subtask), static_cast<std::uint64_t>(parallelism)};
    if (total_ < 0 || static_cast<std::int64_t>(own.next) < total_) splits_.push_back(own);
    if (c.rows_per_second > 0) limiter_.emplace(c.rows_per_second / parallelism, RateLimiter::Clock::now());
  }

  // FLIP-33's pendingRecords of a bounded datagen (number-of-rows, or a sequence's end):
  // the rows its splits have left; unbounded, it stays unknown (-1).
  void open(RuntimeContext& ctx) override {
    if (total_ >= 0) pending_ = &ctx.metrics().pending_records;
    report_pending();
  }

  Status poll(ColumnBatch& out, std::size_t max_rows) override {
    const Status s = generate(out, max_rows);
    report_pending();
    return s;
  }

  Status generate(ColumnBatch& out, std::size_t max_rows) {
    if (splits_.empty()) return Status::kEnd;
    auto n = static_cast<std::int64_t>(max_rows);
    if (limiter_) {
      n = limiter_->acquire(n, RateLimiter::Clock::now());
      if (n == 0) return Status::kNothingAvailable;
    }
    gen_.set_now(std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch()).count());
    std::size_t rows = 0;
    while (n > 0 && !splits_.empty()) {
      // Lowest next row first, so rows come in row order across restored splits.
      std::size_t s = 0;
      for (std::size_t i = 1; i < splits_.size(); ++i)
        if (splits_[i].next < splits_[s].next) s = i;
      Split& sp = splits_[s];
      gen_.append_row(out.columns(), sp.next);
      ++rows;
      --n;
      sp.next += sp.step;
      if (total_ >= 0 && sp.next >= static_cast<std::uint64_t>(total_)) splits_.erase(splits_.begin() + static_cast<std::ptrdiff_t>(s));
    }
    out.commit_rows(rows);
    return splits_.empty() ? Status::kEnd : Status::kMore;
  }
  std::int64_t wait_hint_ms() const override { return limiter_ ? limiter_->wait_ms() : 1; }

  std::vector<std::string> snapshot_splits() const override {
    std::vector<std::string> out;
    for (const auto& sp : splits_) out.push_back(std::to_string(sp.next) + " " + std::to_string(sp.step));
    return out;
  }
  void restore_splits(std::vector<std::string> splits) override {
    splits_.clear();
    for (const auto& text : splits) {
      Split sp;
      if (std::sscanf(text.c_str(), "%" SCNu64 " %" SCNu64, &sp.next, &sp.step) != 2 || sp.step == 0)
        throw ClinkError("sql_datagen_source: malformed split '" + text + "' in the restored checkpoint");
      if (total_ < 0 || sp.next < static_cast<std::uint64_t>(total_)) splits_.push_back(sp);
    }
    report_pending();
  }

 private:
  // Once per poll (a batch), one relaxed store.
  void report_pending() {
    if (!pending_) return;
    std::int64_t left = 0;
    for (const auto& sp : splits_) {
      const auto total = static_cast<std::uint64_t>(total_);
      if (sp.next < total) left += static_cast<std::int64_t>((total - sp.next + sp.step - 1) / sp.step);
    }
    pending_->store(left, std::memory_order_relaxed);
  }

  struct Split {
    std::uint64_t next = 0;
    std::uint64_t step = 1;
  };
  Generator gen_;
  std::int64_t total_;
  std::vector<Split> splits_;
  std::optional<RateLimiter> limiter_;
  std::atomic<std::int64_t>* pending_ = nullptr;  // the operator's pendingRecords, when bounded
};

}  // namespace

DatagenSqlSource::DatagenSqlSource(DatagenSqlConfig config) : config_(std::move(config)) {
  total_rows_ = config_.number_of_rows;
  for (const auto& f : config_.fields) {
    if (f.kind != DatagenFieldSpec::Kind::kSequence) continue;
    std::int64_t n = f.end - f.start + 1;
    if (total_rows_ < 0 || n < total_rows_) total_rows_ = n;
  }
}

std::unique_ptr<SqlSourceReader> DatagenSqlSource::create_reader(int subtask, int parallelism) const {
  return std::make_unique<DatagenReader>(config_, total_rows_, subtask, parallelism);
}

}  // namespace clink::sql
