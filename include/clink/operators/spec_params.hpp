#pragma once
// Reading the params of a spec operator. Every error names the operator (id and
// factory) and the param, and unknown params are rejected, so a typo in a spec is an
// error rather than a silently ignored setting.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/runtime/operator_registry.hpp"

namespace clink {

class SpecParams {
 public:
  SpecParams(const OperatorSpecContext& ctx, std::string factory, std::initializer_list<const char*> known);

  bool has(const std::string& name) const { return params_.contains(name); }
  std::int64_t get_int(const std::string& name, std::int64_t default_value,
                       std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  // A required integer.
  std::int64_t require_int(const std::string& name, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                           std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  // A string that must be one of `choices` (when not empty).
  std::string get_choice(const std::string& name, const std::string& default_value,
                         const std::vector<std::string>& choices) const;
  // The record type of input `i`; an error naming the op if it is not one of `allowed`.
  const std::string& input_type(std::size_t i, const std::vector<std::string>& allowed) const;

  [[noreturn]] void fail(const std::string& message) const;

 private:
  std::int64_t int_value(const std::string& name, std::int64_t min, std::int64_t max) const;
  const OperatorSpecContext& ctx_;
  std::string factory_;
  nlohmann::json params_;
};

}  // namespace clink
