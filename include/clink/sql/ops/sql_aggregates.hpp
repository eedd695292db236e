#pragma once
// The aggregate calls of the SQL aggregation operators. Every aggregate, built-in or a
// user's, runs through the function registry's AggregateFunction (aggregate.hpp), resolved
// by name in FunctionRegistry::process(): this file only lays the calls' accumulators out
// in one block per group / pane (AggState), applies FILTER columns, and reads and writes
// the block.
//
// Aggregate params (docs/sql-runtime-contract.md): {"function": "SUM", "args": [col, ...],
// "distinct": false, "filter": col or null, "type": T}; arguments and FILTER conditions
// were computed into columns by an upstream sql_calc.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/sql/function/aggregate.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::sql {

class SqlOpParams;
class FunctionRegistry;
class AggregateSet;

// One aggregate as an operator runs it (the planner's AggregateCall, in logical_plan.hpp, is
// the bound form; the two must not share a name: one struct per name in clink::sql).
struct RuntimeAggregate {
  std::string function;               // upper case
  std::vector<std::size_t> args;      // input columns (none: COUNT(*), a no-argument UDAF)
  std::optional<std::size_t> filter;  // a BOOLEAN column: the row counts only where TRUE
  bool distinct = false;
  LogicalType result_type;
  std::shared_ptr<const AggregateFunction> fn;
  std::size_t offset = 0;  // of its accumulator in the state block
};

// The accumulators of one group (or pane): one block holding every call's accumulator
// (and, in a retracting aggregation, the group's row count first). Small blocks of
// trivially copyable accumulators (COUNT, SUM / AVG / MIN / MAX over numbers, alone) live
// inline. A state decoded by StateCodec (the window engine restores states without
// knowing the calls) holds its bytes until the AggregateSet first reads it.
class AggState {
 public:
  AggState() = default;
  ~AggState() { reset(); }
  AggState(AggState&& o) noexcept { take(o); }
  AggState& operator=(AggState&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  AggState(const AggState& o);
  AggState& operator=(const AggState& o);

 private:
  friend class AggregateSet;
  friend struct clink::StateCodec<AggState>;
  static constexpr std::size_t kInline = 16;
  void* block() { return heap_ ? heap_ : static_cast<void*>(inline_); }
  const void* block() const { return heap_ ? heap_ : static_cast<const void*>(inline_); }
  // Restored bytes not read yet: no set, heap_ holds a std::string.
  std::string* raw() const { return set_ == nullptr ? static_cast<std::string*>(heap_) : nullptr; }
  void reset();
  void take(AggState& o) noexcept;

  const AggregateSet* set_ = nullptr;
  void* heap_ = nullptr;  // the block when it does not fit inline_ or needs destroying
  alignas(AggregateFunction::kAccumulatorAlign) unsigned char inline_[kInline];
};

// The argument and filter columns of the calls over one batch (per operator: the set is
// shared by the subtasks).
struct AggregateInput {
  const ColumnBatch* batch = nullptr;
  std::vector<std::vector<const Column*>> args;  // per call
  std::vector<const Column*> filters;            // per call, null: no FILTER
};

class AggregateSet {
 public:
  // `counts_rows`: the input may hold -U / -D rows (unbounded GROUP BY); the state then
  // counts the group's rows (accumulated minus retracted).
  AggregateSet(std::vector<RuntimeAggregate> calls, bool counts_rows);
  ~AggregateSet();
  AggregateSet(const AggregateSet&) = delete;
  AggregateSet& operator=(const AggregateSet&) = delete;

  // Parses the "aggregates" param against the input schema, resolving each function in
  // `registry` (for retraction when `retracting`); errors name the op, the aggregate's
  // position and the function.
  static std::vector<RuntimeAggregate> parse(const nlohmann::json& aggs, const Schema& input, const SqlOpParams& p,
                                             bool retracting, const FunctionRegistry& registry);

  const std::vector<RuntimeAggregate>& calls() const { return calls_; }
  std::size_t size() const { return calls_.size(); }
  // Whether every call can merge accumulators (SESSION windows and pane slicing need it).
  bool mergeable() const { return mergeable_; }
  // The first call that cannot merge (for messages); null when all can.
  const RuntimeAggregate* first_unmergeable() const;

  AggState create() const;
  // s = create(), reusing the block s holds when it is one of this set's (a GROUP BY
  // reads a group per batch into the same states: no allocation per group).
  void recreate(AggState& s) const;
  // Reads a state decoded by StateCodec<AggState> (a no-op for any other).
  void ready(AggState& s) const;

  void bind(const ColumnBatch& batch, AggregateInput& in) const;
  // Folds rows[k] of the bound batch into *states[k] (null: skip), sign +1, or retracts
  // them (sign -1): one accumulate / retract call per aggregate.
  void add(AggState* const* states, const AggregateInput& in, std::span<const std::uint32_t> rows, int sign,
           std::vector<void*>& scratch) const;
  // One row (the window engine hands rows over one at a time).
  void add(AggState& s, const AggregateInput& in, std::uint32_t row, int sign) const;
  // One row into every call but the DISTINCT ones (and the row count): the GROUP BY
  // operator keeps their distinct values in keyed state and calls add_call for a value
  // whose count goes 0 -> 1 (sign +1) or 1 -> 0 (sign -1).
  void add_except_distinct(AggState& s, const AggregateInput& in, std::uint32_t row, int sign) const;
  void add_call(AggState& s, const AggregateInput& in, std::size_t call, std::uint32_t row, int sign) const;
  // Whether call `call`'s FILTER lets row `row` of the bound batch in.
  static bool passes_filter(const AggregateInput& in, std::size_t call, std::uint32_t row);
  void merge(AggState& into, const AggState& from) const;
  // The group's row count (counts_rows mode).
  std::int64_t row_count(const AggState& s) const;
  // Appends each call's value to columns[first + i].
  void append_results(const AggState& s, std::vector<Column>& columns, std::size_t first) const;
  void append_results(const AggState& s, ColumnBatch& batch, std::size_t first) const;

  void serialize(const AggState& s, std::string& out) const;
  // Reads a state written by serialize from the front of `in` (into `s`: as recreate).
  AggState deserialize(std::string_view& in) const;
  void deserialize(std::string_view& in, AggState& s) const;

 private:
  friend class AggState;
  void destroy_block(void* block) const;
  void init_block(void* block) const;
  // A state's storage, uninitialised (inline when small and plain bytes).
  AggState allocate() const;
  std::vector<RuntimeAggregate> calls_;
  bool counts_rows_;
  bool trivial_ = true;
  bool mergeable_ = true;
  std::size_t block_size_ = 0;
  // Plain-bytes sets: a created block, copied into new states.
  void* prototype_ = nullptr;
};

}  // namespace clink::sql

namespace clink {
// The window engine's checkpoint encoding of a pane / window state: the set's bytes,
// length-prefixed (decode keeps them until AggregateSet::ready).
template <>
struct StateCodec<sql::AggState> {
  static void encode(const sql::AggState& s, std::string& out);
  static sql::AggState decode(std::string_view& in);
};
}  // namespace clink
