// The C++ implementations behind class-style CREATE FUNCTION (see function_classes.hpp).
#include "clink/sql/function/function_classes.hpp"

#include <algorithm>

#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {
namespace {

constexpr std::string_view kNexmarkCountChar = "com.github.nexmark.flink.udf.CountChar";

// Nexmark's CountChar.eval(StringData s, StringData character): the number of bytes of `s`
// (UTF-8) equal to the first byte of `character`; a NULL `s` counts 0, and the result is a
// Java long, so BIGINT NOT NULL. Java fails on a NULL or empty `character`
// (NullPointerException / ArrayIndexOutOfBoundsException); clink fails the row with a
// message instead.
void register_nexmark_count_char(FunctionRegistry& r) {
  const std::string name(kNexmarkCountChar);
  r.add_scalar(name, name + "(STRING, STRING)", [name](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    const LogicalType str = LogicalType::string();
    if (args.size() != 2 || !supports_implicit_cast(args[0], str) || !supports_implicit_cast(args[1], str))
      return std::nullopt;
    ResolvedFunction f;
    f.name = name;
    f.arg_types = {str.with_nullable(args[0].nullable()), str.with_nullable(args[1].nullable())};
    f.return_type = LogicalType::bigint().not_null();
    f.null_policy = NullPolicy::kCustom;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      auto* o = out.values<std::int64_t>();
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        o[i] = 0;
        if (!ctx.is_active(i)) continue;
        if (!a[1].valid(i) || a[1].column->string_at(a[1].row(i)).empty())
          throw SqlRuntimeError(std::string(kNexmarkCountChar) + ": the character argument is " +
                                (a[1].valid(i) ? "empty" : "NULL"));
        if (!a[0].valid(i)) continue;
        const char c = a[1].column->string_at(a[1].row(i))[0];
        std::string_view s = a[0].column->string_at(a[0].row(i));
        o[i] = static_cast<std::int64_t>(std::count(s.begin(), s.end(), c));
      }
      out.set_all_valid();
    };
    return f;
  });
}

}  // namespace

const std::vector<std::string>& function_class_names() {
  static const std::vector<std::string> kNames = {std::string(kNexmarkCountChar)};
  return kNames;
}

bool is_known_function_class(std::string_view class_name) {
  const auto& names = function_class_names();
  return std::find(names.begin(), names.end(), class_name) != names.end();
}

void register_class_functions(FunctionRegistry& r) { register_nexmark_count_char(r); }

}  // namespace clink::sql
