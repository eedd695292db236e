#pragma once
// Reading the params of a spec operator: the one reader every factory uses (plain
// operators directly; SQL operators and SQL connectors through the subclasses that add
// schemas, columns and table options). Every error names the op and its factory
// ("op 'id' (factory): ...") and the param, and unknown params are rejected, so a typo in
// a spec is an error rather than a silently ignored setting.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "clink/core/json_value.hpp"
#include "clink/runtime/operator_registry.hpp"

namespace clink {

class OpParams {
 public:
  OpParams(const OperatorSpecContext& ctx, std::string factory, std::vector<std::string> known)
      : OpParams(ctx, std::move(factory), std::move(known), false) {}

  const std::string& id() const { return ctx_.id; }
  const std::string& factory() const { return factory_; }
  // "op 'id' (factory)": how errors, also those found later at run time, name the op.
  const std::string& where() const { return where_; }
  const nlohmann::json& params() const { return params_; }

  // Present and not null.
  bool has(const std::string& name) const;
  const nlohmann::json& require(const std::string& name) const;
  std::int64_t get_int(const std::string& name, std::int64_t fallback,
                       std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  std::int64_t require_int(const std::string& name, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                           std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  bool get_bool(const std::string& name, bool fallback) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  // A string that must be one of `choices` (when not empty).
  std::string get_choice(const std::string& name, const std::string& fallback,
                         const std::vector<std::string>& choices) const;
  // The record type of input `i`; an error naming the op if it is not one of `allowed`.
  const std::string& input_type(std::size_t i, const std::vector<std::string>& allowed) const;

  [[noreturn]] void fail(const std::string& message) const;

 protected:
  // `rest_are_options`: keys outside `known` are not errors but left to the subclass
  // (a SQL connector's table options).
  OpParams(const OperatorSpecContext& ctx, std::string factory, std::vector<std::string> known, bool rest_are_options);
  bool is_known(const std::string& name) const;

  const OperatorSpecContext& ctx_;
  std::string factory_;
  std::string where_;
  std::vector<std::string> known_;
  JsonValue params_;  // a JSON object
};

}  // namespace clink
