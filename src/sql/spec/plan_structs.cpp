#include "clink/sql/spec/plan_structs.hpp"

#include "clink/sql/common/multiset_type.hpp"

namespace clink::sql {

std::vector<RowField> unnest_fields(const LogicalType& collection, bool with_ordinality, bool left_outer) {
  std::vector<RowField> fields;
  if (collection.is(TypeKind::kArray)) {
    const LogicalType& element = collection.element_type();
    if (element.is(TypeKind::kRow)) {
      // An ARRAY of ROW expands to the row's fields; a NULL element gives NULL fields.
      for (const auto& f : element.fields())
        fields.push_back({f.name, element.nullable() ? f.type.with_nullable(true) : f.type});
    } else {
      fields.push_back({"f0", element});
    }
  } else if (is_multiset(collection)) {
    // Each element as often as its count (Flink's UnnestRowsFunction over a multiset).
    fields.push_back({"f0", collection.key_type()});
  } else if (collection.is(TypeKind::kMap)) {
    fields.push_back({"f0", collection.key_type()});
    fields.push_back({"f1", collection.value_type()});
  } else {
    return fields;
  }
  if (with_ordinality) fields.push_back({"ORDINALITY", LogicalType::int_type().not_null()});
  if (left_outer)
    for (auto& f : fields) f.type = f.type.with_nullable(true);
  return fields;
}

Schema match_extended_schema(const Schema& input, std::size_t navs, const LogicalType& rowtime_type,
                             const std::vector<LogicalType>& aggregate_types) {
  std::vector<RowField> fields = input.fields();
  fields.push_back({"$match_rowtime", rowtime_type});
  fields.push_back({"$match_proctime", LogicalType::timestamp_ltz(3).not_null()});
  fields.push_back({"$classifier", LogicalType::string().not_null()});
  for (std::size_t k = 0; k < navs; ++k)
    for (const auto& f : input.fields()) fields.push_back({"$nav" + std::to_string(k) + "$" + f.name, f.type.with_nullable(true)});
  for (std::size_t j = 0; j < aggregate_types.size(); ++j) fields.push_back({"$agg" + std::to_string(j), aggregate_types[j]});
  return Schema(std::move(fields));
}

bool join_key_types_compatible(const LogicalType& a, const LogicalType& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case TypeKind::kDecimal: return a.scale() == b.scale();
    case TypeKind::kArray:
    case TypeKind::kMap:
    case TypeKind::kRow: return a.with_nullable(true) == b.with_nullable(true);
    default: return true;
  }
}

}  // namespace clink::sql
