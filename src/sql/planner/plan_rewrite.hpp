#pragma once
// Expression utilities for plan rewrites (optimizer.cpp, join_reorder.cpp). Rewritten
// expressions keep every node's type; only column indices change.
#include <functional>
#include <set>
#include <vector>

#include "clink/sql/expression/expr.hpp"

namespace clink::sql::rewrite {

void collect_columns(const ExprPtr& e, std::set<std::size_t>& out);
ExprPtr remap_columns(const ExprPtr& e, const std::function<std::size_t(std::size_t)>& map);
// Replaces column i by replacement[i] (inlining a projection).
ExprPtr substitute(const ExprPtr& e, const std::vector<ExprPtr>& replacement);
std::vector<ExprPtr> conjuncts(const ExprPtr& e);
ExprPtr conjunction(std::vector<ExprPtr> parts);  // null when empty
bool is_deterministic(const ExprPtr& e);

}  // namespace clink::sql::rewrite
