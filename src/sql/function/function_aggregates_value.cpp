// FIRST_VALUE, LAST_VALUE, LISTAGG, ARRAY_AGG and COLLECT: the aggregates whose result depends on
// the arrival order of the rows, with Flink's runtime classes as the specification.
//
//  - FIRST_VALUE / LAST_VALUE skip NULLs. Over insert-only input (FirstValueAggFunction)
//    the accumulator is the one value (a fixed-size struct for fixed-width types). Over
//    updating input (FirstValueWithRetractAggFunction) it keeps every value in arrival
//    order: a retraction removes the earliest equal value (one never seen is ignored) and
//    the result is the first / last remaining one. Neither merges (Flink's have no merge()):
//    a HOP / CUMULATE window folds each row into each of its windows, SESSION rejects them.
//  - LISTAGG(x [, sep]) joins the non-NULL strings with sep (default ','); NULL when none.
//    Insert-only input (ListAggFunction) concatenates as rows arrive, each row joining with
//    its own separator; updating input (ListAgg[Ws]WithRetractAggFunction) keeps the list
//    and a list of retractions that found nothing to remove, joined with the last
//    separator seen. A NULL separator makes the result NULL, as Flink's CONCAT does.
//  - LAG(x [, offset [, default]]) OVER (...) (Flink's LagAggFunction, the streaming
//    LAG): the last offset + 1 values (NULLs included) in arrival order; the result is the
//    oldest of them once there are offset + 1, else the default (NULL without one). Each
//    row sets the offset and the default it brings, so peers of a RANGE frame (rows of one
//    time, accumulated together) all see the values and default of the last of them. A
//    NULL value offset rows back gives the default too (as Flink's generated code; Flink
//    then even gives the first LAG call's default to the others of the query, which clink
//    does not copy).
//  - ARRAY_AGG(x) collects the values, NULLs included (Flink's default RESPECT NULLS), in
//    arrival order; NULL when there are none. One accumulator for both inputs, like
//    Flink's ArrayAggFunction: the list and the unmatched retractions.
//  - COLLECT(x) (Flink's CollectAggFunction) counts the non-NULL values: a MULTISET<T>,
//    empty (not NULL) when there are none. A retraction decrements a value's count and
//    removes it at 1 -> 0; one of a value never seen records it with count -1, which later
//    rows raise to 0 and beyond without removing it (Flink's map of counts does the same).
// Values are kept as their bytes (a marker byte, then the fixed-width value or the string
// bytes), so a retraction compares bytes; nested types (ARRAY, MAP, ROW) are not accepted.
#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include "aggregate_support.hpp"
#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/multiset_type.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "collection_util.hpp"

namespace clink::sql {

namespace {

using aggregate_support::get;
using aggregate_support::get_bytes;
using aggregate_support::ObjectAggregate;
using aggregate_support::PodAggregate;
using aggregate_support::put;
using aggregate_support::ValueOrNone;
using aggregate_support::put_bytes;

bool is_storable(const LogicalType& t) { return !t.is_nested() && !t.is(TypeKind::kNull); }

// One cell as bytes: 0x00 for NULL, else 0x01 then the fixed-width value or the string.
void encode_cell(const Column& c, std::size_t row, std::string& out) {
  out.clear();
  if (c.is_null(row)) {
    out.push_back('\0');
    return;
  }
  out.push_back('\1');
  if (c.layout() == PhysicalLayout::kVarLen) {
    out.append(c.string_at(row));
  } else {
    const auto w = static_cast<std::size_t>(fixed_width(c.type().kind()));
    out.append(reinterpret_cast<const char*>(c.values_buffer().data()) + row * w, w);
  }
}
void append_cell(std::string_view cell, Column& out) {
  if (cell.empty() || cell[0] == '\0') return out.append_null();
  cell.remove_prefix(1);
  if (out.layout() == PhysicalLayout::kVarLen) return out.append_string(cell);
  const std::size_t row = out.size();
  out.grow_validity(row + 1);
  out.values_buffer().append(cell.data(), cell.size());
  out.set_valid(row, true);
  out.set_size(row + 1);
}

using Cells = std::deque<std::string>;

void serialize_cells(const Cells& cells, std::string& out) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(cells.size()));
  for (const auto& c : cells) put_bytes(out, c);
}
void deserialize_cells(Cells& cells, std::string_view& in) {
  cells.clear();
  const auto n = get<std::uint32_t>(in);
  for (std::uint32_t i = 0; i < n; ++i) cells.emplace_back(get_bytes(in));
}
// Removes the earliest element equal to `v`; false when there is none.
bool remove_first(Cells& cells, std::string_view v) {
  auto it = std::find(cells.begin(), cells.end(), v);
  if (it == cells.end()) return false;
  cells.erase(it);
  return true;
}

[[noreturn]] void no_retraction(const char* name) {
  throw ClinkError(fmt::format("{} over insert-only input cannot retract a row", name));
}
[[noreturn]] void no_merge(const char* name) {
  throw ClinkError(fmt::format("{} cannot merge accumulators (Flink's has no merge either)", name));
}

// ---------------------------------------------------------------- FIRST_VALUE / LAST_VALUE

// Insert-only FIRST_VALUE / LAST_VALUE over a fixed-width type T.
template <class T>
class FixedFirstLast final : public PodAggregate<ValueOrNone<T>> {
  using Base = PodAggregate<ValueOrNone<T>>;

 public:
  FixedFirstLast(LogicalType t, bool last) : Base(std::move(t)), last_(last) {}
  bool supports_retraction() const override { return false; }
  bool supports_merge() const override { return false; }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    const T* v = args[0]->template values<T>();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || args[0]->is_null(rows[k])) continue;
      auto& a = Base::A(accs[k]);
      if (last_ || !a.has) a = ValueOrNone<T>{v[rows[k]], true};
    }
  }
  void retract(void* const*, std::span<const Column* const>, std::span<const std::uint32_t>) const override {
    no_retraction(last_ ? "LAST_VALUE" : "FIRST_VALUE");
  }
  void merge(void*, const void*) const override { no_merge(last_ ? "LAST_VALUE" : "FIRST_VALUE"); }
  void get_value(const void* acc, Column& out) const override {
    if (Base::A(acc).has) out.append<T>(Base::A(acc).value);
    else out.append_null();
  }

 private:
  bool last_;
};

struct StringValueAcc {
  std::string value;
  bool has = false;
};

// Insert-only FIRST_VALUE / LAST_VALUE over strings and bytes.
class StringFirstLast final : public ObjectAggregate<StringValueAcc> {
 public:
  StringFirstLast(LogicalType t, bool last) : ObjectAggregate(std::move(t)), last_(last) {}
  bool supports_retraction() const override { return false; }
  bool supports_merge() const override { return false; }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || args[0]->is_null(rows[k])) continue;
      auto& a = A(accs[k]);
      if (last_ || !a.has) {
        a.value.assign(args[0]->string_at(rows[k]));
        a.has = true;
      }
    }
  }
  void retract(void* const*, std::span<const Column* const>, std::span<const std::uint32_t>) const override {
    no_retraction(last_ ? "LAST_VALUE" : "FIRST_VALUE");
  }
  void merge(void*, const void*) const override { no_merge(last_ ? "LAST_VALUE" : "FIRST_VALUE"); }
  void get_value(const void* acc, Column& out) const override {
    if (A(acc).has) out.append_string(A(acc).value);
    else out.append_null();
  }
  void serialize(const void* acc, std::string& out) const override {
    put<std::uint8_t>(out, A(acc).has ? 1 : 0);
    put_bytes(out, A(acc).value);
  }
  void deserialize(void* acc, std::string_view& in) const override {
    A(acc).has = get<std::uint8_t>(in) != 0;
    A(acc).value.assign(get_bytes(in));
  }

 private:
  bool last_;
};

// FIRST_VALUE / LAST_VALUE over updating input: the non-NULL values in arrival order.
class RetractingFirstLast final : public ObjectAggregate<Cells> {
 public:
  RetractingFirstLast(LogicalType t, bool last) : ObjectAggregate(std::move(t)), last_(last) {}
  bool supports_merge() const override { return false; }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    std::string cell;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || args[0]->is_null(rows[k])) continue;
      encode_cell(*args[0], rows[k], cell);
      A(accs[k]).push_back(cell);
    }
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    std::string cell;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || args[0]->is_null(rows[k])) continue;
      encode_cell(*args[0], rows[k], cell);
      remove_first(A(accs[k]), cell);
    }
  }
  void merge(void*, const void*) const override { no_merge(last_ ? "LAST_VALUE" : "FIRST_VALUE"); }
  void get_value(const void* acc, Column& out) const override {
    const Cells& c = A(acc);
    if (c.empty()) return out.append_null();
    append_cell(last_ ? c.back() : c.front(), out);
  }
  void serialize(const void* acc, std::string& out) const override { serialize_cells(A(acc), out); }
  void deserialize(void* acc, std::string_view& in) const override { deserialize_cells(A(acc), in); }

 private:
  bool last_;
};

std::unique_ptr<AggregateFunction> make_first_last(const LogicalType& t, bool last, bool retracting) {
  if (!is_storable(t)) return nullptr;
  LogicalType r = t.with_nullable(true);
  if (retracting) return std::make_unique<RetractingFirstLast>(r, last);
  switch (t.kind()) {
    case TypeKind::kBoolean:
    case TypeKind::kTinyInt: return std::make_unique<FixedFirstLast<std::int8_t>>(r, last);
    case TypeKind::kSmallInt: return std::make_unique<FixedFirstLast<std::int16_t>>(r, last);
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: return std::make_unique<FixedFirstLast<std::int32_t>>(r, last);
    case TypeKind::kFloat: return std::make_unique<FixedFirstLast<float>>(r, last);
    case TypeKind::kDouble: return std::make_unique<FixedFirstLast<double>>(r, last);
    case TypeKind::kDecimal: return std::make_unique<FixedFirstLast<Int128>>(r, last);
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: return std::make_unique<FixedFirstLast<std::int64_t>>(r, last);
    default: return std::make_unique<StringFirstLast>(r, last);
  }
}

// ---------------------------------------------------------------- LISTAGG

// The separator of row r: the second argument (NULL: nullopt), else ','.
std::optional<std::string_view> separator_at(std::span<const Column* const> args, std::uint32_t r) {
  if (args.size() < 2) return std::string_view(",");
  if (args[1]->is_null(r)) return std::nullopt;
  return args[1]->string_at(r);
}

struct ConcatAcc {
  std::string text;
  std::string last_separator;  // joins a merged accumulator's text after this one's
  bool has = false;            // text is not NULL
  bool null_separator = false;
};

// Insert-only LISTAGG (Flink's declarative ListAggFunction): acc := value when acc is NULL,
// else CONCAT(acc, separator, value) (NULL when the separator is NULL).
class ConcatListAgg final : public ObjectAggregate<ConcatAcc> {
 public:
  ConcatListAgg() : ObjectAggregate(LogicalType::string().with_nullable(true)) {}
  bool supports_retraction() const override { return false; }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::uint32_t r = rows[k];
      if (accs[k] == nullptr || args[0]->is_null(r)) continue;
      auto sep = separator_at(args, r);
      auto& a = A(accs[k]);
      a.null_separator = !sep;
      if (sep) a.last_separator.assign(*sep);
      append(a, sep, args[0]->string_at(r));
    }
  }
  void retract(void* const*, std::span<const Column* const>, std::span<const std::uint32_t>) const override {
    no_retraction("LISTAGG");
  }
  void merge(void* acc, const void* other) const override {
    const auto& o = A(other);
    if (!o.has) return;
    auto& a = A(acc);
    std::optional<std::string_view> sep;
    if (!o.null_separator) sep = o.last_separator;
    append(a, sep, o.text);
    a.last_separator = o.last_separator;
    a.null_separator = o.null_separator;
  }
  void get_value(const void* acc, Column& out) const override {
    if (A(acc).has) out.append_string(A(acc).text);
    else out.append_null();
  }
  void serialize(const void* acc, std::string& out) const override {
    const auto& a = A(acc);
    put<std::uint8_t>(out, static_cast<std::uint8_t>((a.has ? 1 : 0) | (a.null_separator ? 2 : 0)));
    put_bytes(out, a.text);
    put_bytes(out, a.last_separator);
  }
  void deserialize(void* acc, std::string_view& in) const override {
    auto& a = A(acc);
    const auto flags = get<std::uint8_t>(in);
    a.has = flags & 1;
    a.null_separator = flags & 2;
    a.text.assign(get_bytes(in));
    a.last_separator.assign(get_bytes(in));
  }

 private:
  static void append(ConcatAcc& a, std::optional<std::string_view> sep, std::string_view value) {
    if (!a.has) {
      a.text.assign(value);
      a.has = true;
    } else if (!sep) {
      a.text.clear();
      a.has = false;
    } else {
      a.text.append(*sep);
      a.text.append(value);
    }
  }
};

// Flink's list + retractList: the values, and the retractions that found no equal value
// in `list` (accumulate does not look at them; merge applies them).
struct ListAndRetractions {
  Cells list;
  Cells retracted;
};
// Appends other's lists to a's, then applies every pending retraction once more.
void merge_lists(ListAndRetractions& a, const ListAndRetractions& other) {
  a.list.insert(a.list.end(), other.list.begin(), other.list.end());
  Cells pending = std::move(a.retracted);
  pending.insert(pending.end(), other.retracted.begin(), other.retracted.end());
  a.retracted.clear();
  for (auto& v : pending)
    if (!remove_first(a.list, v)) a.retracted.push_back(std::move(v));
}
void serialize_lists(const ListAndRetractions& a, std::string& out) {
  serialize_cells(a.list, out);
  serialize_cells(a.retracted, out);
}
void deserialize_lists(ListAndRetractions& a, std::string_view& in) {
  deserialize_cells(a.list, in);
  deserialize_cells(a.retracted, in);
}

struct ListAggAcc : ListAndRetractions {
  std::string separator = ",";
  bool null_separator = false;
};

// LISTAGG over updating input (ListAggWsWithRetractAggFunction).
class RetractingListAgg final : public ObjectAggregate<ListAggAcc> {
 public:
  RetractingListAgg() : ObjectAggregate(LogicalType::string().with_nullable(true)) {}
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, args, rows, false);
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, args, rows, true);
  }
  void merge(void* acc, const void* other) const override {
    const auto& o = A(other);
    if (o.list.empty() && o.retracted.empty()) return;
    auto& a = A(acc);
    a.separator = o.separator;
    a.null_separator = o.null_separator;
    merge_lists(a, o);
  }
  void get_value(const void* acc, Column& out) const override {
    const auto& a = A(acc);
    if (a.list.empty() || a.null_separator) return out.append_null();
    std::string& arena = scratch();
    arena.clear();
    for (std::size_t i = 0; i < a.list.size(); ++i) {
      if (i) arena += a.separator;
      arena += a.list[i];
    }
    out.append_string(arena);
  }
  void serialize(const void* acc, std::string& out) const override {
    const auto& a = A(acc);
    serialize_lists(a, out);
    put<std::uint8_t>(out, a.null_separator ? 1 : 0);
    put_bytes(out, a.separator);
  }
  void deserialize(void* acc, std::string_view& in) const override {
    auto& a = A(acc);
    deserialize_lists(a, in);
    a.null_separator = get<std::uint8_t>(in) != 0;
    a.separator.assign(get_bytes(in));
  }

 private:
  static std::string& scratch() {
    thread_local std::string s;
    return s;
  }
  void update(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows,
              bool retract) const {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::uint32_t r = rows[k];
      if (accs[k] == nullptr || args[0]->is_null(r)) continue;
      auto& a = A(accs[k]);
      auto sep = separator_at(args, r);
      a.null_separator = !sep;
      if (sep) a.separator.assign(*sep);
      std::string_view v = args[0]->string_at(r);
      if (!retract) a.list.emplace_back(v);
      else if (!remove_first(a.list, v)) a.retracted.emplace_back(v);
    }
  }
};

// ---------------------------------------------------------------- LAG

struct LagAcc {
  std::int32_t offset = 1;
  std::string default_cell = std::string(1, '\0');  // NULL
  Cells buffer;                                     // at most offset + 1 values
};

class LagAggregate final : public ObjectAggregate<LagAcc> {
 public:
  LagAggregate(LogicalType result, std::vector<LogicalType> args)
      : ObjectAggregate(std::move(result)), args_(std::move(args)) {}
  std::vector<LogicalType> argument_types() const override { return args_; }
  bool supports_retraction() const override { return false; }
  bool supports_merge() const override { return false; }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    std::string cell;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::uint32_t r = rows[k];
      if (accs[k] == nullptr) continue;
      auto& a = A(accs[k]);
      if (args.size() > 2) encode_cell(*args[2], r, a.default_cell);
      if (args.size() > 1) {
        if (args[1]->is_null(r)) throw ClinkError("LAG: the offset is NULL");
        const std::int32_t offset = args[1]->values<std::int32_t>()[r];
        if (offset < 0) throw ClinkError(fmt::format("LAG: Offset({}) should be positive.", offset));
        a.offset = offset;
      }
      encode_cell(*args[0], r, cell);
      a.buffer.push_back(cell);
      while (a.buffer.size() > static_cast<std::size_t>(a.offset) + 1) a.buffer.pop_front();
    }
  }
  void retract(void* const*, std::span<const Column* const>, std::span<const std::uint32_t>) const override {
    no_retraction("LAG");
  }
  void merge(void*, const void*) const override { no_merge("LAG"); }
  void get_value(const void* acc, Column& out) const override {
    const auto& a = A(acc);
    // accumulate keeps at most offset + 1 values. A NULL value gives the default, as
    // Flink's generated code does with LagAggFunction's NULL result.
    const bool full = a.buffer.size() == static_cast<std::size_t>(a.offset) + 1;
    const bool null_value = !full || a.buffer.front().empty() || a.buffer.front()[0] == '\0';
    append_cell(null_value ? a.default_cell : a.buffer.front(), out);
  }
  void serialize(const void* acc, std::string& out) const override {
    const auto& a = A(acc);
    put<std::int32_t>(out, a.offset);
    put_bytes(out, a.default_cell);
    serialize_cells(a.buffer, out);
  }
  void deserialize(void* acc, std::string_view& in) const override {
    auto& a = A(acc);
    a.offset = get<std::int32_t>(in);
    a.default_cell.assign(get_bytes(in));
    deserialize_cells(a.buffer, in);
  }

 private:
  std::vector<LogicalType> args_;
};

// Flink takes a default of the value's Java class only (an INT value, an INT default):
// the same type kind, any two character strings, any two binary strings.
bool same_value_class(const LogicalType& value, const LogicalType& dflt) {
  if (dflt.is(TypeKind::kNull) || value.kind() == dflt.kind()) return true;
  if (value.is_character_string() && dflt.is_character_string()) return true;
  return value.is_binary_string() && dflt.is_binary_string();
}

std::unique_ptr<AggregateFunction> make_lag(std::span<const LogicalType> args) {
  if (args.empty() || args.size() > 3 || !is_storable(args[0])) return nullptr;
  if (args.size() > 1 && !args[1].is_integer()) return nullptr;
  if (args.size() > 2 && !same_value_class(args[0], args[2]))
    throw SqlTypeError(fmt::format("LAG: the default value's type {} is not the value's type {}: cast it explicitly "
                                   "(CAST(... AS {}))",
                                   args[2].to_string(), args[0].to_string(), args[0].with_nullable(true).to_string()));
  // NOT NULL only when the value and a default both are (LagAggFunction's output type).
  const bool not_null = !args[0].nullable() && args.size() == 3 && !args[2].nullable();
  std::vector<LogicalType> declared{args[0]};
  if (args.size() > 1) declared.push_back(LogicalType::int_type());
  if (args.size() > 2) declared.push_back(args[0]);
  return std::make_unique<LagAggregate>(args[0].with_nullable(!not_null), std::move(declared));
}

// ---------------------------------------------------------------- ARRAY_AGG

// ARRAY_AGG (Flink's ArrayAggFunction, RESPECT NULLS): the values, NULLs included.
class ArrayAgg final : public ObjectAggregate<ListAndRetractions> {
 public:
  explicit ArrayAgg(const LogicalType& element)
      : ObjectAggregate(LogicalType::array(element.with_nullable(true)).with_nullable(true)) {}
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    std::string cell;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr) continue;
      encode_cell(*args[0], rows[k], cell);
      A(accs[k]).list.push_back(cell);
    }
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    std::string cell;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr) continue;
      encode_cell(*args[0], rows[k], cell);
      auto& a = A(accs[k]);
      if (!remove_first(a.list, cell)) a.retracted.push_back(cell);
    }
  }
  // Unlike LISTAGG's, an empty `other` is not skipped: the pending retractions still
  // meet values accumulated after them (ArrayAggFunction.merge).
  void merge(void* acc, const void* other) const override { merge_lists(A(acc), A(other)); }
  void get_value(const void* acc, Column& out) const override {
    const auto& a = A(acc);
    if (a.list.empty()) return out.append_null();
    Column& elements = out.child(0);
    for (const auto& v : a.list) append_cell(v, elements);
    collections::commit_list(out);
  }
  void serialize(const void* acc, std::string& out) const override { serialize_lists(A(acc), out); }
  void deserialize(void* acc, std::string_view& in) const override { deserialize_lists(A(acc), in); }
};

// ---------------------------------------------------------------- COLLECT

// The counts by value bytes (encode_cell), each with the sequence number of its first
// insertion: a printed multiset is a java.util.HashMap whose entries sharing a bucket
// keep the order Flink's accumulator map inserted them in.
struct CollectAcc {
  struct Slot {
    std::uint64_t seq;
    std::int32_t count;
  };
  absl::flat_hash_map<std::string, Slot> counts;
  std::uint64_t next_seq = 0;

  // Debian's Abseil has its own string_view: heterogeneous lookups go through it.
  static absl::string_view key(std::string_view s) { return {s.data(), s.size()}; }
  void add(std::string_view cell, std::int32_t n) {
    auto it = counts.find(key(cell));
    if (it == counts.end()) counts.emplace(std::string(cell), Slot{next_seq++, n});
    else it->second.count += n;
  }
  std::vector<std::pair<const std::string*, const Slot*>> in_order() const {
    std::vector<std::pair<const std::string*, const Slot*>> v;
    v.reserve(counts.size());
    for (const auto& [cell, slot] : counts) v.emplace_back(&cell, &slot);
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second->seq < b.second->seq; });
    return v;
  }
};

class CollectAgg final : public ObjectAggregate<CollectAcc> {
 public:
  explicit CollectAgg(const LogicalType& element) : ObjectAggregate(multiset_type(element).not_null()) {}
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    std::string cell;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || args[0]->is_null(rows[k])) continue;
      encode_cell(*args[0], rows[k], cell);
      A(accs[k]).add(cell, 1);
    }
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    std::string cell;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || args[0]->is_null(rows[k])) continue;
      encode_cell(*args[0], rows[k], cell);
      auto& a = A(accs[k]);
      auto it = a.counts.find(CollectAcc::key(cell));
      if (it != a.counts.end() && it->second.count == 1) a.counts.erase(it);
      else a.add(cell, -1);
    }
  }
  void merge(void* acc, const void* other) const override {
    auto& a = A(acc);
    for (const auto& [cell, slot] : A(other).in_order()) a.add(*cell, slot->count);
  }
  void get_value(const void* acc, Column& out) const override {
    Column& elements = out.child(0);
    Column& counts = out.child(1);
    for (const auto& [cell, slot] : A(acc).in_order()) {
      append_cell(*cell, elements);
      counts.append<std::int32_t>(slot->count);
    }
    collections::commit_list(out);
  }
  void serialize(const void* acc, std::string& out) const override {
    const auto entries = A(acc).in_order();
    put<std::uint32_t>(out, static_cast<std::uint32_t>(entries.size()));
    for (const auto& [cell, slot] : entries) {
      put_bytes(out, *cell);
      put<std::int32_t>(out, slot->count);
    }
  }
  void deserialize(void* acc, std::string_view& in) const override {
    auto& a = A(acc);
    a.counts.clear();
    a.next_seq = 0;
    const auto n = get<std::uint32_t>(in);
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string_view cell = get_bytes(in);
      a.add(cell, get<std::int32_t>(in));
    }
  }
};

std::unique_ptr<AggregateFunction> with_distinct(std::unique_ptr<AggregateFunction> a, std::span<const LogicalType> args,
                                                 const AggregateOptions& o) {
  if (!a || !o.distinct) return a;
  return make_distinct_aggregate(std::move(a), args);
}

}  // namespace

void register_value_aggregate_functions(FunctionRegistry& r) {
  for (bool last : {false, true}) {
    r.add_aggregate(last ? "LAST_VALUE" : "FIRST_VALUE", last ? "LAST_VALUE(T)" : "FIRST_VALUE(T)",
                    [last](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                      if (args.size() != 1) return nullptr;
                      return with_distinct(make_first_last(args[0], last, o.needs_retraction), args, o);
                    });
  }
  r.add_aggregate("LISTAGG", "LISTAGG([DISTINCT] STRING [, STRING])",
                  [](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                    if (args.empty() || args.size() > 2) return nullptr;
                    for (const auto& t : args)
                      if (!t.is_character_string() && !t.is(TypeKind::kNull)) return nullptr;
                    std::unique_ptr<AggregateFunction> a;
                    if (o.needs_retraction) a = std::make_unique<RetractingListAgg>();
                    else a = std::make_unique<ConcatListAgg>();
                    return with_distinct(std::move(a), args, o);
                  });
  r.add_aggregate("LAG", "LAG([DISTINCT] T [, INT [, T]]) OVER (...)",
                  [](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                    return with_distinct(make_lag(args), args, o);
                  });
  r.add_aggregate("ARRAY_AGG", "ARRAY_AGG([DISTINCT] T)",
                  [](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                    if (args.size() != 1 || !is_storable(args[0])) return nullptr;
                    return with_distinct(std::make_unique<ArrayAgg>(args[0]), args, o);
                  });
  r.add_aggregate("COLLECT", "COLLECT([DISTINCT] T) -> MULTISET<T>",
                  [](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                    if (args.size() != 1 || !is_storable(args[0])) return nullptr;
                    return with_distinct(std::make_unique<CollectAgg>(args[0]), args, o);
                  });
}

}  // namespace clink::sql
