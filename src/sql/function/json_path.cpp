#include "json_path.hpp"

#include <fmt/format.h>

#include "clink/sql/common/types.hpp"
#include "clink/sql/common/value_format.hpp"

namespace clink::sql {

namespace dom = simdjson::dom;

JsonPath::JsonPath(std::string_view text) {
  std::string_view p = text;
  auto fail = [&](std::string_view why) {
    throw SqlTypeError(fmt::format("invalid JSON path '{}' at position {}: {}", text, text.size() - p.size() + 1, why));
  };
  auto skip_ws = [&] {
    while (!p.empty() && p.front() == ' ') p.remove_prefix(1);
  };
  skip_ws();
  if (p.substr(0, 4) == "lax " || p.substr(0, 4) == "LAX ") p.remove_prefix(4);
  else if (p.substr(0, 7) == "strict " || p.substr(0, 7) == "STRICT ") strict_ = true, p.remove_prefix(7);
  skip_ws();
  if (p.empty() || p.front() != '$') fail("expected '$'");
  p.remove_prefix(1);
  while (!p.empty()) {
    if (p.front() == '.') {
      p.remove_prefix(1);
      if (!p.empty() && p.front() == '[') continue;  // $.['a b'] / $.["a.b"] (Jayway's spelling)
      if (!p.empty() && p.front() == '*') {
        steps_.push_back({Step::kAnyMember, {}, 0});
        definite_ = false;
        p.remove_prefix(1);
      } else if (!p.empty() && p.front() == '"') {
        std::size_t end = p.find('"', 1);
        if (end == std::string_view::npos) fail("unterminated quoted member name");
        steps_.push_back({Step::kMember, std::string(p.substr(1, end - 1)), 0});
        p.remove_prefix(end + 1);
      } else {
        std::size_t n = 0;
        while (n < p.size() && p[n] != '.' && p[n] != '[' && p[n] != ' ') ++n;
        if (n == 0) fail("expected a member name");
        steps_.push_back({Step::kMember, std::string(p.substr(0, n)), 0});
        p.remove_prefix(n);
      }
    } else if (p.front() == '[') {
      std::size_t end = p.find(']');
      if (end == std::string_view::npos) fail("unterminated '['");
      std::string_view in = p.substr(1, end - 1);
      if (in == "*") {
        steps_.push_back({Step::kAnyIndex, {}, 0});
        definite_ = false;
      } else if (in.size() >= 2 && (in.front() == '\'' || in.front() == '"') && in.back() == in.front()) {
        steps_.push_back({Step::kMember, std::string(in.substr(1, in.size() - 2)), 0});
      } else {
        std::size_t idx = 0;
        if (in.empty()) fail("empty subscript");
        for (char c : in) {
          if (c < '0' || c > '9') fail("expected an array index, '*' or a quoted member name");
          idx = idx * 10 + static_cast<std::size_t>(c - '0');
        }
        steps_.push_back({Step::kIndex, {}, idx});
      }
      p.remove_prefix(end + 1);
    } else if (p.front() == ' ') {
      skip_ws();
      if (!p.empty()) fail("unexpected text");
    } else {
      fail("expected '.' or '['");
    }
  }
}

bool JsonPath::evaluate(dom::element root, std::vector<dom::element>& out) const { return walk(root, 0, out); }

bool JsonPath::walk(dom::element e, std::size_t k, std::vector<dom::element>& out) const {
  if (k == steps_.size()) {
    out.push_back(e);
    return true;
  }
  const Step& s = steps_[k];
  switch (s.kind) {
    case Step::kMember: {
      if (e.type() != dom::element_type::OBJECT) {
        // lax: a member of an array applies to each element (SQL/JSON's automatic unwrapping)
        if (!strict_ && e.type() == dom::element_type::ARRAY) {
          for (dom::element x : dom::array(e))
            if (!walk(x, k, out)) return false;
          return true;
        }
        return !strict_;
      }
      dom::element child;
      if (dom::object(e).at_key(s.name).get(child) != simdjson::SUCCESS) return !strict_;
      return walk(child, k + 1, out);
    }
    case Step::kIndex: {
      if (e.type() != dom::element_type::ARRAY) {
        if (!strict_ && s.index == 0) return walk(e, k + 1, out);  // lax: a scalar is a one-element array
        return !strict_;
      }
      dom::element child;
      if (dom::array(e).at(s.index).get(child) != simdjson::SUCCESS) return !strict_;
      return walk(child, k + 1, out);
    }
    case Step::kAnyMember: {
      if (e.type() != dom::element_type::OBJECT) return !strict_;
      for (dom::key_value_pair kv : dom::object(e))
        if (!walk(kv.value, k + 1, out)) return false;
      return true;
    }
    case Step::kAnyIndex: {
      if (e.type() != dom::element_type::ARRAY) {
        if (!strict_) return walk(e, k + 1, out);
        return false;
      }
      for (dom::element x : dom::array(e))
        if (!walk(x, k + 1, out)) return false;
      return true;
    }
  }
  return true;
}

void append_json_string(std::string_view s, std::string& out) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) fmt::format_to(std::back_inserter(out), "\\u{:04X}", static_cast<int>(c));
        else out += c;
    }
  }
  out += '"';
}

void append_json(dom::element e, std::string& out) {
  switch (e.type()) {
    case dom::element_type::OBJECT: {
      out += '{';
      bool first = true;
      for (dom::key_value_pair kv : dom::object(e)) {
        if (!first) out += ',';
        first = false;
        append_json_string(kv.key, out);
        out += ':';
        append_json(kv.value, out);
      }
      out += '}';
      break;
    }
    case dom::element_type::ARRAY: {
      out += '[';
      bool first = true;
      for (dom::element x : dom::array(e)) {
        if (!first) out += ',';
        first = false;
        append_json(x, out);
      }
      out += ']';
      break;
    }
    case dom::element_type::STRING: append_json_string(std::string_view(e), out); break;
    case dom::element_type::INT64: fmt::format_to(std::back_inserter(out), "{}", int64_t(e)); break;
    case dom::element_type::UINT64: fmt::format_to(std::back_inserter(out), "{}", uint64_t(e)); break;
    case dom::element_type::DOUBLE: append_java_double(double(e), out); break;  // Jackson: Double.toString
    case dom::element_type::BOOL: out += bool(e) ? "true" : "false"; break;
    case dom::element_type::NULL_VALUE: out += "null"; break;
  }
}

}  // namespace clink::sql
