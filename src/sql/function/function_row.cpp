// ROW field access: FIELD(row, 'name') / FIELD(row, index) extracts one field of a ROW
// column (the binder's `col.field`, `t.col.field` and `(expr).field`). The field is a
// constant, so the result type depends on it: expr::call asks row_field_type() for it
// (the registry's resolvers see only argument types). The kernel copies the child
// column's rows and ANDs in the parent's validity: a NULL row has NULL fields.
#include <cstring>

#include <fmt/format.h>

#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

namespace {

struct FieldState {
  std::size_t index;
};

}  // namespace

std::size_t row_field_index(const LogicalType& row, const Value& field) {
  if (!row.is(TypeKind::kRow)) throw SqlTypeError(fmt::format("field access needs a ROW, got {}", row.to_string()));
  const auto& fields = row.fields();
  if (field.is_null()) throw SqlTypeError("FIELD: the field name must not be NULL");
  if (std::holds_alternative<std::string>(field.v)) {
    const std::string& name = field.as_string();
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i].name == name) return i;
    // Unquoted identifiers: a unique case-insensitive match, as for columns.
    std::size_t hits = 0, hit = 0;
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (upper_ascii(fields[i].name) == upper_ascii(name)) ++hits, hit = i;
    if (hits == 1) return hit;
    throw SqlTypeError(fmt::format("{} field '{}' in {}", hits == 0 ? "no" : "ambiguous", name, row.to_string()));
  }
  std::int64_t i = field.as_int();  // 1-based, as Flink's FIELD access by index
  if (i < 1 || static_cast<std::size_t>(i) > fields.size())
    throw SqlTypeError(fmt::format("field index {} is out of range for {} ({} fields)", i, row.to_string(), fields.size()));
  return static_cast<std::size_t>(i - 1);
}

LogicalType row_field_type(const LogicalType& row, const Value& field) {
  const LogicalType& t = row.fields()[row_field_index(row, field)].type;
  return t.with_nullable(t.nullable() || row.nullable());
}

void register_row_functions(FunctionRegistry& r) {
  r.add_scalar("FIELD", "FIELD(ROW, STRING name | INT 1-based index), the field a constant",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (args.size() != 2 || !args[0].is(TypeKind::kRow)) return std::nullopt;
                 if (!args[1].is_character_string() && !args[1].is(TypeKind::kInt) && !args[1].is(TypeKind::kBigInt))
                   return std::nullopt;
                 ResolvedFunction f;
                 f.name = "FIELD";
                 f.arg_types = {args[0], args[1]};
                 // Placeholder: expr::call replaces it with row_field_type() of the constant.
                 f.return_type = args[0];
                 f.null_policy = NullPolicy::kCustom;
                 f.prepare = [](std::span<const LogicalType> t, std::span<const std::optional<Value>> c) {
                   if (c.size() < 2 || !c[1]) throw SqlTypeError("FIELD: the field must be a constant");
                   return std::shared_ptr<const void>(std::make_shared<FieldState>(FieldState{row_field_index(t[0], *c[1])}));
                 };
                 f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                   const Column& row = *a[0].column;
                   const Column& child = row.child(static_cast<const FieldState*>(ctx.state)->index);
                   out.clear();
                   out.append_range(child, 0, ctx.rows);
                   std::uint64_t* v = out.validity();
                   const std::uint64_t* pv = row.validity();
                   for (std::size_t w = 0; w < (ctx.rows + 63) / 64; ++w) v[w] &= pv[w];
                 };
                 return f;
               });
}

}  // namespace clink::sql
