#include "clink/sql/planner/cardinality.hpp"

#include <algorithm>
#include <cmath>

namespace clink::sql {

namespace {

const std::string& call_name(const ExprPtr& e) { return e->name; }

bool is_column(const ExprPtr& e) { return e->kind == ExprKind::kColumnRef; }
bool is_constant(const ExprPtr& e) {
  if (e->kind == ExprKind::kLiteral) return true;
  return e->kind == ExprKind::kCast && is_constant(e->args[0]);
}

}  // namespace

bool has_statistics(const LogicalNode& node) {
  if (node.kind == LogicalKind::kScan)
    return static_cast<const LogicalScan&>(node).table.statistics().row_count.has_value();
  if (node.kind == LogicalKind::kValues) return true;
  return std::all_of(node.inputs.begin(), node.inputs.end(), [](const auto& i) { return has_statistics(*i); });
}

std::optional<double> estimate_ndv(const LogicalNode& node, std::size_t col) {
  switch (node.kind) {
    case LogicalKind::kScan: {
      const auto& s = static_cast<const LogicalScan&>(node);
      auto stats = s.table.statistics();
      auto it = stats.columns.find(s.schema.name(col));
      if (it == stats.columns.end() || !it->second.ndv) return std::nullopt;
      return static_cast<double>(*it->second.ndv);
    }
    case LogicalKind::kProject: {
      const auto& e = static_cast<const LogicalProject&>(node).exprs[col];
      if (is_column(e)) return estimate_ndv(node.input(), e->column_index);
      if (is_constant(e)) return 1.0;
      return std::nullopt;
    }
    case LogicalKind::kFilter:
    case LogicalKind::kWatermarkAssigner:
    case LogicalKind::kSort:
    case LogicalKind::kLimit: {
      auto n = estimate_ndv(node.input(), col);
      if (!n) return n;
      return std::min(*n, estimate_rows(node));
    }
    case LogicalKind::kAggregate: {
      const auto& a = static_cast<const LogicalAggregate&>(node);
      if (col < a.keys.size()) return estimate_ndv(node.input(), a.keys[col]);
      return std::nullopt;
    }
    case LogicalKind::kJoin: {
      std::size_t nl = node.input(0).schema.size();
      return col < nl ? estimate_ndv(node.input(0), col) : estimate_ndv(node.input(1), col - nl);
    }
    case LogicalKind::kWindowTvf:
    case LogicalKind::kOverAggregate:
    case LogicalKind::kCorrelate:
    case LogicalKind::kLookupJoin:
    case LogicalKind::kVectorSearch:
      if (col < node.input().schema.size()) return estimate_ndv(node.input(), col);
      return std::nullopt;
    default: return std::nullopt;
  }
}

double estimate_selectivity(const ExprPtr& c, const LogicalNode& input) {
  if (!c) return 1.0;
  switch (c->kind) {
    case ExprKind::kLiteral:
      if (c->literal.is_null()) return 0.0;
      return c->type.is(TypeKind::kBoolean) && !c->literal.as_bool() ? 0.0 : 1.0;
    case ExprKind::kAnd: {
      double s = 1.0;
      for (const auto& a : c->args) s *= estimate_selectivity(a, input);
      return s;
    }
    case ExprKind::kOr: {
      double s = 0.0;
      for (const auto& a : c->args) s += estimate_selectivity(a, input);
      return std::min(1.0, s);
    }
    case ExprKind::kInList: {
      double one = 0.15;
      if (is_column(c->args[0]))
        if (auto n = estimate_ndv(input, c->args[0]->column_index)) one = 1.0 / std::max(1.0, *n);
      double s = std::min(1.0, one * static_cast<double>(c->args.size() - 1));
      return c->negated ? 1.0 - s : s;
    }
    case ExprKind::kCall: {
      const std::string& n = call_name(c);
      if (n == "=" && c->args.size() == 2) {
        const ExprPtr* col = is_column(c->args[0]) && is_constant(c->args[1])   ? &c->args[0]
                             : is_column(c->args[1]) && is_constant(c->args[0]) ? &c->args[1]
                                                                                : nullptr;
        if (col)
          if (auto ndv = estimate_ndv(input, (*col)->column_index)) return 1.0 / std::max(1.0, *ndv);
        return 0.15;
      }
      if (n == "<" || n == "<=" || n == ">" || n == ">=") return 0.5;
      if (n == "<>") return 0.85;
      if (n == "IS NOT NULL") return 0.9;
      if (n == "IS NULL") return 0.1;
      if (n == "NOT" && c->args.size() == 1) return 1.0 - estimate_selectivity(c->args[0], input);
      return 0.25;
    }
    default: return 0.25;
  }
}

double estimate_rows(const LogicalNode& node) {
  switch (node.kind) {
    case LogicalKind::kScan: {
      auto rc = static_cast<const LogicalScan&>(node).table.statistics().row_count;
      return rc ? static_cast<double>(*rc) : kDefaultRowCount;
    }
    case LogicalKind::kValues: return static_cast<double>(static_cast<const LogicalValues&>(node).rows.size());
    case LogicalKind::kWatermarkAssigner:
    case LogicalKind::kProject:
    case LogicalKind::kRank:  // the latest Top-N of each partition: the input's rows at most
    case LogicalKind::kOverAggregate:
    case LogicalKind::kMatch:  // a match takes at least one row (ALL ROWS: a row per matched row)
    case LogicalKind::kProcessTableFunction:
    case LogicalKind::kWindowTvf: return estimate_rows(node.input());
    // Flink's correlate estimate: no statistics on a collection's size, so the input's rows.
    case LogicalKind::kCorrelate: return estimate_rows(node.input());
    // A lookup join: about one row of the table per input row (a lookup by its key).
    case LogicalKind::kLookupJoin: return estimate_rows(node.input());
    // VECTOR_SEARCH: top_k rows of the vector table per input row.
    case LogicalKind::kVectorSearch:
      return estimate_rows(node.input()) * static_cast<double>(static_cast<const LogicalVectorSearch&>(node).top_k);
    case LogicalKind::kFilter:
      return estimate_rows(node.input()) *
             estimate_selectivity(static_cast<const LogicalFilter&>(node).condition, node.input());
    case LogicalKind::kAggregate:
    case LogicalKind::kWindowAggregate: {
      bool window = node.kind == LogicalKind::kWindowAggregate;
      const auto& keys = window ? static_cast<const LogicalWindowAggregate&>(node).keys
                                : static_cast<const LogicalAggregate&>(node).keys;
      const auto& sets = window ? static_cast<const LogicalWindowAggregate&>(node).grouping_sets
                                : static_cast<const LogicalAggregate&>(node).grouping_sets;
      double in = estimate_rows(node.input());
      double total = 0.0;
      for (const auto& set : sets) {
        double groups = 1.0;
        if (!set.empty()) {
          for (auto k : set) groups *= estimate_ndv(node.input(), keys[k]).value_or(std::max(1.0, in / 10.0));
          groups = std::min(groups, in);
        }
        total += groups;
      }
      return std::max(1.0, total);
    }
    case LogicalKind::kUnion: {
      double s = 0.0;
      for (const auto& i : node.inputs) s += estimate_rows(*i);
      return s;
    }
    case LogicalKind::kSort: {
      const auto& s = static_cast<const LogicalSort&>(node);
      double in = estimate_rows(node.input());
      return s.limit ? std::min(in, static_cast<double>(*s.limit)) : in;
    }
    case LogicalKind::kLimit: {
      const auto& l = static_cast<const LogicalLimit&>(node);
      double in = std::max(0.0, estimate_rows(node.input()) - static_cast<double>(l.offset));
      return l.limit < 0 ? in : std::min(in, static_cast<double>(l.limit));
    }
    case LogicalKind::kJoin: {
      const auto& j = static_cast<const LogicalJoin&>(node);
      double l = estimate_rows(node.input(0)), r = estimate_rows(node.input(1));
      double rows = l * r;
      std::size_t nl = node.input(0).schema.size();
      std::vector<ExprPtr> conjuncts;
      if (j.condition) {
        if (j.condition->kind == ExprKind::kAnd) conjuncts = j.condition->args;
        else conjuncts = {j.condition};
      }
      for (const auto& c : conjuncts) {
        if (c->kind == ExprKind::kCall && c->name == "=" && c->args.size() == 2 && is_column(c->args[0]) &&
            is_column(c->args[1])) {
          std::size_t a = c->args[0]->column_index, b = c->args[1]->column_index;
          if ((a < nl) != (b < nl)) {
            if (a > b) std::swap(a, b);
            double nla = estimate_ndv(node.input(0), a).value_or(l);
            double nrb = estimate_ndv(node.input(1), b - nl).value_or(r);
            rows /= std::max({1.0, nla, nrb});
            continue;
          }
        }
        // Non-equi conditions: the generic selectivity over the joined row.
        rows *= 0.25;
      }
      if (j.type == LogicalJoin::Type::kLeft) rows = std::max(rows, l);
      if (j.type == LogicalJoin::Type::kRight) rows = std::max(rows, r);
      if (j.type == LogicalJoin::Type::kFull) rows = std::max(rows, l + r);
      if (j.semi_or_anti()) {
        // The left rows with a match (at most all of them); an anti join keeps the others,
        // at least a tenth of the left as a guess when the semi estimate takes them all.
        const double semi = std::min(rows, l);
        rows = j.type == LogicalJoin::Type::kSemi ? semi : std::max(l - semi, 0.1 * l);
      }
      return rows;
    }
    case LogicalKind::kSink: return estimate_rows(node.input());
  }
  return kDefaultRowCount;
}

}  // namespace clink::sql
