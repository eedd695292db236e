// JSON construction functions: JSON_STRING, JSON_ARRAY and JSON_OBJECT (Flink's
// JsonStringFunction / JSON_ARRAY / JSON_OBJECT). Values are serialised straight from the
// columns (nested ARRAY/MAP/ROW included) into a reused buffer.
//   JSON_ARRAY(v, ...)                ABSENT ON NULL (Flink's default)
//   JSON_OBJECT(k, v, ...)            NULL ON NULL (Flink's default)
//   JSON_ARRAY_EX(on_null, raw, v, ...) / JSON_OBJECT_EX(on_null, raw, k, v, ...)
//     on_null 'NULL' | 'ABSENT'; raw: one '0'/'1' per value, '1' inserting that STRING value
//     as JSON text: the binder marks values that are themselves JSON_OBJECT / JSON_ARRAY
//     calls, which Flink nests as JSON rather than as strings.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "clink/sql/common/value_format.hpp"
#include "json_path.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

// Types JSON_STRING / JSON_ARRAY / JSON_OBJECT serialise (binary strings are not).
bool json_serialisable(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: return false;
    case TypeKind::kArray: return json_serialisable(t.element_type());
    case TypeKind::kMap: return json_serialisable(t.key_type()) && json_serialisable(t.value_type());
    case TypeKind::kRow:
      for (const auto& f : t.fields())
        if (!json_serialisable(f.type)) return false;
      return true;
    default: return true;
  }
}

// Appends a cell as a JSON value: strings quoted, numbers and booleans as Java prints
// them, ARRAY as an array, MAP and ROW as objects (keys as text), temporal values as
// their quoted CAST(... AS STRING) text.
void append_json_cell(const Column& c, std::size_t row, const TimeZone& zone, std::string& out, std::string& tmp) {
  if (c.is_null(row)) {
    out += "null";
    return;
  }
  const LogicalType& t = c.type();
  if (t.is_character_string()) {
    append_json_string(c.string_at(row), out);
  } else if (t.is(TypeKind::kBoolean)) {
    out += c.values<std::uint8_t>()[row] ? "true" : "false";
  } else if (t.is(TypeKind::kArray)) {
    auto [b, e] = c.list_range(row);
    out += '[';
    for (std::uint32_t k = b; k < e; ++k) {
      if (k != b) out += ',';
      append_json_cell(c.child(0), k, zone, out, tmp);
    }
    out += ']';
  } else if (t.is(TypeKind::kMap) || t.is(TypeKind::kRow)) {
    out += '{';
    bool map = t.is(TypeKind::kMap);
    std::size_t n = map ? c.list_range(row).second - c.list_range(row).first : t.fields().size();
    for (std::size_t k = 0; k < n; ++k) {
      if (k) out += ',';
      if (map) {
        std::size_t at = c.list_range(row).first + k;
        const Column& keys = c.child(0);
        if (keys.type().is_character_string() && keys.is_valid(at)) {
          append_json_string(keys.string_at(at), out);
        } else {
          tmp.clear();
          if (keys.is_null(at)) tmp = "null";
          else append_cell_string(keys, at, zone, false, tmp);
          append_json_string(tmp, out);
        }
        out += ':';
        append_json_cell(c.child(1), at, zone, out, tmp);
      } else {
        append_json_string(t.fields()[k].name, out);
        out += ':';
        append_json_cell(c.child(k), row, zone, out, tmp);
      }
    }
    out += '}';
  } else if (t.is_numeric()) {
    tmp.clear();
    append_cell_string(c, row, zone, false, tmp);
    out += tmp;
  } else {
    tmp.clear();
    append_cell_string(c, row, zone, false, tmp);
    append_json_string(tmp, out);
  }
}

struct ConstructorState {
  bool null_on_null;
  std::vector<bool> raw;  // per value; empty: none
};

// Resolves JSON_ARRAY[_EX] / JSON_OBJECT[_EX]: `extended` takes the two constant clause
// arguments first.
std::optional<ResolvedFunction> resolve_constructor(const char* name, bool object, bool extended,
                                                    std::span<const LogicalType> args) {
  std::size_t first = extended ? 2 : 0;
  if (args.size() < first || (object && (args.size() - first) % 2 != 0)) return std::nullopt;
  for (std::size_t k = 0; k < first; ++k)
    if (!args[k].is_character_string() && !args[k].is(TypeKind::kNull)) return std::nullopt;
  for (std::size_t k = first; k < args.size(); ++k) {
    if (!json_serialisable(args[k])) return std::nullopt;
    if (object && (k - first) % 2 == 0 && !args[k].is_character_string()) return std::nullopt;
  }
  ResolvedFunction f;
  // The name a serialised plan re-resolves by: the _EX form keeps its clause arguments.
  f.name = extended ? std::string(name) + "_EX" : std::string(name);
  f.arg_types.assign(args.begin(), args.end());
  f.return_type = LogicalType::string().not_null();
  f.null_policy = NullPolicy::kCustom;
  std::size_t values = object ? (args.size() - first) / 2 : args.size() - first;
  std::vector<LogicalType> types(args.begin(), args.end());
  f.prepare = [=](std::span<const LogicalType>, std::span<const std::optional<Value>> c) {
    auto st = std::make_shared<ConstructorState>(ConstructorState{!object ? false : true, {}});
    if (extended) {
      if (!c[0] || !c[1] || c[0]->is_null())
        throw SqlTypeError(fmt::format("{}: the ON NULL and raw-value arguments must be constants", name));
      std::string on_null = upper_ascii(c[0]->as_string());
      if (on_null != "NULL" && on_null != "ABSENT")
        throw SqlTypeError(fmt::format("{}: ON NULL must be NULL or ABSENT, not '{}'", name, c[0]->as_string()));
      st->null_on_null = on_null == "NULL";
      std::string mask = c[1]->is_null() ? std::string() : c[1]->as_string();
      if (!mask.empty() && mask.size() != values)
        throw SqlTypeError(fmt::format("{}: the raw-value mask '{}' needs one flag per value ({})", name, mask, values));
      for (std::size_t k = 0; k < mask.size(); ++k) {
        bool raw = mask[k] == '1';
        std::size_t arg = first + (object ? 2 * k + 1 : k);
        if (raw && !types[arg].is_character_string())
          throw SqlTypeError(fmt::format("{}: a raw JSON value must be a STRING, not {}", name, types[arg].to_string()));
        st->raw.push_back(raw);
      }
    }
    return std::shared_ptr<const void>(st);
  };
  f.kernel = [first, object, name](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const auto& st = *static_cast<const ConstructorState*>(ctx.state);
    const TimeZone& zone = *ctx.session->time_zone;
    std::string buf, tmp;
    out.reserve(ctx.rows);
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      buf = object ? "{" : "[";
      bool any = false;
      std::size_t step = object ? 2 : 1;
      for (std::size_t k = first, v = 0; k < a.size(); k += step, ++v) {
        const KernelArg& val = a[object ? k + 1 : k];
        if (object && !a[k].valid(i)) {
          if (ctx.is_active(i)) throw SqlRuntimeError(fmt::format("{}: a key is NULL", name));
          continue;
        }
        if (!val.valid(i) && !st.null_on_null) continue;
        if (any) buf += ',';
        any = true;
        if (object) {
          append_json_string(a[k].column->string_at(a[k].row(i)), buf);
          buf += ':';
        }
        if (val.valid(i) && v < st.raw.size() && st.raw[v]) buf += val.column->string_at(val.row(i));
        else append_json_cell(*val.column, val.row(i), zone, buf, tmp);
      }
      buf += object ? '}' : ']';
      out.append_string(buf);
    }
  };
  return f;
}

}  // namespace

void register_json_constructors(FunctionRegistry& r) {
  // JSON_STRING(x): x serialised as JSON; NULL stays NULL.
  r.add_scalar("JSON_STRING", "JSON_STRING(ANY but BINARY)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 1 || !json_serialisable(args[0])) return std::nullopt;
    ResolvedFunction f;
    f.name = "JSON_STRING";
    f.arg_types = {args[0]};
    f.return_type = LogicalType::string().with_nullable(args[0].nullable());
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      std::string buf, tmp;
      kernels::for_each_valid_row(ctx, out, [&](std::size_t i) {
        buf.clear();
        append_json_cell(*a[0].column, i, *ctx.session->time_zone, buf, tmp);
        out.append_string(buf);
      });
    };
    return f;
  });
  r.add_scalar("JSON_ARRAY", "JSON_ARRAY(value, ...)",
               [](std::span<const LogicalType> args) { return resolve_constructor("JSON_ARRAY", false, false, args); });
  r.add_scalar("JSON_ARRAY_EX", "JSON_ARRAY_EX(STRING on_null, STRING raw_mask, value, ...)",
               [](std::span<const LogicalType> args) { return resolve_constructor("JSON_ARRAY", false, true, args); });
  r.add_scalar("JSON_OBJECT", "JSON_OBJECT(STRING key, value, ...)",
               [](std::span<const LogicalType> args) { return resolve_constructor("JSON_OBJECT", true, false, args); });
  r.add_scalar("JSON_OBJECT_EX", "JSON_OBJECT_EX(STRING on_null, STRING raw_mask, STRING key, value, ...)",
               [](std::span<const LogicalType> args) { return resolve_constructor("JSON_OBJECT", true, true, args); });
}

}  // namespace clink::sql
