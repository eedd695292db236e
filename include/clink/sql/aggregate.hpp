#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "clink/sql/column.hpp"
#include "clink/sql/types.hpp"

namespace clink::sql {

// An aggregate function for GROUP BY and window operators. One instance serves an
// operator; accumulators are small structs the operator places where it likes (a hash
// table slot, a pane), created, updated and read through this interface:
//   create(acc) -> accumulate / retract (vectorised over a batch) -> merge -> get_value
// accumulate/retract take one accumulator pointer per row (null: skip the row, e.g. a
// FILTER (WHERE ...) clause or a row of another kind), so a batch updates many groups
// in one call without per-row dispatch through this interface.
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
  virtual bool supports_retraction() const { return true; }

  virtual void create(void* acc) const = 0;
  virtual void destroy(void* /*acc*/) const {}
  virtual void accumulate(void* const* accs, std::span<const Column* const> args, std::size_t rows) const = 0;
  // Throws ClinkError when the function does not support retraction.
  virtual void retract(void* const* accs, std::span<const Column* const> args, std::size_t rows) const = 0;
  virtual void merge(void* acc, const void* other) const = 0;
  // Appends the current result (possibly NULL) to `out`, a column of result_type().
  virtual void get_value(const void* acc, Column& out) const = 0;

  virtual void serialize(const void* acc, std::string& out) const = 0;
  // Reads one accumulator from the front of `in` into a created `acc`, advancing `in`.
  virtual void deserialize(void* acc, std::string_view& in) const = 0;
};

}  // namespace clink::sql
