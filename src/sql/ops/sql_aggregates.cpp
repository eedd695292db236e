#include "clink/sql/ops/sql_aggregates.hpp"

#include <bit>
#include <cstring>

#include "clink/core/error.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/sql/decimal.hpp"
#include "clink/sql/ops/sql_op_spec.hpp"

namespace clink::sql {

using nlohmann::json;

namespace {

std::string upper(std::string s) {
  for (auto& ch : s)
    if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
  return s;
}

AggArg arg_kind_of(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kTinyInt:
    case TypeKind::kSmallInt:
    case TypeKind::kInt:
    case TypeKind::kBigInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime:
    case TypeKind::kIntervalYearMonth: return AggArg::kInt;
    case TypeKind::kFloat:
    case TypeKind::kDouble: return AggArg::kDouble;
    case TypeKind::kDecimal: return AggArg::kDecimal;
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: return AggArg::kString;
    case TypeKind::kBoolean: return AggArg::kBool;
    default: return AggArg::kNone;
  }
}

std::int64_t read_int(const Column& c, std::size_t row) {
  switch (fixed_width(c.type().kind())) {
    case 1: return c.values<std::int8_t>()[row];
    case 2: return c.values<std::int16_t>()[row];
    case 4: return c.values<std::int32_t>()[row];
    default: return c.values<std::int64_t>()[row];
  }
}
double read_double(const Column& c, std::size_t row) {
  return c.type().is(TypeKind::kFloat) ? c.values<float>()[row] : c.values<double>()[row];
}

std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
Int128 load128(const AggState& s, std::uint32_t at) {
  auto lo = static_cast<UInt128>(static_cast<std::uint64_t>(s.slots[at]));
  auto hi = static_cast<UInt128>(static_cast<std::uint64_t>(s.slots[at + 1]));
  return static_cast<Int128>((hi << 64) | lo);
}
void store128(AggState& s, std::uint32_t at, Int128 v) {
  auto u = static_cast<UInt128>(v);
  s.slots[at] = static_cast<std::int64_t>(static_cast<std::uint64_t>(u));
  s.slots[at + 1] = static_cast<std::int64_t>(static_cast<std::uint64_t>(u >> 64));
}
double load_double(const AggState& s, std::uint32_t at) { return std::bit_cast<double>(s.slots[at]); }

// Map keys: order-preserving bytes of the value (strings: their raw bytes, compared as
// Flink compares them, byte-wise).
std::string map_key(const RuntimeAggregate& c, const Column& col, std::size_t row) {
  std::string k;
  switch (c.arg_kind) {
    case AggArg::kInt: KeyCodec<std::int64_t>::encode(read_int(col, row), k); break;
    case AggArg::kBool: k.push_back(col.values<std::uint8_t>()[row] ? '\1' : '\0'); break;
    case AggArg::kDouble: {
      double v = read_double(col, row);
      if (v == 0) v = 0;
      auto bits = std::bit_cast<std::uint64_t>(v);
      constexpr std::uint64_t kSign = std::uint64_t(1) << 63;
      bits = (bits & kSign) ? ~bits : (bits | kSign);
      KeyCodec<std::uint64_t>::encode(bits, k);
      break;
    }
    case AggArg::kDecimal: {
      auto u = static_cast<UInt128>(col.values<Int128>()[row]) ^ (static_cast<UInt128>(1) << 127);
      KeyCodec<std::uint64_t>::encode(static_cast<std::uint64_t>(u >> 64), k);
      KeyCodec<std::uint64_t>::encode(static_cast<std::uint64_t>(u), k);
      break;
    }
    case AggArg::kString: k.assign(col.string_at(row)); break;
    case AggArg::kNone: break;
  }
  return k;
}

Value map_value(const RuntimeAggregate& c, std::string_view k) {
  switch (c.arg_kind) {
    case AggArg::kInt: return Value(KeyCodec<std::int64_t>::decode(k));
    case AggArg::kBool: return Value(k[0] != '\0');
    case AggArg::kDouble: {
      auto bits = KeyCodec<std::uint64_t>::decode(k);
      constexpr std::uint64_t kSign = std::uint64_t(1) << 63;
      bits = (bits & kSign) ? (bits & ~kSign) : ~bits;
      return Value(std::bit_cast<double>(bits));
    }
    case AggArg::kDecimal: {
      auto hi = static_cast<UInt128>(KeyCodec<std::uint64_t>::decode(k));
      auto lo = static_cast<UInt128>(KeyCodec<std::uint64_t>::decode(k));
      return Value::decimal(static_cast<Int128>(((hi << 64) | lo) ^ (static_cast<UInt128>(1) << 127)));
    }
    case AggArg::kString: return Value(std::string(k));
    case AggArg::kNone: break;
  }
  return Value();
}

bool uses_map(const RuntimeAggregate& c, bool retracting) {
  if (c.distinct && c.arg) return true;
  bool minmax = c.kind == AggKind::kMin || c.kind == AggKind::kMax;
  return minmax && (retracting || c.arg_kind == AggArg::kString);
}

std::uint32_t slots_of(const RuntimeAggregate& c) {
  switch (c.kind) {
    case AggKind::kCount: return 1;
    case AggKind::kSum:
    case AggKind::kAvg:
    case AggKind::kMin:
    case AggKind::kMax: return c.arg_kind == AggArg::kDecimal ? 3 : 2;
  }
  return 1;
}

// The value of an AVG: integer division truncating as Java's, double, or DECIMAL.
Value average(const RuntimeAggregate& c, const Value& sum, std::int64_t count) {
  if (c.arg_kind == AggArg::kInt) return Value(sum.as_int() / count);
  if (c.arg_kind == AggArg::kDouble) return Value(sum.as_double() / static_cast<double>(count));
  auto q = Decimal128::divide(sum.as_decimal(), c.arg_type.scale(), static_cast<Int128>(count), 0,
                              c.result_type.precision(), c.result_type.scale());
  return q ? Value::decimal(*q) : Value();
}

}  // namespace

AggregateSet::AggregateSet(std::vector<RuntimeAggregate> calls, bool retracting)
    : calls_(std::move(calls)), retracting_(retracting) {
  num_slots_ = retracting ? 1 : 0;
  for (auto& c : calls_) {
    if (uses_map(c, retracting)) {
      c.map = num_maps_++;
      if (c.distinct || c.kind == AggKind::kMin || c.kind == AggKind::kMax) continue;
    }
    c.slot = num_slots_;
    num_slots_ += slots_of(c);
  }
}

std::vector<RuntimeAggregate> AggregateSet::parse(const json& aggs, const Schema& input, const SqlOpParams& p) {
  if (!aggs.is_array()) p.fail("param 'aggregates' must be an array, got " + aggs.dump());
  std::vector<RuntimeAggregate> out;
  for (std::size_t i = 0; i < aggs.size(); ++i) {
    const json& a = aggs[i];
    const std::string what = "param 'aggregates'[" + std::to_string(i) + "]";
    if (!a.is_object() || !a.contains("function") || !a.at("function").is_string())
      p.fail(what + " needs a string 'function', got " + a.dump());
    for (const auto& [k, v] : a.items())
      if (k != "function" && k != "args" && k != "distinct" && k != "filter" && k != "type")
        p.fail(what + ": unknown field '" + k + "' (known: function, args, distinct, filter, type)");
    std::string fn = upper(a.at("function").get<std::string>());
    RuntimeAggregate c;
    if (fn == "COUNT") c.kind = AggKind::kCount;
    else if (fn == "SUM") c.kind = AggKind::kSum;
    else if (fn == "AVG") c.kind = AggKind::kAvg;
    else if (fn == "MIN") c.kind = AggKind::kMin;
    else if (fn == "MAX") c.kind = AggKind::kMax;
    else p.fail(what + ": unsupported aggregate function '" + fn + "' (supported: COUNT, SUM, AVG, MIN, MAX)");
    json args = a.value("args", json::array());
    if (!args.is_array() || args.size() > 1) p.fail(what + ": 'args' must hold at most one column, got " + args.dump());
    if (args.empty() && c.kind != AggKind::kCount) p.fail(what + ": " + fn + " needs one argument");
    if (!args.empty()) {
      c.arg = p.column(args[0], input, what + " argument");
      c.arg_type = input.type(*c.arg);
      c.arg_kind = arg_kind_of(c.arg_type);
      if (c.arg_kind == AggArg::kNone && c.kind != AggKind::kCount)
        p.fail(what + ": " + fn + " does not take an argument of type " + c.arg_type.to_string());
    }
    if (a.contains("distinct")) {
      if (!a.at("distinct").is_boolean()) p.fail(what + ": 'distinct' must be true or false");
      c.distinct = a.at("distinct").get<bool>();
    }
    if (c.distinct && c.arg_kind == AggArg::kNone) p.fail(what + ": DISTINCT " + fn + " needs a flat-typed argument");
    if (a.contains("filter") && !a.at("filter").is_null()) {
      c.filter = p.column(a.at("filter"), input, what + " filter");
      if (!input.type(*c.filter).is(TypeKind::kBoolean))
        p.fail(what + ": the filter column " + std::to_string(*c.filter) + " is " + input.type(*c.filter).to_string() +
               ", not BOOLEAN");
    }
    switch (c.kind) {
      case AggKind::kCount: c.result_type = LogicalType::bigint().not_null(); break;
      case AggKind::kSum:
      case AggKind::kAvg:
        if (!c.arg_type.is_numeric()) p.fail(what + ": " + fn + " needs a numeric argument, got " + c.arg_type.to_string());
        c.result_type = c.kind == AggKind::kSum ? sum_result_type(c.arg_type) : avg_result_type(c.arg_type);
        break;
      case AggKind::kMin:
      case AggKind::kMax: c.result_type = c.arg_type.with_nullable(true); break;
    }
    if (a.contains("type") && !a.at("type").is_null()) {
      LogicalType t;
      try {
        t = parse_logical_type(a.at("type").get<std::string>());
      } catch (const std::exception& e) {
        p.fail(what + ": bad 'type': " + e.what());
      }
      if (!t.same_ignoring_nullability(c.result_type))
        p.fail(what + ": declared type " + t.to_string() + " differs from the type of " + fn + ", " +
               c.result_type.to_string());
      c.result_type = t;
    }
    out.push_back(std::move(c));
  }
  return out;
}

AggState AggregateSet::create() const {
  AggState s;
  s.slots.assign(num_slots_, 0);
  if (num_maps_ > 0) s.maps = std::make_unique<std::vector<AggState::Map>>(static_cast<std::size_t>(num_maps_));
  return s;
}

void AggregateSet::add(AggState& s, const ColumnBatch& batch, std::size_t row, int sign) const {
  if (retracting_) s.slots[0] += sign;
  for (const auto& c : calls_) {
    if (c.filter) {
      const Column& f = batch.column(*c.filter);
      if (f.is_null(row) || f.values<std::uint8_t>()[row] == 0) continue;
    }
    if (!c.arg) {  // COUNT(*)
      s.slots[c.slot] += sign;
      continue;
    }
    const Column& col = batch.column(*c.arg);
    if (col.is_null(row)) continue;
    add_call(c, s, col, row, sign);
  }
}

void AggregateSet::add_call(const RuntimeAggregate& c, AggState& s, const Column& col, std::size_t row, int sign) const {
  if (c.map >= 0) {
    auto& m = (*s.maps)[static_cast<std::size_t>(c.map)];
    auto [it, created] = m.try_emplace(map_key(c, col, row), 0);
    it->second += sign;
    if (it->second == 0) m.erase(it);
    if (c.distinct || c.kind == AggKind::kMin || c.kind == AggKind::kMax) return;
  }
  const std::uint32_t at = c.slot;
  switch (c.kind) {
    case AggKind::kCount: s.slots[at] += sign; return;
    case AggKind::kSum:
    case AggKind::kAvg:
      if (c.arg_kind == AggArg::kInt) {
        s.slots[at] = wrap_add(s.slots[at], sign * read_int(col, row));
        s.slots[at + 1] += sign;
      } else if (c.arg_kind == AggArg::kDouble) {
        s.slots[at] = std::bit_cast<std::int64_t>(load_double(s, at) + sign * read_double(col, row));
        s.slots[at + 1] += sign;
      } else {
        Int128 v = col.values<Int128>()[row];
        store128(s, at, sign > 0 ? load128(s, at) + v : load128(s, at) - v);
        s.slots[at + 2] += sign;
      }
      return;
    case AggKind::kMin:
    case AggKind::kMax: {
      const bool is_min = c.kind == AggKind::kMin;
      if (c.arg_kind == AggArg::kDecimal) {
        Int128 v = col.values<Int128>()[row];
        if (s.slots[at + 2] == 0 || (is_min ? v < load128(s, at) : v > load128(s, at))) store128(s, at, v);
        s.slots[at + 2] = 1;
      } else if (c.arg_kind == AggArg::kDouble) {
        double v = read_double(col, row);
        if (s.slots[at + 1] == 0 || (is_min ? v < load_double(s, at) : v > load_double(s, at)))
          s.slots[at] = std::bit_cast<std::int64_t>(v);
        s.slots[at + 1] = 1;
      } else {
        std::int64_t v = c.arg_kind == AggArg::kBool ? col.values<std::uint8_t>()[row] : read_int(col, row);
        if (s.slots[at + 1] == 0 || (is_min ? v < s.slots[at] : v > s.slots[at])) s.slots[at] = v;
        s.slots[at + 1] = 1;
      }
      return;
    }
  }
}

void AggregateSet::merge(AggState& into, const AggState& from) const {
  if (retracting_) into.slots[0] += from.slots[0];
  for (const auto& c : calls_) {
    if (c.map >= 0) {
      auto& m = (*into.maps)[static_cast<std::size_t>(c.map)];
      for (const auto& [k, n] : (*from.maps)[static_cast<std::size_t>(c.map)]) {
        auto& x = m[k];
        x += n;
        if (x == 0) m.erase(k);
      }
      if (c.distinct || c.kind == AggKind::kMin || c.kind == AggKind::kMax) continue;
    }
    const std::uint32_t at = c.slot;
    switch (c.kind) {
      case AggKind::kCount: into.slots[at] += from.slots[at]; break;
      case AggKind::kSum:
      case AggKind::kAvg:
        if (c.arg_kind == AggArg::kInt) {
          into.slots[at] = wrap_add(into.slots[at], from.slots[at]);
          into.slots[at + 1] += from.slots[at + 1];
        } else if (c.arg_kind == AggArg::kDouble) {
          into.slots[at] = std::bit_cast<std::int64_t>(load_double(into, at) + load_double(from, at));
          into.slots[at + 1] += from.slots[at + 1];
        } else {
          store128(into, at, load128(into, at) + load128(from, at));
          into.slots[at + 2] += from.slots[at + 2];
        }
        break;
      case AggKind::kMin:
      case AggKind::kMax: {
        const bool is_min = c.kind == AggKind::kMin;
        if (c.arg_kind == AggArg::kDecimal) {
          if (from.slots[at + 2] == 0) break;
          Int128 v = load128(from, at);
          if (into.slots[at + 2] == 0 || (is_min ? v < load128(into, at) : v > load128(into, at))) store128(into, at, v);
          into.slots[at + 2] = 1;
        } else if (c.arg_kind == AggArg::kDouble) {
          if (from.slots[at + 1] == 0) break;
          double v = load_double(from, at);
          if (into.slots[at + 1] == 0 || (is_min ? v < load_double(into, at) : v > load_double(into, at)))
            into.slots[at] = from.slots[at];
          into.slots[at + 1] = 1;
        } else {
          if (from.slots[at + 1] == 0) break;
          std::int64_t v = from.slots[at];
          if (into.slots[at + 1] == 0 || (is_min ? v < into.slots[at] : v > into.slots[at])) into.slots[at] = v;
          into.slots[at + 1] = 1;
        }
        break;
      }
    }
  }
}

void AggregateSet::results(const AggState& s, std::vector<Value>& out) const {
  out.clear();
  for (const auto& c : calls_) {
    if (c.map >= 0 && (c.distinct || c.kind == AggKind::kMin || c.kind == AggKind::kMax)) {
      const auto& m = (*s.maps)[static_cast<std::size_t>(c.map)];
      if (c.kind == AggKind::kCount) {
        out.emplace_back(static_cast<std::int64_t>(m.size()));
      } else if (m.empty()) {
        out.emplace_back();
      } else if (c.kind == AggKind::kMin) {
        out.push_back(map_value(c, m.begin()->first));
      } else if (c.kind == AggKind::kMax) {
        out.push_back(map_value(c, m.rbegin()->first));
      } else {  // SUM / AVG DISTINCT over the distinct values
        Value sum;
        std::int64_t n = 0;
        for (const auto& [k, cnt] : m) {
          Value v = map_value(c, k);
          ++n;
          if (sum.is_null()) sum = v;
          else if (c.arg_kind == AggArg::kInt) sum = Value(wrap_add(sum.as_int(), v.as_int()));
          else if (c.arg_kind == AggArg::kDouble) sum = Value(sum.as_double() + v.as_double());
          else sum = Value::decimal(sum.as_decimal() + v.as_decimal());
        }
        out.push_back(c.kind == AggKind::kSum ? sum : average(c, sum, n));
      }
      continue;
    }
    const std::uint32_t at = c.slot;
    switch (c.kind) {
      case AggKind::kCount: out.emplace_back(s.slots[at]); break;
      case AggKind::kSum:
      case AggKind::kAvg: {
        const std::int64_t n = s.slots[at + (c.arg_kind == AggArg::kDecimal ? 2 : 1)];
        if (n == 0) {
          out.emplace_back();
          break;
        }
        Value sum = c.arg_kind == AggArg::kInt      ? Value(s.slots[at])
                    : c.arg_kind == AggArg::kDouble ? Value(load_double(s, at))
                                                    : Value::decimal(load128(s, at));
        out.push_back(c.kind == AggKind::kSum ? sum : average(c, sum, n));
        break;
      }
      case AggKind::kMin:
      case AggKind::kMax: {
        if (s.slots[at + (c.arg_kind == AggArg::kDecimal ? 2 : 1)] == 0) {
          out.emplace_back();
        } else if (c.arg_kind == AggArg::kDecimal) {
          out.push_back(Value::decimal(load128(s, at)));
        } else if (c.arg_kind == AggArg::kDouble) {
          out.emplace_back(load_double(s, at));
        } else if (c.arg_kind == AggArg::kBool) {
          out.emplace_back(s.slots[at] != 0);
        } else {
          out.emplace_back(s.slots[at]);
        }
        break;
      }
    }
  }
}

}  // namespace clink::sql

namespace clink {

void StateCodec<sql::AggState>::encode(const sql::AggState& s, std::string& out) {
  put_varint(s.slots.size(), out);
  for (auto v : s.slots) put_varint(zigzag(v), out);
  put_varint(s.maps ? s.maps->size() : 0, out);
  if (!s.maps) return;
  for (const auto& m : *s.maps) {
    put_varint(m.size(), out);
    for (const auto& [k, n] : m) {
      StateCodec<std::string>::encode(k, out);
      put_varint(zigzag(n), out);
    }
  }
}

sql::AggState StateCodec<sql::AggState>::decode(std::string_view& in) {
  sql::AggState s;
  auto n = get_varint(in);
  s.slots.resize(n);
  for (auto& v : s.slots) v = unzigzag(get_varint(in));
  auto maps = get_varint(in);
  if (maps == 0) return s;
  s.maps = std::make_unique<std::vector<sql::AggState::Map>>(maps);
  for (auto& m : *s.maps) {
    auto entries = get_varint(in);
    for (std::uint64_t i = 0; i < entries; ++i) {
      std::string k = StateCodec<std::string>::decode(in);
      m.emplace(std::move(k), unzigzag(get_varint(in)));
    }
  }
  return s;
}

}  // namespace clink
