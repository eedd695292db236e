#pragma once
namespace clink {
class OperatorRegistry;
}
namespace clink::sql {
// Registers the SQL operator factories (docs/sql-runtime-contract.md) and the
// `sql_columns:<i>[,<j>...]` key family.
void register_sql_operators(OperatorRegistry& registry);
}  // namespace clink::sql
