#include "clink/runtime/op_params.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"

namespace clink {
namespace {
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}
}  // namespace

OpParams::OpParams(const OperatorSpecContext& ctx, std::string factory, std::vector<std::string> known,
                   bool rest_are_options)
    : ctx_(ctx),
      factory_(std::move(factory)),
      where_(fmt::format("op '{}' ({})", ctx.id, factory_)),
      known_(std::move(known)),
      params_(ctx.params->is_null() ? nlohmann::json::object() : *ctx.params) {
  if (!params_->is_object()) fail("params must be a JSON object");
  if (rest_are_options) return;
  for (const auto& [name, value] : params_->items())
    if (!is_known(name))
      fail(fmt::format("unknown param '{}' (known: {})", name, known_.empty() ? "none" : join(known_)));
}

bool OpParams::has(const std::string& name) const { return params_->contains(name) && !params_->at(name).is_null(); }

bool OpParams::is_known(const std::string& name) const {
  return std::find(known_.begin(), known_.end(), name) != known_.end();
}

void OpParams::fail(const std::string& message) const { throw ClinkError(where_ + ": " + message); }

const nlohmann::json& OpParams::require(const std::string& name) const {
  if (!params_->contains(name)) fail(fmt::format("missing required param '{}'", name));
  return params_->at(name);
}

std::int64_t OpParams::require_int(const std::string& name, std::int64_t min, std::int64_t max) const {
  const auto& v = require(name);
  if (!v.is_number_integer()) fail(fmt::format("param '{}' must be an integer, got {}", name, v.dump()));
  if (v.is_number_unsigned() && (max < 0 || v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)))
    fail(fmt::format("param '{}' must be at most {}, got {}", name, max, v.dump()));
  auto x = v.get<std::int64_t>();
  if (x < min) fail(fmt::format("param '{}' must be at least {}, got {}", name, min, x));
  if (x > max) fail(fmt::format("param '{}' must be at most {}, got {}", name, max, x));
  return x;
}

std::int64_t OpParams::get_int(const std::string& name, std::int64_t fallback, std::int64_t min,
                               std::int64_t max) const {
  return has(name) ? require_int(name, min, max) : fallback;
}

bool OpParams::get_bool(const std::string& name, bool fallback) const {
  if (!has(name)) return fallback;
  const auto& v = params_->at(name);
  if (!v.is_boolean()) fail(fmt::format("param '{}' must be true or false, got {}", name, v.dump()));
  return v.get<bool>();
}

std::string OpParams::get_string(const std::string& name, const std::string& fallback) const {
  if (!has(name)) return fallback;
  const auto& v = params_->at(name);
  if (!v.is_string()) fail(fmt::format("param '{}' must be a string, got {}", name, v.dump()));
  return v.get<std::string>();
}

std::string OpParams::get_choice(const std::string& name, const std::string& fallback,
                                 const std::vector<std::string>& choices) const {
  std::string s = get_string(name, fallback);
  if (!has(name) || choices.empty()) return s;
  for (const auto& c : choices)
    if (s == c) return s;
  fail(fmt::format("param '{}' must be one of {}, got '{}'", name, join(choices), s));
}

const std::string& OpParams::input_type(std::size_t i, const std::vector<std::string>& allowed) const {
  if (i >= ctx_.input_types.size()) fail(fmt::format("needs input {}", i));
  const auto& t = ctx_.input_types[i];
  for (const auto& a : allowed)
    if (t == a) return t;
  fail(fmt::format("input record type must be {}, got '{}'", allowed.size() == 1 ? allowed[0] : "one of " + join(allowed), t));
}

}  // namespace clink
