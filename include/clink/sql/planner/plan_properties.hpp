#pragma once
// What the planner derives about the nodes of one plan, derived once per node and kept:
// the changelog mode of each node, the analysis of each join and each rank. EXPLAIN, the
// sink check and the physical planner of one statement read one PlanProperties, so no
// node is analysed twice however many of them ask (deriving each node's mode from scratch
// re-derived the whole subtree under it, and the analyses inside it, once per ancestor).
//
// The derivation is demand-driven but memoised: asking for a node derives what it needs
// below it in the same order as a recursive derivation would, so the first error raised
// is the same. Keyed by node address: valid while the plan is alive. Nodes are immutable
// once built and a rewrite builds new nodes, so a plan after a rewrite needs a new
// PlanProperties (the binder and the optimiser, which ask about plans they are still
// rewriting, use a fresh one per question through changelog_mode / analyze_rank).
#include <unordered_map>

#include "clink/sql/planner/changelog_mode.hpp"
#include "clink/sql/planner/join_analysis.hpp"
#include "clink/sql/planner/logical_plan.hpp"
#include "clink/sql/planner/rank_plan.hpp"

namespace clink::sql {

class PlanProperties {
 public:
  // The mode of `node`'s output. Throws TranslationError when a node cannot consume its
  // input's updates (nothing is kept for it then: asking again throws again).
  const ChangelogMode& changelog(const LogicalNode& node);
  const JoinAnalysis& join(const LogicalJoin& join);
  // Throws TranslationError for a rank without a range (analyze_rank).
  const RankAnalysis& rank(const LogicalRank& rank);

 private:
  ChangelogMode derive_changelog(const LogicalNode& node);

  // Node-based maps: the references handed out stay valid as they grow.
  std::unordered_map<const LogicalNode*, ChangelogMode> modes_;
  std::unordered_map<const LogicalNode*, JoinAnalysis> joins_;
  std::unordered_map<const LogicalNode*, RankAnalysis> ranks_;
};

}  // namespace clink::sql
