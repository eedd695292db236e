#include "clink/sql/spec/expr_json.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/sql/function/cast.hpp"

namespace clink::sql {

using nlohmann::json;

namespace {

bool is_text_literal(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kDecimal:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz: return true;
    default: return false;
  }
}

const char kHex[] = "0123456789abcdef";

// The type of item i of a nested literal's ValueList (MAP items alternate key, value).
const LogicalType& nested_item_type(const LogicalType& t, std::size_t i) {
  if (t.is(TypeKind::kArray)) return t.element_type();
  if (t.is(TypeKind::kMap)) return i % 2 == 0 ? t.key_type() : t.value_type();
  return t.fields().at(i).type;
}

json literal_to_json(const Value& v, const LogicalType& t) {
  if (v.is_null()) return nullptr;
  if (t.is_nested()) {  // folded ARRAY[...] / MAP[...] / ROW(...) constants: a JSON array of items
    json items = json::array();
    const auto& list = v.as_list().items;
    for (std::size_t i = 0; i < list.size(); ++i) items.push_back(literal_to_json(list[i], nested_item_type(t, i)));
    return items;
  }
  if (is_text_literal(t)) {
    Column c = Column::constant(t, v, 1);
    std::string s;
    append_cell_string(c, 0, *TimeZone::utc(), false, s);
    return s;
  }
  if (t.is_binary_string()) {
    std::string hex;
    for (unsigned char ch : v.as_string()) {
      hex += kHex[ch >> 4];
      hex += kHex[ch & 15];
    }
    return hex;
  }
  if (t.is(TypeKind::kBoolean)) return v.as_bool();
  if (t.is_approx_numeric()) {
    double d = v.as_double();
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    return d;
  }
  if (t.is_character_string()) return v.as_string();
  return v.as_int();  // integers, intervals
}

struct Loader {
  const Schema& input;
  const FunctionRegistry& registry;

  [[noreturn]] static void fail(const std::string& path, const std::string& msg) {
    throw ClinkError("expression at " + (path.empty() ? std::string("/") : path) + ": " + msg);
  }

  LogicalType type_of(const json& j, const std::string& path) const {
    if (!j.contains("type") || !j.at("type").is_string()) fail(path, "needs a string 'type'");
    try {
      return parse_logical_type(j.at("type").get<std::string>());
    } catch (const std::exception& e) {
      fail(path + "/type", e.what());
    }
  }

  Value literal(const json& v, const LogicalType& t, const std::string& path) const {
    if (v.is_null()) return Value();
    try {
      if (is_text_literal(t)) {
        if (!v.is_string()) fail(path, "a " + t.to_string() + " literal is written as text, got " + v.dump());
        return cast_value(Value(v.get<std::string>()), LogicalType::string(), t, SessionContext{});
      }
      if (t.is_binary_string()) {
        std::string hex = v.get<std::string>(), bytes;
        if (hex.size() % 2 != 0) fail(path, "odd-length hex literal '" + hex + "'");
        auto nib = [&](char c) -> int {
          if (c >= '0' && c <= '9') return c - '0';
          if (c >= 'a' && c <= 'f') return c - 'a' + 10;
          if (c >= 'A' && c <= 'F') return c - 'A' + 10;
          fail(path, "bad hex literal '" + hex + "'");
        };
        for (std::size_t i = 0; i < hex.size(); i += 2) bytes += static_cast<char>(nib(hex[i]) * 16 + nib(hex[i + 1]));
        return Value(bytes);
      }
      if (t.is(TypeKind::kBoolean)) return Value(v.get<bool>());
      if (t.is_approx_numeric()) {
        if (v.is_string()) {
          std::string s = v.get<std::string>();
          if (s == "NaN") return Value(std::nan(""));
          if (s == "Infinity") return Value(HUGE_VAL);
          if (s == "-Infinity") return Value(-HUGE_VAL);
          fail(path, "bad floating-point literal '" + s + "'");
        }
        return Value(v.get<double>());
      }
      if (t.is_character_string()) return Value(v.get<std::string>());
      if (t.is_nested()) {
        if (!v.is_array()) fail(path, "a " + t.to_string() + " literal is written as an array, got " + v.dump());
        if (t.is(TypeKind::kRow) && v.size() != t.fields().size())
          fail(path, "a " + t.to_string() + " literal needs " + std::to_string(t.fields().size()) + " items");
        if (t.is(TypeKind::kMap) && v.size() % 2 != 0) fail(path, "a MAP literal needs key, value pairs");
        ValueList items;
        for (std::size_t i = 0; i < v.size(); ++i)
          items.items.push_back(literal(v[i], nested_item_type(t, i), path + "/" + std::to_string(i)));
        return Value(std::move(items));
      }
      return Value(v.get<std::int64_t>());
    } catch (const json::exception&) {
      fail(path, "literal " + v.dump() + " does not fit type " + t.to_string());
    }
  }

  std::vector<ExprPtr> list(const json& a, const std::string& path) const {
    if (!a.is_array()) fail(path, "expected an array, got " + a.dump());
    std::vector<ExprPtr> out;
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(load(a[i], path + "/" + std::to_string(i)));
    return out;
  }

  ExprPtr build(const json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "expected an object, got " + j.dump());
    if (j.contains("col")) {
      const json& c = j.at("col");
      if (!c.is_number_integer() || c.get<std::int64_t>() < 0 || c.get<std::size_t>() >= input.size())
        fail(path, "column " + c.dump() + " is not in the input schema " + input.to_string());
      auto i = c.get<std::size_t>();
      return expr::column(i, input.type(i), input.name(i));
    }
    if (j.contains("lit")) {
      LogicalType t = type_of(j, path);
      return expr::literal(literal(j.at("lit"), t, path + "/lit"), t);
    }
    if (j.contains("call")) {
      if (!j.at("call").is_string()) fail(path, "'call' must be a function name");
      return expr::call(registry, j.at("call").get<std::string>(), list(j.value("args", json::array()), path + "/args"));
    }
    if (j.contains("cast")) {
      LogicalType t = type_of(j, path);
      ExprPtr e = load(j.at("cast"), path + "/cast");
      return j.value("try", false) ? expr::try_cast(e, t) : expr::cast(e, t);
    }
    if (j.contains("case")) {
      auto items = list(j.at("case"), path + "/case");
      if (items.size() < 2) fail(path, "'case' needs at least one WHEN / THEN pair");
      std::vector<std::pair<ExprPtr, ExprPtr>> branches;
      for (std::size_t i = 0; i + 1 < items.size(); i += 2) branches.emplace_back(items[i], items[i + 1]);
      return expr::case_when(std::move(branches), items.size() % 2 == 1 ? items.back() : nullptr);
    }
    if (j.contains("and")) return expr::and_(list(j.at("and"), path + "/and"));
    if (j.contains("or")) return expr::or_(list(j.at("or"), path + "/or"));
    if (j.contains("coalesce")) return expr::coalesce(list(j.at("coalesce"), path + "/coalesce"));
    if (j.contains("in")) {
      auto items = list(j.at("in"), path + "/in");
      if (items.size() < 2) fail(path, "'in' needs a value and at least one item");
      ExprPtr v = items.front();
      items.erase(items.begin());
      return expr::in_list(v, std::move(items), j.value("negated", false));
    }
    fail(path, "unknown expression " + j.dump() + " (expected col, lit, call, cast, case, and, or, coalesce or in)");
  }

  ExprPtr load(const json& j, const std::string& path) const {
    ExprPtr e;
    try {
      e = build(j, path);
    } catch (const ClinkError& err) {
      std::string m = err.what();
      if (m.rfind("expression at ", 0) == 0) throw;
      fail(path, m);
    }
    if (j.contains("type") && !j.contains("lit") && !j.contains("cast")) {
      LogicalType declared = type_of(j, path);
      if (!(declared == e->type))
        fail(path, "declared type " + declared.to_string() + " differs from the derived type " + e->type.to_string() +
                       " of " + e->to_string());
    }
    return e;
  }
};

}  // namespace

json expr_to_json(const Expr& e) {
  json j;
  auto args = [&] {
    json a = json::array();
    for (const auto& x : e.args) a.push_back(expr_to_json(*x));
    return a;
  };
  switch (e.kind) {
    case ExprKind::kColumnRef: j["col"] = e.column_index; break;
    case ExprKind::kLiteral: j["lit"] = literal_to_json(e.literal, e.type); break;
    case ExprKind::kCall:
      j["call"] = e.function ? e.function->name : e.name;
      j["args"] = args();
      break;
    case ExprKind::kCast:
      j["cast"] = expr_to_json(*e.args.at(0));
      j["try"] = e.try_cast;
      break;
    case ExprKind::kCase: j["case"] = args(); break;
    case ExprKind::kAnd: j["and"] = args(); break;
    case ExprKind::kOr: j["or"] = args(); break;
    case ExprKind::kCoalesce: j["coalesce"] = args(); break;
    case ExprKind::kInList:
      j["in"] = args();
      j["negated"] = e.negated;
      break;
  }
  j["type"] = e.type.to_string();
  return j;
}

ExprPtr expr_from_json(const json& j, const Schema& input, const FunctionRegistry& registry) {
  return Loader{input, registry}.load(j, "");
}

}  // namespace clink::sql
