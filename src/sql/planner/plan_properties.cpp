#include "clink/sql/planner/plan_properties.hpp"

namespace clink::sql {

const ChangelogMode& PlanProperties::changelog(const LogicalNode& node) {
  if (auto it = modes_.find(&node); it != modes_.end()) return it->second;
  ChangelogMode mode = derive_changelog(node);  // throws before anything is kept
  return modes_.emplace(&node, std::move(mode)).first->second;
}

const JoinAnalysis& PlanProperties::join(const LogicalJoin& join) {
  if (auto it = joins_.find(&join); it != joins_.end()) return it->second;
  JoinAnalysis a = analyze_join(join);
  return joins_.emplace(&join, std::move(a)).first->second;
}

const RankAnalysis& PlanProperties::rank(const LogicalRank& rank) {
  if (auto it = ranks_.find(&rank); it != ranks_.end()) return it->second;
  RankAnalysis a = analyze_rank(rank, *this);
  return ranks_.emplace(&rank, a).first->second;
}

}  // namespace clink::sql
