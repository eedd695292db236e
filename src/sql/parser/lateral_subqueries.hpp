#pragma once
// Which derived tables were written `LATERAL (SELECT ...)`. The AST's DerivedTable has no
// field for it yet (adding one rebuilds every file that includes ast.hpp); the AST builder
// marks the subquery's Query here and the binder asks. Marks hold weak references: a Query
// freed and another allocated at its address is not taken for it.
#include "clink/sql/parser/ast.hpp"

namespace clink::sql {

void mark_lateral_subquery(const ast::QueryPtr& q);
bool is_lateral_subquery(const ast::QueryPtr& q);

}  // namespace clink::sql
