#pragma once
// The logical relational plan the binder produces, the optimiser rewrites and the
// physical planner compiles. Nodes are immutable once built (shared_ptr<const>); a
// rewrite builds new nodes. Every node knows its output schema and the source position
// of the SQL construct that produced it (errors and the changelog rejection name it).
//
// Column references inside a node's expressions are indices into its (first) input's
// output schema; a join's condition indexes the concatenation left ++ right.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/spec/lookup_join_spec.hpp"
#include "clink/sql/spec/plan_structs.hpp"

namespace clink::sql {

enum class LogicalKind {
  kScan,
  kValues,
  kWatermarkAssigner,
  kProject,
  kFilter,
  kAggregate,        // unbounded GROUP BY (and SELECT DISTINCT: no aggregate calls)
  kWindowTvf,        // window assignment without aggregation (appends window columns)
  kWindowAggregate,  // GROUP BY window_start, window_end [, keys] / legacy group windows
  kUnion,            // UNION ALL
  kSort,             // ORDER BY [LIMIT]
  kLimit,            // LIMIT / OFFSET without ORDER BY
  kJoin,
  kRank,             // ROW_NUMBER / RANK / DENSE_RANK OVER (...) filtered on the rank: Top-N, dedup
  kOverAggregate,    // agg(...) OVER (PARTITION BY ... ORDER BY time ... frame)
  kCorrelate,        // a table function per input row (UNNEST, LATERAL TABLE): Flink's Correlate
  kMatch,            // MATCH_RECOGNIZE (the CEP engine over rows)
  kLookupJoin,       // JOIN t FOR SYSTEM_TIME AS OF o.proc_time: rows of a lookup table per input row
  kVectorSearch,     // VECTOR_SEARCH(...): the top-k nearest rows of a bounded vector table per input row
  kSink,
  kProcessTableFunction,  // f(TABLE t PARTITION BY k, ...): a user C++ PTF (Flink 2.x)
};

struct LogicalNode;
class PlanProperties;  // plan_properties.hpp
using LogicalPtr = std::shared_ptr<const LogicalNode>;

struct LogicalNode {
  LogicalKind kind;
  Schema schema;
  std::vector<LogicalPtr> inputs;
  SourcePosition pos;  // the SQL construct (GROUP BY, JOIN, ORDER BY, table reference ...)

  explicit LogicalNode(LogicalKind k) : kind(k) {}
  virtual ~LogicalNode() = default;
  const LogicalNode& input(std::size_t i = 0) const { return *inputs.at(i); }
};

struct LogicalScan : LogicalNode {
  LogicalScan() : LogicalNode(LogicalKind::kScan) {}
  TableDef table;          // options already merged with /*+ OPTIONS(...) */ hints
  std::string alias;       // the name the query used
  // Physical columns read (indices into table.physical_schema()), in output order.
  std::vector<std::size_t> projected;
};

struct LogicalValues : LogicalNode {
  LogicalValues() : LogicalNode(LogicalKind::kValues) {}
  std::vector<std::vector<ExprPtr>> rows;  // literals, cast to the schema's types
};

struct LogicalWatermarkAssigner : LogicalNode {
  LogicalWatermarkAssigner() : LogicalNode(LogicalKind::kWatermarkAssigner) {}
  std::size_t rowtime = 0;
  ExprPtr watermark;              // over the input row
  std::string emit = "on-periodic";  // scan.watermark.emit.strategy
  std::int64_t interval_ms = 200;    // pipeline.auto-watermark-interval
  std::int64_t idle_timeout_ms = 0;  // scan.watermark.idle-timeout / idle_timeout_ms
  std::string alignment_group;       // scan.watermark.alignment.group (empty: none)
  std::int64_t alignment_max_drift_ms = 0;
  std::int64_t alignment_update_interval_ms = 1000;
};

struct LogicalProject : LogicalNode {
  LogicalProject() : LogicalNode(LogicalKind::kProject) {}
  std::vector<ExprPtr> exprs;  // one per output column (names in the schema)
};

struct LogicalFilter : LogicalNode {
  LogicalFilter() : LogicalNode(LogicalKind::kFilter) {}
  ExprPtr condition;
};


struct LogicalAggregate : LogicalNode {
  LogicalAggregate() : LogicalNode(LogicalKind::kAggregate) {}
  std::vector<std::size_t> keys;                    // input columns
  std::vector<std::vector<std::size_t>> grouping_sets;  // indices into keys; one set = plain GROUP BY
  std::vector<AggregateCall> aggregates;
  bool distinct_only = false;  // SELECT DISTINCT
};

struct WindowSpec {
  enum class Kind { kTumble, kHop, kCumulate, kSession };
  Kind kind = Kind::kTumble;
  std::size_t time_column = 0;  // in the node's input
  std::int64_t size_ms = 0;
  std::int64_t slide_ms = 0;   // HOP
  std::int64_t step_ms = 0;    // CUMULATE
  std::int64_t offset_ms = 0;
  std::int64_t gap_ms = 0;     // SESSION
  std::vector<std::size_t> partition_keys;  // SESSION ... PARTITION BY (window TVF only)
  // The time column is a processing-time attribute (PROCTIME()): windows are assigned by
  // the window operator's clock and fire on processing-time timers.
  bool proctime = false;
  // A window aggregate over a window aggregate's output (Flink's cascaded window
  // aggregation, WindowAttachedWindowingStrategy): the input rows already carry their
  // window, `time_column` is its window_end and `attached_start` its window_start; each
  // row belongs to that one window of this spec.
  std::optional<std::size_t> attached_start;
  std::string describe(const Schema& input) const;  // "TUMBLE(time_col=[ts], size=[10 min])"
};
std::string window_kind_name(WindowSpec::Kind kind);  // "tumble", ...

struct LogicalWindowTvf : LogicalNode {
  LogicalWindowTvf() : LogicalNode(LogicalKind::kWindowTvf) {}
  WindowSpec window;
};

struct LogicalWindowAggregate : LogicalNode {
  LogicalWindowAggregate() : LogicalNode(LogicalKind::kWindowAggregate) {}
  WindowSpec window;
  std::vector<std::size_t> keys;
  std::vector<std::vector<std::size_t>> grouping_sets;
  std::vector<AggregateCall> aggregates;
  std::int64_t allowed_lateness_ms = 0;
  bool late_records_to_dlq = false;
};

struct LogicalUnion : LogicalNode {
  LogicalUnion() : LogicalNode(LogicalKind::kUnion) {}
};


struct LogicalSort : LogicalNode {
  LogicalSort() : LogicalNode(LogicalKind::kSort) {}
  std::vector<SortKey> keys;
  std::optional<std::int64_t> limit;
  std::int64_t offset = 0;
};

struct LogicalLimit : LogicalNode {
  LogicalLimit() : LogicalNode(LogicalKind::kLimit) {}
  std::int64_t limit = -1;  // -1: none (OFFSET only)
  std::int64_t offset = 0;
};

// A semi / anti join (Flink's JoinRelType SEMI / ANTI, from IN / EXISTS subqueries and
// INTERSECT / EXCEPT) outputs the left rows that have / have no matching right row: its
// schema is the left input's, its condition still reads left ++ right.
struct LogicalJoin : LogicalNode {
  enum class Type { kInner, kLeft, kRight, kFull, kSemi, kAnti };
  LogicalJoin() : LogicalNode(LogicalKind::kJoin) {}
  Type type = Type::kInner;
  ExprPtr condition;  // over left ++ right; null: TRUE (cross join)
  bool semi_or_anti() const { return type == Type::kSemi || type == Type::kAnti; }
};
std::string join_type_name(LogicalJoin::Type t);  // "InnerJoin", ..., "LeftSemiJoin", "LeftAntiJoin"
// A semi (anti) join of `left` and `right` on `condition` (over left ++ right).
LogicalPtr make_semi_anti_join(LogicalPtr left, LogicalPtr right, ExprPtr condition, bool anti, SourcePosition pos);

// Flink's FlinkLogicalRank: `SELECT ..., ROW_NUMBER() OVER (PARTITION BY p ORDER BY o) AS rn
// ... WHERE rn <= N`. The binder builds it with an open range when it binds the OVER call;
// the filter on the rank above it gives the range (rank_plan.hpp). Output: the input's
// columns, then the rank number (BIGINT NOT NULL) when something above reads it.
enum class RankType { kRowNumber, kRank, kDenseRank };
std::string rank_type_name(RankType t);  // "ROW_NUMBER", "RANK", "DENSE_RANK"

struct LogicalRank : LogicalNode {
  LogicalRank() : LogicalNode(LogicalKind::kRank) {}
  RankType rank_type = RankType::kRowNumber;
  std::vector<std::size_t> partition_keys;  // input columns
  std::vector<SortKey> order_keys;          // over input columns
  std::int64_t rank_start = 1;
  std::optional<std::int64_t> rank_end;     // absent: no filter on the rank (an OVER aggregate)
  bool output_rank_number = true;
  std::string rank_name;                    // the rank column's name
  SourcePosition function_pos;              // the ROW_NUMBER() call
  // ORDER BY ... LIMIT over an unbounded or updating input (Flink's StreamPhysicalSortLimit):
  // a global ROW_NUMBER Top-N, never a deduplication, explained as SortLimit.
  bool sort_limit = false;
};
// The output schema: the input's columns, then the rank column when it is output.
Schema rank_schema(const Schema& input, const LogicalRank& rank);
// The window of OVER aggregates, as Flink runs them in streaming: ordered by one time
// attribute ascending, from a bound before the current row up to the current row.
struct OverWindow {
  std::vector<std::size_t> partition_keys;  // input columns
  std::size_t order_column = 0;             // an event- or processing-time attribute
  bool proctime = false;
  bool rows = false;  // ROWS (a count of rows) or RANGE (a time span; rows of equal time are peers)
  // The frame's lower bound: ROWS n PRECEDING (n rows before the current one) or RANGE
  // INTERVAL ... PRECEDING (milliseconds); none: UNBOUNDED PRECEDING.
  std::optional<std::int64_t> preceding;
  // Flink's EXPLAIN text: "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW".
  std::string frame_text() const;
};

// Every input row once, followed by its frame's aggregate values (Flink's OverAggregate):
// output = input columns ++ one column per aggregate.
struct LogicalOverAggregate : LogicalNode {
  LogicalOverAggregate() : LogicalNode(LogicalKind::kOverAggregate) {}
  OverWindow window;
  std::vector<AggregateCall> aggregates;
};
Schema over_aggregate_schema(const Schema& input, const std::vector<AggregateCall>& aggregates);

// Flink's Correlate: per input row, the rows of a table function of that row (UNNEST of a
// collection, or a registered table function), each appended to the input row. INNER
// drops an input row whose function returns no rows, LEFT (LEFT JOIN ... ON TRUE) emits it
// once with NULLs. Output = input columns ++ the function's columns. Stateless: an
// input row's kind (and event time) go to every row it expands to.
struct LogicalCorrelate : LogicalNode {
  // kReplicateRows: Flink's REPLICATE_ROWS(n, cols...) (INTERSECT ALL / EXCEPT ALL): the
  // columns cols n times (none when n is NULL or below 1).
  enum class Function { kUnnest, kUser, kReplicateRows };
  LogicalCorrelate() : LogicalNode(LogicalKind::kCorrelate) {}
  Function function = Function::kUnnest;
  std::string function_name;   // kUser: the registered name; kReplicateRows: REPLICATE_ROWS
  std::vector<ExprPtr> args;   // over the input row
  bool with_ordinality = false;  // UNNEST ... WITH ORDINALITY: a 1-based INT column last
  bool left_outer = false;
  // LEFT JOIN UNNEST ... ON condition (over the output row): the joined rows failing it
  // are dropped, and an input row that keeps none gets one row of NULLs. Null: ON TRUE.
  ExprPtr condition;
  std::size_t function_columns() const { return schema.size() - input().schema.size(); }
};

struct LogicalMatch : LogicalNode {
  LogicalMatch() : LogicalNode(LogicalKind::kMatch) {}
  std::vector<std::size_t> partition_keys;  // input columns
  std::size_t order_column = 0;
  bool proctime = false;
  std::vector<MatchStep> pattern;
  std::optional<std::int64_t> within_ms;
  enum class Skip { kPastLastRow, kToNextRow, kToFirst, kToLast };
  Skip skip = Skip::kPastLastRow;
  std::string skip_variable;
  std::vector<MatchDefinition> defines;  // variables without one match any row
  std::vector<MatchNav> measure_navs;
  std::vector<MatchAggregate> measure_aggregates;
  // ALL ROWS PER MATCH: one output row per row of a match, the input columns then the
  // measures (Calcite's order); else one row per match, the partition keys then the measures.
  bool all_rows = false;
  std::vector<ExprPtr> outputs;  // over the extended row
  std::vector<std::string> measure_texts;
  std::optional<std::size_t> rowtime_output;   // the output column that is MATCH_ROWTIME()
  std::optional<std::size_t> proctime_output;  // the output column that is MATCH_PROCTIME()
};

// Flink's LookupJoin: `FROM o [LEFT] JOIN t FOR SYSTEM_TIME AS OF o.proc_time AS d ON
// o.k = d.id [AND ...]` over a table whose connector serves lookups. Per input row, the
// table's rows whose key columns equal the row's values, fetched when the row arrives
// (processing time); INNER drops a row without any, LEFT emits it once with NULLs. One
// input (the probe side); the table is not a scan. Output = input columns ++ the table's
// fetched physical columns (nullable for LEFT). The ON condition (and, INNER, WHERE
// conjuncts pushed into it) indexes the output row; lookup_join_plan.hpp splits it into
// the lookup keys, a filter on the fetched rows and the rest.
struct LogicalLookupJoin : LogicalNode {
  LogicalLookupJoin() : LogicalNode(LogicalKind::kLookupJoin) {}
  TableDef table;                    // options merged with hints
  std::string alias;                 // the name the query used
  std::vector<std::size_t> columns;  // the physical columns fetched (into table.physical_schema()), increasing
  bool left_outer = false;
  ExprPtr condition;                 // over the output row; null: TRUE
  AsyncLookupOptions async;          // the session's table.exec.async-lookup.* settings
  std::size_t input_columns() const { return input().schema.size(); }
};

// VECTOR_SEARCH: per input row, the top_k rows of `table` nearest to `query` by `metric`,
// each appended to the input row with a DOUBLE score (docs/vector-search.md).
struct LogicalVectorSearch : LogicalNode {
  LogicalVectorSearch() : LogicalNode(LogicalKind::kVectorSearch) {}
  TableDef table;                  // the vector table (options merged with hints)
  ExprPtr query;                   // over the input row: ARRAY<FLOAT | DOUBLE>
  std::size_t index_column = 0;    // into table.physical_schema()
  std::int64_t top_k = 1;
  std::string metric = "cosine";   // cosine | l2 | dot
  std::vector<std::pair<std::string, std::string>> options;  // index, m, ef_construction, ...
};

// One table argument of a process table function call: the node's input of the same
// index. Its PARTITION BY columns, ORDER BY (first an ascending event-time column) and
// on_time column are columns of that input.
struct PtfTableArgument {
  std::vector<std::size_t> partition_keys;
  std::vector<SortKey> order_keys;
  std::optional<std::size_t> on_time;
};

// A process table function call (Flink's StreamPhysicalProcessTableFunction): the
// registered function `function` over its table arguments (one, or several co-partitioned
// ones with set semantics: Flink's multi-input PTFs), keyed by the PARTITION BY columns
// (set semantics) or row by row (row semantics). Output = each table's partition columns,
// the function's columns, then `rowtime` when on_time names event-time columns.
struct LogicalProcessTableFunction : LogicalNode {
  LogicalProcessTableFunction() : LogicalNode(LogicalKind::kProcessTableFunction) {}
  std::string function;                  // the registry name (a class name for CREATE FUNCTION .. AS)
  std::string uid;                       // the `uid` argument, else the function name as called
  bool set_semantics = true;
  std::vector<PtfTableArgument> tables;  // one per input, in the signature's order
  std::vector<ExprPtr> args;             // the scalar arguments: literals of the parameters' types
  bool has_rowtime() const { return tables[0].on_time.has_value(); }  // on_time: every table has one, or none
};

struct LogicalSink : LogicalNode {
  LogicalSink() : LogicalNode(LogicalKind::kSink) {}
  TableDef table;       // options merged with hints
  bool overwrite = false;
  std::vector<std::pair<std::string, std::string>> static_partition;
  SourcePosition table_pos;  // the INSERT's position
};

// Helpers for building nodes (schema computed from the parts).
LogicalPtr make_project(LogicalPtr input, std::vector<ExprPtr> exprs, std::vector<std::string> names,
                        SourcePosition pos = {});
LogicalPtr make_filter(LogicalPtr input, ExprPtr condition, SourcePosition pos = {});
// A projection of input columns by index, keeping their names.
LogicalPtr make_column_project(LogicalPtr input, const std::vector<std::size_t>& columns, SourcePosition pos = {});
// The output schema of a window aggregate / window TVF.
Schema window_aggregate_schema(const Schema& input, const WindowSpec& window, const std::vector<std::size_t>& keys,
                               bool nullable_keys, const std::vector<AggregateCall>& aggregates);
Schema window_tvf_schema(const Schema& input, const WindowSpec& window);
Schema aggregate_schema(const Schema& input, const std::vector<std::size_t>& keys, bool nullable_keys,
                        const std::vector<AggregateCall>& aggregates);

// Rebuilds `node` with new inputs (same kind and parameters).
LogicalPtr with_inputs(const LogicalNode& node, std::vector<LogicalPtr> inputs);

// One line per node, children indented by two spaces, Flink-like:
//   LogicalSink(table=[out], fields=[a, cnt])
//     LogicalAggregate(group=[{0}], cnt=[COUNT()])
std::string node_description(const LogicalNode& node);  // the text of one line
// The same, with the joins' and ranks' analyses read from (and kept in) `props`.
std::string node_description(const LogicalNode& node, PlanProperties& props);
// A projection over a filter prints (and compiles) as one Calc, as Flink's.
bool fuses_with_input(const LogicalNode& node);
const std::vector<LogicalPtr>& printed_inputs(const LogicalNode& node);
std::string to_string(const LogicalNode& plan);

// Flink makes duplicate output names of a join unique by appending 0, 1, ...
std::vector<std::string> unique_names(const std::vector<std::string>& names);

// The column names an expression list would print for column refs.
std::string expr_text(const ExprPtr& e, const Schema& input);

// "10 min", "1 h", "500 ms": a duration as Flink's EXPLAIN prints interval sizes.
std::string format_duration_ms(std::int64_t ms);

// Whether column `col` of `n` is an event-time attribute (a watermarked rowtime).
bool is_time_attribute(const LogicalNode& n, std::size_t col);
// Whether column `col` of `n` is a processing-time attribute (PROCTIME(), passed through
// by projections and filters, or a processing-time window's window_time).
bool is_proctime_attribute(const LogicalNode& n, std::size_t col);

}  // namespace clink::sql
