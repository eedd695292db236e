#pragma once
// Nested projection push-down (nested_projection.cpp): ROW columns of scans narrowed to
// the fields the plan reads, for connectors that read nested projections.
#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

LogicalPtr push_down_nested_projections(const LogicalPtr& plan);

// `e` over an input whose column types are now `in`'s (a ROW narrowed or widened): its
// column references and the FIELD calls over them retyped.
ExprPtr retype(const ExprPtr& e, const Schema& in);

// The table's physical schema as the scan reads it (the source's `schema` param): a ROW
// column the pass narrowed has the scan's narrowed type.
Schema scan_read_schema(const LogicalScan& s);

}  // namespace clink::sql
