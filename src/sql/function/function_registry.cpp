#include "clink/sql/function/function_registry.hpp"

#include "clink/sql/function/function_classes.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "clink/sql/function/aggregate.hpp"

namespace clink::sql {

std::string upper_ascii(std::string_view s) {
  std::string u(s);
  for (auto& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

namespace {

std::string type_list(std::span<const LogicalType> args) {
  std::string s;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    s += args[i].to_string();
  }
  return s;
}

}  // namespace

FunctionRegistry FunctionRegistry::with_builtins() {
  FunctionRegistry r;
  register_arithmetic_functions(r);
  register_interval_arithmetic(r);
  register_comparison_functions(r);
  register_math_functions(r);
  register_math_more_functions(r);
  register_string_functions(r);
  register_string_more_functions(r);
  register_string_extra_functions(r);
  register_regex_functions(r);
  register_aggregate_functions(r);
  register_temporal_functions(r);
  register_temporal_format_functions(r);
  register_hash_functions(r);
  register_json_functions(r);
  register_row_functions(r);
  register_collection_functions(r);
  register_string_flink_functions(r);
  register_url_codec_functions(r);
  register_printf_function(r);
  register_regex_more_functions(r);
  register_array_functions(r);
  register_map_functions(r);
  register_class_functions(r);
  return r;
}

const FunctionRegistry& FunctionRegistry::builtins() {
  static const FunctionRegistry kBuiltins = with_builtins();
  return kBuiltins;
}

FunctionRegistry& FunctionRegistry::process() {
  static FunctionRegistry registry = with_builtins();
  return registry;
}

void FunctionRegistry::add_scalar(std::string_view name, std::string signature, OverloadResolver resolver) {
  scalars_[upper_ascii(name)].overloads.emplace_back(std::move(signature), std::move(resolver));
}

void FunctionRegistry::add_fixed(std::string_view name, std::vector<LogicalType> params, LogicalType result,
                                 ScalarKernel kernel, NullPolicy policy, bool accepts_scalars, PrepareFn prepare) {
  std::string upper = upper_ascii(name);
  std::string signature = fmt::format("{}({})", upper, type_list(params));
  add_scalar(name, signature,
             [upper, params, result, kernel = std::move(kernel), policy, accepts_scalars,
              prepare = std::move(prepare)](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
               if (args.size() != params.size()) return std::nullopt;
               bool nullable = false;
               for (std::size_t i = 0; i < args.size(); ++i) {
                 if (!supports_implicit_cast(args[i], params[i])) return std::nullopt;
                 nullable = nullable || args[i].nullable();
               }
               ResolvedFunction f;
               f.name = upper;
               for (std::size_t i = 0; i < args.size(); ++i) f.arg_types.push_back(params[i].with_nullable(args[i].nullable()));
               f.return_type = policy == NullPolicy::kPropagate ? result.with_nullable(nullable || result.nullable()) : result;
               f.kernel = kernel;
               f.null_policy = policy;
               f.accepts_scalars = accepts_scalars;
               f.prepare = prepare;
               return f;
             });
}

void FunctionRegistry::add_aggregate(std::string_view name, std::string signature, AggregateFactory factory) {
  aggregates_[upper_ascii(name)].overloads.emplace_back(std::move(signature), std::move(factory));
}

bool FunctionRegistry::has_scalar(std::string_view name) const { return scalars_.count(upper_ascii(name)) != 0; }
bool FunctionRegistry::has_aggregate(std::string_view name) const { return aggregates_.count(upper_ascii(name)) != 0; }

ResolvedFunction FunctionRegistry::resolve(std::string_view name, std::span<const LogicalType> args) const {
  std::string upper = upper_ascii(name);
  auto it = scalars_.find(upper);
  if (it == scalars_.end()) {
    if (aggregates_.count(upper) != 0)
      throw SqlTypeError(fmt::format("aggregate function {} is not allowed here", upper));
    throw SqlTypeError(fmt::format("No such function: {}", upper));
  }
  std::optional<ResolvedFunction> best;
  std::size_t best_cost = 0;
  for (const auto& [sig, resolver] : it->second.overloads) {
    auto f = resolver(args);
    if (!f) continue;
    std::size_t cost = 0;
    for (std::size_t i = 0; i < args.size() && i < f->arg_types.size(); ++i)
      if (!args[i].same_ignoring_nullability(f->arg_types[i])) ++cost;
    if (!best || cost < best_cost) {
      best = std::move(f);
      best_cost = cost;
      if (cost == 0) break;
    }
  }
  if (!best) {
    std::string candidates;
    for (const auto& [sig, resolver] : it->second.overloads) candidates += "\n  " + sig;
    throw SqlTypeError(fmt::format("Cannot apply {} to arguments of type {}({}). Supported signatures:{}", upper, upper,
                                   type_list(args), candidates));
  }
  return *std::move(best);
}

std::unique_ptr<AggregateFunction> FunctionRegistry::make_aggregate(std::string_view name,
                                                                    std::span<const LogicalType> args,
                                                                    const AggregateOptions& options) const {
  std::string upper = upper_ascii(name);
  auto it = aggregates_.find(upper);
  if (it == aggregates_.end()) throw SqlTypeError(fmt::format("No such aggregate function: {}", upper));
  for (const auto& [sig, factory] : it->second.overloads)
    if (auto a = factory(args, options)) return a;
  std::string candidates;
  for (const auto& [sig, factory] : it->second.overloads) candidates += "\n  " + sig;
  throw SqlTypeError(fmt::format("Cannot apply {} to arguments of type {}({}){}. Supported signatures:{}", upper, upper,
                                 type_list(args), options.distinct ? " with DISTINCT" : "", candidates));
}

std::vector<std::string> FunctionRegistry::scalar_names() const {
  std::vector<std::string> v;
  for (const auto& [n, e] : scalars_) v.push_back(n);
  return v;
}
std::vector<std::string> FunctionRegistry::aggregate_names() const {
  std::vector<std::string> v;
  for (const auto& [n, e] : aggregates_) v.push_back(n);
  return v;
}

}  // namespace clink::sql
