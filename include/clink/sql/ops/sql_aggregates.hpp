#pragma once
// The aggregate calls of the SQL aggregation operators and their compact accumulator.
//
// An AggState is a few int64 slots (COUNT: 1; SUM / AVG: sum + non-NULL count, DECIMAL
// sums take two slots; MIN / MAX: value + present flag) plus, only where needed, ordered
// value -> count maps: DISTINCT aggregates, MIN / MAX over strings, and MIN / MAX of a
// retracting aggregation (Flink's MinWithRetract keeps the same map). A COUNT(*) state
// is one slot held inline: no allocation per pane.
//
// Aggregate params (docs/sql-runtime-contract.md): {"function": "SUM", "args": [col],
// "distinct": false, "filter": col or null, "type": T}; arguments and FILTER conditions
// were computed into columns by an upstream sql_calc.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/inlined_vector.h>
#include <nlohmann/json.hpp>

#include "clink/sql/column_batch.hpp"
#include "clink/sql/types.hpp"
#include "clink/sql/value.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::sql {

class SqlOpParams;

enum class AggKind : std::uint8_t { kCount, kSum, kAvg, kMin, kMax };
// How an argument is read: integers and temporals as int64, FLOAT / DOUBLE as double.
enum class AggArg : std::uint8_t { kNone, kInt, kDouble, kDecimal, kString, kBool };

// One aggregate as an operator runs it (the planner's AggregateCall, in logical_plan.hpp, is
// the bound form; the two must not share a name: one struct per name in clink::sql).
struct RuntimeAggregate {
  AggKind kind = AggKind::kCount;
  std::optional<std::size_t> arg;     // none: COUNT(*)
  std::optional<std::size_t> filter;  // a BOOLEAN column: the row counts only where TRUE
  bool distinct = false;
  LogicalType arg_type;
  LogicalType result_type;
  AggArg arg_kind = AggArg::kNone;
  // Layout in the state.
  std::uint32_t slot = 0;
  int map = -1;
};

struct AggState {
  using Map = std::map<std::string, std::int64_t>;
  absl::InlinedVector<std::int64_t, 2> slots;
  std::unique_ptr<std::vector<Map>> maps;  // null when no call needs one

  AggState() = default;
  AggState(const AggState& o) : slots(o.slots), maps(o.maps ? std::make_unique<std::vector<Map>>(*o.maps) : nullptr) {}
  AggState& operator=(const AggState& o) {
    if (this != &o) {
      slots = o.slots;
      maps = o.maps ? std::make_unique<std::vector<Map>>(*o.maps) : nullptr;
    }
    return *this;
  }
  AggState(AggState&&) noexcept = default;
  AggState& operator=(AggState&&) noexcept = default;
};

class AggregateSet {
 public:
  // `retracting`: the input may hold -U / -D rows (unbounded GROUP BY); slot 0 then
  // counts the group's rows (accumulated minus retracted) and MIN / MAX keep maps.
  AggregateSet(std::vector<RuntimeAggregate> calls, bool retracting);

  // Parses the "aggregates" param against the input schema; errors name the op and the
  // aggregate's position.
  static std::vector<RuntimeAggregate> parse(const nlohmann::json& aggs, const Schema& input, const SqlOpParams& p);

  const std::vector<RuntimeAggregate>& calls() const { return calls_; }
  std::size_t size() const { return calls_.size(); }

  AggState create() const;
  // Folds row `row` in (sign +1) or retracts it (sign -1).
  void add(AggState& s, const ColumnBatch& batch, std::size_t row, int sign) const;
  void merge(AggState& into, const AggState& from) const;
  // The group's row count (retracting mode).
  std::int64_t row_count(const AggState& s) const { return s.slots[0]; }
  // The aggregate values, one per call, in the calls' result types.
  void results(const AggState& s, std::vector<Value>& out) const;

 private:
  void add_call(const RuntimeAggregate& c, AggState& s, const Column& col, std::size_t row, int sign) const;
  std::vector<RuntimeAggregate> calls_;
  bool retracting_;
  std::uint32_t num_slots_ = 0;
  int num_maps_ = 0;
};

}  // namespace clink::sql

namespace clink {
template <>
struct StateCodec<sql::AggState> {
  static void encode(const sql::AggState& s, std::string& out);
  static sql::AggState decode(std::string_view& in);
};
}  // namespace clink
