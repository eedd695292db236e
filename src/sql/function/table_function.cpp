#include "clink/sql/function/table_function.hpp"

#include <cctype>

#include "clink/core/error.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

namespace {
bool supported(const LogicalType& t) { return table_function_type_supported(t); }
constexpr const char* kSupported = "(BOOLEAN, INT, BIGINT, DOUBLE, STRING)";

}  // namespace

bool table_function_type_supported(const LogicalType& t) {
  const TypeKind k = t.kind();
  return k == TypeKind::kBoolean || k == TypeKind::kInt || k == TypeKind::kBigInt || k == TypeKind::kDouble ||
         (k == TypeKind::kVarChar && t.length() == kMaxVarLength);
}

void TableFunctionOutput::finish_row() {
  for (Column* c : columns_)
    if (c->size() < rows_) c->append_null();
}

Column& TableFunctionOutput::column(std::size_t c, std::nullptr_t) {
  if (rows_ == 0) throw ClinkError("a table function set a column before its first add_row()");
  if (c >= columns_.size())
    throw ClinkError("a table function set column " + std::to_string(c) + " of " + std::to_string(columns_.size()));
  Column& col = *columns_[c];
  if (col.size() >= rows_) throw ClinkError("a table function set column " + std::to_string(c) + " twice in one row");
  return col;
}

void TableFunctionOutput::wrong_kind(std::size_t c, TypeKind kind) const {
  static const char* kNames[] = {"BOOLEAN", "INT", "BIGINT", "DOUBLE", "STRING"};
  const TypeKind kinds[] = {TypeKind::kBoolean, TypeKind::kInt, TypeKind::kBigInt, TypeKind::kDouble, TypeKind::kVarChar};
  std::string setter = "?";
  for (int i = 0; i < 5; ++i)
    if (kinds[i] == kind) setter = kNames[i];
  throw ClinkError("a table function wrote a " + setter + " into column " + std::to_string(c) + ", which is " +
                   columns_[c]->type().to_string());
}

TableFunctionRegistry& TableFunctionRegistry::process() {
  static TableFunctionRegistry registry;
  return registry;
}

void TableFunctionRegistry::add(std::string_view name, TableFunctionDef def) {
  if (name.empty()) throw ClinkError("a table function needs a name");
  if (def.columns.empty()) throw ClinkError("table function " + std::string(name) + " has no columns");
  if (!def.eval) throw ClinkError("table function " + std::string(name) + " has no eval");
  for (const auto& t : def.params)
    if (!supported(t))
      throw ClinkError("table function " + std::string(name) + ": parameter type " + t.to_string() + " is not supported " +
                       kSupported);
  for (const auto& f : def.columns)
    if (!supported(f.type))
      throw ClinkError("table function " + std::string(name) + ": column `" + f.name + "` is " + f.type.to_string() +
                       ", not supported " + kSupported);
  functions_[upper_ascii(name)] = std::move(def);
}

const TableFunctionDef* TableFunctionRegistry::find(std::string_view name) const {
  auto it = functions_.find(upper_ascii(name));
  return it == functions_.end() ? nullptr : &it->second;
}

}  // namespace clink::sql
