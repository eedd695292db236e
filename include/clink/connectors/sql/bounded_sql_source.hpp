#pragma once
// SQL sources an operator reads whole inside itself rather than as a scan op of the job:
// VECTOR_SEARCH's vector table (docs/vector-search.md), drained at open() into an index.
// A connector registers the maker of its SqlSource under its scan factory's name (the
// connector-table row's source_factory); the maker takes the params its scan op would
// get, so the planner builds them exactly as for a scan.
#include <functional>
#include <memory>
#include <string>

#include "clink/connectors/sql/sql_source.hpp"
#include "clink/runtime/operator_registry.hpp"

namespace clink::sql {

using SqlSourceMaker = std::function<std::shared_ptr<const SqlSource>(const OperatorSpecContext&)>;

// Register at startup (register_sql_connectors and the other connectors' registrations).
void register_sql_source_maker(const std::string& source_factory, SqlSourceMaker maker);
// Null when no connector registered a maker under that name.
const SqlSourceMaker* find_sql_source_maker(const std::string& source_factory);

}  // namespace clink::sql
