#include "clink/operators/spec_params.hpp"

#include <fmt/format.h>

#include "clink/core/error.hpp"

namespace clink {
namespace {
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}
}  // namespace

SpecParams::SpecParams(const OperatorSpecContext& ctx, std::string factory, std::initializer_list<const char*> known)
    : ctx_(ctx), factory_(std::move(factory)), params_(ctx.params.is_null() ? nlohmann::json::object() : ctx.params) {
  if (!params_.is_object()) fail("params must be a JSON object");
  for (const auto& [name, value] : params_.items()) {
    bool ok = false;
    std::string known_list;
    for (const char* k : known) {
      ok = ok || name == k;
      known_list += (known_list.empty() ? "" : ", ") + std::string(k);
    }
    if (!ok)
      fail(fmt::format("unknown param '{}' (known: {})", name, known_list.empty() ? "none" : known_list));
  }
}

void SpecParams::fail(const std::string& message) const {
  throw ClinkError(fmt::format("op '{}' ({}): {}", ctx_.id, factory_, message));
}

std::int64_t SpecParams::int_value(const std::string& name, std::int64_t min, std::int64_t max) const {
  const auto& v = params_.at(name);
  if (!v.is_number_integer()) fail(fmt::format("param '{}' must be an integer, got {}", name, v.dump()));
  if (v.is_number_unsigned() && (max < 0 || v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)))
    fail(fmt::format("param '{}' must be at most {}, got {}", name, max, v.dump()));
  auto x = v.get<std::int64_t>();
  if (x < min) fail(fmt::format("param '{}' must be at least {}, got {}", name, min, x));
  if (x > max) fail(fmt::format("param '{}' must be at most {}, got {}", name, max, x));
  return x;
}

std::int64_t SpecParams::get_int(const std::string& name, std::int64_t default_value, std::int64_t min,
                                 std::int64_t max) const {
  return has(name) ? int_value(name, min, max) : default_value;
}

std::int64_t SpecParams::require_int(const std::string& name, std::int64_t min, std::int64_t max) const {
  if (!has(name)) fail(fmt::format("missing required param '{}'", name));
  return int_value(name, min, max);
}

std::string SpecParams::get_choice(const std::string& name, const std::string& default_value,
                                   const std::vector<std::string>& choices) const {
  if (!has(name)) return default_value;
  const auto& v = params_.at(name);
  if (!v.is_string()) fail(fmt::format("param '{}' must be a string, got {}", name, v.dump()));
  auto s = v.get<std::string>();
  if (choices.empty()) return s;
  for (const auto& c : choices)
    if (s == c) return s;
  fail(fmt::format("param '{}' must be one of {}, got '{}'", name, join(choices), s));
}

const std::string& SpecParams::input_type(std::size_t i, const std::vector<std::string>& allowed) const {
  if (i >= ctx_.input_types.size()) fail(fmt::format("needs input {}", i));
  const auto& t = ctx_.input_types[i];
  for (const auto& a : allowed)
    if (t == a) return t;
  fail(fmt::format("input record type must be {}, got '{}'", allowed.size() == 1 ? allowed[0] : "one of " + join(allowed), t));
}

}  // namespace clink
