#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/common/column.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::sql {

// An aggregate function for GROUP BY and window operators: the one implementation of
// every aggregate, built-in (COUNT, SUM, AVG, MIN, MAX, DISTINCT over them) or user's
// (aggregate_udf.hpp). One instance serves an operator; accumulators are small structs
// the operator places where it likes (one block per group or pane), created, updated and
// read through this interface:
//   create(acc) -> accumulate / retract (vectorised over a batch) -> merge -> get_value
// accumulate/retract fold the batch rows `rows[k]` into `accs[k]` (null: skip the row,
// e.g. a FILTER (WHERE ...) clause that is not TRUE), so one call updates many groups
// without per-row dispatch through this interface; several k may share an accumulator.
// A row whose arguments hold a NULL is skipped by the function itself (COUNT(*) and a
// no-argument UDAF have none and count every row).
//
// Accumulators of COUNT, SUM, AVG and non-retracting MIN/MAX over numbers are trivially
// copyable structs (COUNT: 8 bytes). Retracting MIN/MAX and DISTINCT keep a multiset of
// values (an ordered map value -> count: a retraction of the current minimum must reveal
// the next one), and string MIN/MAX hold their string: those own heap memory, released
// by destroy(). serialize/deserialize give the stable state encoding of any accumulator.
class AggregateFunction {
 public:
  virtual ~AggregateFunction() = default;

  virtual const LogicalType& result_type() const = 0;
  virtual std::size_t accumulator_size() const = 0;
  static constexpr std::size_t kAccumulatorAlign = 16;
  // True when the accumulator is plain bytes (memcpy-able, no destroy needed).
  virtual bool trivially_copyable() const { return true; }
  // False: retract() throws; the planner rejects the function over updating input.
  virtual bool supports_retraction() const { return true; }
  // False: merge() throws; SESSION windows (which merge) reject the function, and the
  // other windows fold every row into each of its windows instead of merging panes.
  virtual bool supports_merge() const { return true; }
  // The types the arguments must have (the binder casts to them); empty: as given.
  virtual std::vector<LogicalType> argument_types() const { return {}; }
  // DISTINCT over an aggregate: the inner aggregate (owned by this one), so that an
  // operator may keep the distinct values in its keyed state, one entry per value, and
  // run only the inner accumulator in its block (the unbounded GROUP BY does). Else null.
  virtual const AggregateFunction* distinct_inner() const { return nullptr; }

  virtual void create(void* acc) const = 0;
  virtual void destroy(void* /*acc*/) const {}
  virtual void accumulate(void* const* accs, std::span<const Column* const> args,
                          std::span<const std::uint32_t> rows) const = 0;
  // Throws ClinkError when the function does not support retraction.
  virtual void retract(void* const* accs, std::span<const Column* const> args,
                       std::span<const std::uint32_t> rows) const = 0;
  // acc := acc (+) other. Throws ClinkError when the function does not support merging.
  virtual void merge(void* acc, const void* other) const = 0;
  // Appends the current result (possibly NULL) to `out`, a column of result_type().
  virtual void get_value(const void* acc, Column& out) const = 0;

  virtual void serialize(const void* acc, std::string& out) const = 0;
  // Reads one accumulator from the front of `in` into a created `acc`, advancing `in`.
  virtual void deserialize(void* acc, std::string_view& in) const = 0;
};

// DISTINCT over `inner`: a multiset of the argument tuples seen (with multiplicities); a
// tuple reaches `inner` when its count goes 0 -> 1 and is retracted from it when it goes
// 1 -> 0. Null when an argument type cannot be a key (ARRAY, MAP, ROW) or there are none.
std::unique_ptr<AggregateFunction> make_distinct_aggregate(std::unique_ptr<AggregateFunction> inner,
                                                           std::span<const LogicalType> args);

}  // namespace clink::sql
