// JSON query functions: JSON_VALUE, JSON_QUERY, JSON_EXISTS and IS_JSON (Flink's
// SqlJsonUtils semantics; the constructors are in function_json_construct.cpp). Documents are parsed with
// simdjson's DOM parser, one parser per batch (its buffers are reused across rows); a
// constant path is compiled once (prepare). The SQL clauses arrive as extra constant
// STRING arguments (see docs/sql-functions.md for the binder's lowering):
//   JSON_VALUE(json, path [, on_empty, default_on_empty, on_error, default_on_error])
//     behaviours 'NULL' | 'ERROR' | 'DEFAULT' (the default value is the next argument)
//   JSON_QUERY(json, path [, wrapper, on_empty, on_error])
//     wrapper 'WITHOUT' | 'CONDITIONAL' | 'UNCONDITIONAL'; behaviours 'NULL' | 'ERROR' |
//     'EMPTY ARRAY' | 'EMPTY OBJECT'
//   JSON_EXISTS(json, path [, on_error])   'FALSE' | 'TRUE' | 'UNKNOWN' | 'ERROR'
//   IS_JSON(x [, kind])                      'VALUE' | 'SCALAR' | 'ARRAY' | 'OBJECT'
#include <memory>
#include <string>

#include <fmt/format.h>

#include "clink/sql/common/value_format.hpp"
#include "json_path.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

void register_json_constructors(FunctionRegistry& r);  // function_json_construct.cpp

namespace {

namespace dom = simdjson::dom;

enum class Behavior { kNull, kError, kDefault, kEmptyArray, kEmptyObject, kTrue, kFalse, kUnknown };
enum class Wrapper { kWithout, kConditional, kUnconditional };

std::optional<std::string> constant_string(std::string_view fn, std::span<const std::optional<Value>> c, std::size_t i,
                                           const char* what) {
  if (i >= c.size()) return std::nullopt;
  if (!c[i]) throw SqlTypeError(fmt::format("{}: the {} argument must be a constant", fn, what));
  if (c[i]->is_null()) return std::nullopt;
  return c[i]->as_string();
}

Behavior parse_behavior(std::string_view fn, const std::optional<std::string>& s, Behavior dflt,
                        std::initializer_list<Behavior> allowed) {
  if (!s) return dflt;
  std::string u = upper_ascii(*s);
  static const std::pair<const char*, Behavior> kNames[] = {
      {"NULL", Behavior::kNull}, {"ERROR", Behavior::kError}, {"DEFAULT", Behavior::kDefault},
      {"EMPTY ARRAY", Behavior::kEmptyArray}, {"EMPTY OBJECT", Behavior::kEmptyObject}, {"TRUE", Behavior::kTrue},
      {"FALSE", Behavior::kFalse}, {"UNKNOWN", Behavior::kUnknown}};
  for (const auto& [name, b] : kNames)
    if (u == name)
      for (Behavior a : allowed)
        if (a == b) return b;
  throw SqlTypeError(fmt::format("{}: unsupported ON EMPTY / ON ERROR behaviour '{}'", fn, *s));
}

struct JsonCallState {
  std::unique_ptr<JsonPath> path;  // null: the path is not constant
  Behavior on_empty = Behavior::kNull, on_error = Behavior::kNull;
  Wrapper wrapper = Wrapper::kWithout;
};

std::unique_ptr<JsonPath> constant_path(std::span<const std::optional<Value>> c) {
  if (c.size() > 1 && c[1] && !c[1]->is_null()) return std::make_unique<JsonPath>(c[1]->as_string());
  return nullptr;
}

// The per-batch evaluation context: the parser, the selected values and the path cache.
struct JsonRows {
  explicit JsonRows(const JsonCallState& s) : state(s) {}
  const JsonCallState& state;
  dom::parser parser;
  std::vector<dom::element> hits;
  std::unique_ptr<JsonPath> row_path;
  std::string row_path_text;
  std::string buf;
  bool list = false;  // the path has a wildcard: `hits` form one JSON array value

  const JsonPath& path(std::string_view text) {
    if (state.path) return *state.path;
    if (!row_path || text != row_path_text) {
      row_path = std::make_unique<JsonPath>(text);
      row_path_text = text;
    }
    return *row_path;
  }
  // Parses and evaluates; false on a parse or strict-path error.
  bool select(std::string_view json, std::string_view path_text) {
    hits.clear();
    dom::element root;
    if (json.empty() || parser.parse(json.data(), json.size(), true).get(root) != simdjson::SUCCESS) return false;
    const JsonPath& p = path(path_text);
    list = !p.definite();
    return p.evaluate(root, hits);
  }
};

using kernels::sv;
bool is_scalar(dom::element e) { return e.type() != dom::element_type::ARRAY && e.type() != dom::element_type::OBJECT; }

ResolvedFunction base(const char* name, std::span<const LogicalType> args, LogicalType result) {
  ResolvedFunction f;
  f.name = name;
  for (const auto& t : args) f.arg_types.push_back(LogicalType::string().with_nullable(t.nullable()));
  f.return_type = result;
  f.null_policy = NullPolicy::kCustom;
  return f;
}

bool all_strings(std::span<const LogicalType> args) {
  for (const auto& t : args)
    if (!supports_implicit_cast(t, LogicalType::string())) return false;
  return true;
}

void add_json_value(FunctionRegistry& r) {
  r.add_scalar("JSON_VALUE", "JSON_VALUE(STRING json, STRING path [, on_empty, default, on_error, default])",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (args.size() != 2 && args.size() != 6) return std::nullopt;
                 // The DEFAULT values (positions 3 and 5) may have any scalar type: the result
                 // is their Java text (String.valueOf: DEFAULT FALSE gives 'false').
                 for (std::size_t k = 0; k < args.size(); ++k) {
                   bool is_default = k == 3 || k == 5;
                   if (!is_default && !supports_implicit_cast(args[k], LogicalType::string())) return std::nullopt;
                   if (is_default && (args[k].is_nested() || args[k].is_binary_string())) return std::nullopt;
                 }
                 ResolvedFunction f = base("JSON_VALUE", args, LogicalType::string());
                 if (args.size() == 6) f.arg_types[3] = args[3], f.arg_types[5] = args[5];
                 f.prepare = [](std::span<const LogicalType>, std::span<const std::optional<Value>> c) {
                   auto s = std::make_shared<JsonCallState>();
                   s->path = constant_path(c);
                   auto all = {Behavior::kNull, Behavior::kError, Behavior::kDefault};
                   s->on_empty = parse_behavior("JSON_VALUE", constant_string("JSON_VALUE", c, 2, "ON EMPTY"), Behavior::kNull, all);
                   s->on_error = parse_behavior("JSON_VALUE", constant_string("JSON_VALUE", c, 4, "ON ERROR"), Behavior::kNull, all);
                   return std::shared_ptr<const void>(s);
                 };
                 f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                   JsonRows rows(*static_cast<const JsonCallState*>(ctx.state));
                   const JsonCallState& st = rows.state;
                   out.reserve(ctx.rows);
                   for (std::size_t i = 0; i < ctx.rows; ++i) {
                     if (!a[0].valid(i) || !a[1].valid(i)) {
                       out.append_null();
                       continue;
                     }
                     auto fallback = [&](Behavior b, std::size_t default_arg, const char* what) {
                       if (b == Behavior::kError && ctx.is_active(i))
                         throw SqlRuntimeError(fmt::format("JSON_VALUE: {} for path '{}' in '{}'", what, sv(a, 1, i), sv(a, 0, i)));
                       if (b != Behavior::kDefault || !a[default_arg].valid(i)) {
                         out.append_null();
                         return;
                       }
                       const Column& d = *a[default_arg].column;
                       std::size_t r = a[default_arg].row(i);
                       rows.buf.clear();
                       if (d.type().is_character_string()) rows.buf = d.string_at(r);
                       else if (d.type().is(TypeKind::kBoolean)) rows.buf = d.values<std::uint8_t>()[r] ? "true" : "false";
                       else append_cell_string(d, r, *ctx.session->time_zone, false, rows.buf);
                       out.append_string(rows.buf);
                     };
                     if (!rows.select(sv(a, 0, i), sv(a, 1, i))) {
                       fallback(st.on_error, 5, "invalid JSON or no match in strict mode");
                       continue;
                     }
                     if (rows.hits.empty() && !rows.list) {
                       fallback(st.on_empty, 3, "no value");
                       continue;
                     }
                     if (rows.list || !is_scalar(rows.hits[0])) {
                       fallback(st.on_error, 5, "the path selects a non-scalar value");
                       continue;
                     }
                     dom::element e = rows.hits[0];
                     if (e.type() == dom::element_type::NULL_VALUE) {
                       out.append_null();
                     } else if (e.type() == dom::element_type::STRING) {
                       out.append_string(std::string_view(e));
                     } else {
                       rows.buf.clear();
                       append_json(e, rows.buf);
                       out.append_string(rows.buf);
                     }
                   }
                 };
                 return f;
               });
}

void add_json_query(FunctionRegistry& r) {
  r.add_scalar("JSON_QUERY", "JSON_QUERY(STRING json, STRING path [, wrapper, on_empty, on_error])",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if ((args.size() != 2 && args.size() != 5) || !all_strings(args)) return std::nullopt;
                 ResolvedFunction f = base("JSON_QUERY", args, LogicalType::string());
                 f.prepare = [](std::span<const LogicalType>, std::span<const std::optional<Value>> c) {
                   auto s = std::make_shared<JsonCallState>();
                   s->path = constant_path(c);
                   if (auto w = constant_string("JSON_QUERY", c, 2, "wrapper")) {
                     std::string u = upper_ascii(*w);
                     if (u == "WITHOUT") s->wrapper = Wrapper::kWithout;
                     else if (u == "CONDITIONAL") s->wrapper = Wrapper::kConditional;
                     else if (u == "UNCONDITIONAL") s->wrapper = Wrapper::kUnconditional;
                     else throw SqlTypeError(fmt::format("JSON_QUERY: unsupported wrapper '{}'", *w));
                   }
                   auto all = {Behavior::kNull, Behavior::kError, Behavior::kEmptyArray, Behavior::kEmptyObject};
                   s->on_empty = parse_behavior("JSON_QUERY", constant_string("JSON_QUERY", c, 3, "ON EMPTY"), Behavior::kNull, all);
                   s->on_error = parse_behavior("JSON_QUERY", constant_string("JSON_QUERY", c, 4, "ON ERROR"), Behavior::kNull, all);
                   return std::shared_ptr<const void>(s);
                 };
                 f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                   JsonRows rows(*static_cast<const JsonCallState*>(ctx.state));
                   const JsonCallState& st = rows.state;
                   out.reserve(ctx.rows);
                   for (std::size_t i = 0; i < ctx.rows; ++i) {
                     if (!a[0].valid(i) || !a[1].valid(i)) {
                       out.append_null();
                       continue;
                     }
                     auto fallback = [&](Behavior b, const char* what) {
                       if (b == Behavior::kError && ctx.is_active(i))
                         throw SqlRuntimeError(fmt::format("JSON_QUERY: {} for path '{}' in '{}'", what, sv(a, 1, i), sv(a, 0, i)));
                       if (b == Behavior::kEmptyArray) out.append_string("[]");
                       else if (b == Behavior::kEmptyObject) out.append_string("{}");
                       else out.append_null();
                     };
                     if (!rows.select(sv(a, 0, i), sv(a, 1, i))) {
                       fallback(st.on_error, "invalid JSON or no match in strict mode");
                       continue;
                     }
                     if (rows.hits.empty() && !rows.list) {
                       fallback(st.on_empty, "no value");
                       continue;
                     }
                     // The value: the one selected, or the array of a wildcard's selections.
                     bool is_array = rows.list || rows.hits[0].type() == dom::element_type::ARRAY;
                     bool structured = is_array || rows.hits[0].type() == dom::element_type::OBJECT;
                     bool wrap = st.wrapper == Wrapper::kUnconditional || (st.wrapper == Wrapper::kConditional && !is_array);
                     if (!wrap && !structured) {
                       fallback(st.on_error, "the path selects a scalar (use WITH ARRAY WRAPPER)");
                       continue;
                     }
                     rows.buf.clear();
                     if (wrap) rows.buf += '[';
                     if (rows.list) rows.buf += '[';
                     for (std::size_t k = 0; k < rows.hits.size(); ++k) {
                       if (k) rows.buf += ',';
                       append_json(rows.hits[k], rows.buf);
                     }
                     if (rows.list) rows.buf += ']';
                     if (wrap) rows.buf += ']';
                     out.append_string(rows.buf);
                   }
                 };
                 return f;
               });
}

void add_json_exists(FunctionRegistry& r) {
  r.add_scalar("JSON_EXISTS", "JSON_EXISTS(STRING json, STRING path [, on_error])",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if ((args.size() != 2 && args.size() != 3) || !all_strings(args)) return std::nullopt;
                 ResolvedFunction f = base("JSON_EXISTS", args, LogicalType::boolean());
                 f.prepare = [](std::span<const LogicalType>, std::span<const std::optional<Value>> c) {
                   auto s = std::make_shared<JsonCallState>();
                   s->path = constant_path(c);
                   s->on_error = parse_behavior("JSON_EXISTS", constant_string("JSON_EXISTS", c, 2, "ON ERROR"), Behavior::kFalse,
                                                {Behavior::kFalse, Behavior::kTrue, Behavior::kUnknown, Behavior::kError});
                   return std::shared_ptr<const void>(s);
                 };
                 f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                   JsonRows rows(*static_cast<const JsonCallState*>(ctx.state));
                   auto* o = out.values<std::uint8_t>();
                   for (std::size_t i = 0; i < ctx.rows; ++i) {
                     bool valid = a[0].valid(i) && a[1].valid(i);
                     o[i] = 0;
                     if (valid) {
                       if (rows.select(sv(a, 0, i), sv(a, 1, i))) {
                         o[i] = !rows.hits.empty();
                       } else {
                         Behavior b = rows.state.on_error;
                         if (b == Behavior::kError && ctx.is_active(i))
                           throw SqlRuntimeError(fmt::format("JSON_EXISTS: invalid JSON or no match in strict mode for path '{}' in '{}'",
                                                             sv(a, 1, i), sv(a, 0, i)));
                         o[i] = b == Behavior::kTrue;
                         valid = b != Behavior::kUnknown;
                       }
                     }
                     out.set_valid(i, valid);
                   }
                 };
                 return f;
               });
}

// IS_JSON(x [, kind]): FALSE for NULL (Flink's IS JSON never returns NULL).
void add_is_json(FunctionRegistry& r) {
  r.add_scalar("IS_JSON", "IS_JSON(STRING [, STRING kind])", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.empty() || args.size() > 2 || !all_strings(args)) return std::nullopt;
    ResolvedFunction f = base("IS_JSON", args, LogicalType::boolean().not_null());
    struct Kind {
      char kind;  // V S A O
    };
    f.prepare = [](std::span<const LogicalType>, std::span<const std::optional<Value>> c) {
      char k = 'V';
      if (auto s = constant_string("IS_JSON", c, 1, "kind")) {
        std::string u = upper_ascii(*s);
        if (u == "VALUE") k = 'V';
        else if (u == "SCALAR") k = 'S';
        else if (u == "ARRAY") k = 'A';
        else if (u == "OBJECT") k = 'O';
        else throw SqlTypeError(fmt::format("IS_JSON: unknown kind '{}' (VALUE, SCALAR, ARRAY or OBJECT)", *s));
      }
      return std::shared_ptr<const void>(std::make_shared<Kind>(Kind{k}));
    };
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      char k = static_cast<const Kind*>(ctx.state)->kind;
      dom::parser parser;
      auto* o = out.values<std::uint8_t>();
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        o[i] = 0;
        if (a[0].valid(i)) {
          std::string_view s = sv(a, 0, i);
          dom::element e;
          if (!s.empty() && parser.parse(s.data(), s.size(), true).get(e) == simdjson::SUCCESS) {
            auto t = e.type();
            o[i] = k == 'V' || (k == 'A' && t == dom::element_type::ARRAY) || (k == 'O' && t == dom::element_type::OBJECT) ||
                   (k == 'S' && is_scalar(e));
          }
        }
      }
      out.set_all_valid();
    };
    return f;
  });
}

}  // namespace

void register_json_functions(FunctionRegistry& r) {
  add_json_value(r);
  add_json_query(r);
  add_json_exists(r);
  add_is_json(r);
  register_json_constructors(r);
}

}  // namespace clink::sql
