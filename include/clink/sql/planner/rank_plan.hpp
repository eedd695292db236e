#pragma once
// How a LogicalRank runs, decided as Flink's physical rules decide it (StreamPhysicalRankRule,
// StreamPhysicalDeduplicateRule, StreamPhysicalWindowRankRule,
// StreamPhysicalWindowDeduplicateRule), and the rewrite that gives a rank its range from the
// filter on the rank column above it (Flink's FlinkLogicalRankRule / RankUtil.extractRankRange).
// EXPLAIN, the changelog derivation and the physical planner all read analyze_rank's result
// (kept per plan in PlanProperties), so they agree.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/sql/common/session_config.hpp"
#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

class PlanProperties;

struct RankAnalysis {
  enum class Kind {
    kTopN,               // Rank: AppendFast (insert-only input) or Retract (updating input)
    kDeduplicate,        // Deduplicate: ROW_NUMBER, rank 1, ORDER BY one time attribute, rank not output
    kWindowTopN,         // WindowRank: PARTITION BY window_start, window_end [, ...]
    kWindowDeduplicate,  // WindowDeduplicate: the window form of Deduplicate (row time only)
  };
  Kind kind = Kind::kTopN;
  bool retract = false;      // kTopN over updating input
  bool keep_last = false;    // deduplicate: ORDER BY time DESC
  bool rowtime = false;      // deduplicate: the order key is an event-time attribute (else proctime)
  std::size_t time_column = 0;   // deduplicate: the order key
  std::size_t window_start = 0;  // window kinds: the input's window_start / window_end columns
  std::size_t window_end = 0;
};

// Throws TranslationError when the rank has no range (no filter on it: an OVER aggregate).
RankAnalysis analyze_rank(const LogicalRank& rank);

// Whether every row of the plan's sources arrives before their end: VALUES, and scans the
// connector table calls bounded for their options (the rule ANALYZE TABLE uses).
bool plan_is_bounded(const LogicalNode& n);

// Flink's temporal sort: ORDER BY ascending on a time attribute first, without LIMIT, over
// an insert-only input, bounded or not (as Flink's streaming mode plans it). It emits rows
// as the watermark passes them (rowtime) or as they arrive (processing time), ordered by
// the remaining keys within one time.
bool is_temporal_sort(const LogicalSort& sort);
// The same, reading the input's changelog mode from (and keeping it in) `props`.
RankAnalysis analyze_rank(const LogicalRank& rank, PlanProperties& props);

// The EXPLAIN line: Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER],
// rankRange=[rankStart=1, rankEnd=3], partitionBy=[k], orderBy=[c DESC], select=[...]),
// Deduplicate(keep=[FirstRow], key=[k], order=[ROWTIME]), WindowRank(window=[...], ...),
// WindowDeduplicate(window=[...], keep=[...], partitionKeys=[...], orderKey=[...], order=[ROWTIME]).
std::string describe_rank(const LogicalRank& rank, PlanProperties& props);

// `filter` is a WHERE over a rank (through projections). Its conjuncts on the rank column
// (rn <= N, rn < N, rn = N, rn BETWEEN a AND b, N >= rn, ...) become the rank's range and
// leave the filter; the others stay in a filter above. Returns `filter` unchanged when it
// is not over an open rank or does not bound the rank column.
LogicalPtr absorb_rank_filter(const LogicalPtr& filter);

// A rank left without a range (no filter on it) is an OVER aggregate, as Flink 2.1+ plans
// it: ROW_NUMBER() counts rows (ROWS frame), RANK() / DENSE_RANK() count the rows up to
// and with the row's peers (RANGE frame: Flink 2.3's values, not the SQL ranks). Rewrites
// every such rank of `plan` into a LogicalOverAggregate of COUNT(*); Flink's messages for a
// descending or multi-column order. Ranks ordered by a time attribute other than ROW_NUMBER
// stay (analyze_rank rejects them).
LogicalPtr plan_unfiltered_ranks(const LogicalPtr& plan);

// Whether an OVER aggregate is ordered by a column that is not a time attribute (Flink
// 2.1+'s updating OVER aggregate, sql_over_nontime).
bool over_is_nontime(const LogicalOverAggregate& over);

// The operator a rank compiles to (docs/sql-runtime-contract.md): sql_rank, sql_deduplicate
// or sql_window_rank, its params (the schemas aside) and the columns its input is hashed on
// (empty: one global partition at parallelism 1). `table.exec.state.ttl` from the session.
// Throws TranslationError for what Flink does not run (RANK / DENSE_RANK on streams).
struct RankOp {
  std::string factory;
  nlohmann::json params;
  std::vector<std::size_t> hash_keys;
};
RankOp rank_op(const LogicalRank& rank, const RankAnalysis& analysis, const SessionConfig& session);

}  // namespace clink::sql
