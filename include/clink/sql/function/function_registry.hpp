#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/sql/common/column.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/sql/common/value.hpp"

namespace clink::sql {

class AggregateFunction;

// A runtime failure of an expression on some row (a failing CAST, a bad regex): the
// message names the function and the offending value.
class SqlRuntimeError : public ClinkError {
 public:
  using ClinkError::ClinkError;
};

// Per-batch inputs of the time functions, refreshed by the operator that runs the
// expressions before each batch (one instance per operator subtask, shared with its
// compiled expressions through SessionContext::batch_time).
struct BatchTimeContext {
  // The operator's current watermark in epoch milliseconds; nullopt before the first
  // watermark (CURRENT_WATERMARK is then NULL, as in Flink).
  std::optional<std::int64_t> current_watermark_millis;
  // A fixed "now" in epoch microseconds for CURRENT_TIMESTAMP, NOW(), PROCTIME() & co
  // (tests, replays); nullopt reads the system clock once per batch.
  std::optional<std::int64_t> now_micros;
};

// What a query's expressions see of the session (`table.local-time-zone`, ...).
struct SessionContext {
  TimeZonePtr time_zone = TimeZone::utc();
  // Null: no watermark (CURRENT_WATERMARK is NULL) and the system clock.
  std::shared_ptr<const BatchTimeContext> batch_time;
};

// One argument of a kernel: a column of at least `rows` rows, or a scalar (a constant:
// row 0 holds the value of every row).
struct KernelArg {
  const Column* column;
  bool scalar;
  bool valid(std::size_t i) const { return column->is_valid(scalar ? 0 : i); }
  std::size_t row(std::size_t i) const { return scalar ? 0 : i; }
};

struct KernelContext {
  std::size_t rows;
  // Rows whose result is used (bit set), null = all rows. A kernel that can fail raises
  // only for active rows: CASE WHEN x <> '' THEN CAST(x AS INT) END never fails on ''.
  const std::uint64_t* active;
  // kPropagate: rows where every argument is non-NULL (already copied into a fixed-width
  // output's validity; a variable-width kernel appends NULL for the others). Null for kCustom.
  const std::uint64_t* args_valid;
  const SessionContext* session;
  const void* state;  // the function's prepared state (compiled pattern, UDF object)

  bool is_active(std::size_t i) const { return active == nullptr || ((active[i >> 6] >> (i & 63)) & 1); }
  bool args_valid_at(std::size_t i) const { return args_valid == nullptr || ((args_valid[i >> 6] >> (i & 63)) & 1); }
};

// kPropagate: the framework sets the output validity to the AND of the arguments'
// validities before calling the kernel, which fills values (and may clear more bits:
// overflow -> NULL). kCustom: the kernel writes validity itself (IS NULL, CONCAT_WS...).
enum class NullPolicy { kPropagate, kCustom };

// Fills `out` (type: the return type) for ctx.rows rows. Fixed-width outputs arrive
// resized to ctx.rows; variable-width outputs arrive cleared (append to them).
using ScalarKernel = std::function<void(KernelContext&, std::span<const KernelArg>, Column& out)>;
// Builds per-call state at compile time from the argument types and the values of the
// constant arguments (nullopt where an argument is not constant): a LIKE pattern, a regex.
using PrepareFn = std::function<std::shared_ptr<const void>(std::span<const LogicalType>,
                                                            std::span<const std::optional<Value>>)>;

// A function overload chosen for concrete argument types.
struct ResolvedFunction {
  std::string name;
  std::vector<LogicalType> arg_types;  // what the arguments are cast to before the call
  LogicalType return_type;
  ScalarKernel kernel;
  NullPolicy null_policy = NullPolicy::kPropagate;
  bool accepts_scalars = false;  // the kernel handles scalar arguments (else they are broadcast)
  bool deterministic = true;
  PrepareFn prepare;
  std::shared_ptr<const void> state;  // registration-time state (a UDF's callable)
};

// The enforcer of a NOT NULL sink column (function_compare.cpp); internal, not callable
// from SQL text by this name's `$`.
inline constexpr const char* kSinkNotNull = "$SINK_NOT_NULL";

// Decides whether an overload applies to the argument types; nullopt when it does not.
using OverloadResolver = std::function<std::optional<ResolvedFunction>(std::span<const LogicalType>)>;

// How the planner uses an aggregate: DISTINCT, and whether its input retracts (MIN/MAX
// then keep a multiset of values instead of one value). A factory that cannot honour
// DISTINCT returns null; one whose function cannot retract still returns it (the caller
// checks supports_retraction() and names the function in its error).
struct AggregateOptions {
  bool distinct = false;
  bool needs_retraction = false;
};
// Builds an aggregate for argument types (COUNT(*) has none); null when unsupported.
using AggregateFactory =
    std::function<std::unique_ptr<AggregateFunction>(std::span<const LogicalType> args, const AggregateOptions&)>;

// Functions by case-insensitive name: scalar overloads (built-ins and UDFs alike) and
// aggregates. Temporal, hashing and JSON functions register into the same tables.
class FunctionRegistry {
 public:
  FunctionRegistry() = default;
  // A registry holding every built-in function (a fresh copy users may extend).
  static FunctionRegistry with_builtins();
  // The shared read-only built-ins.
  static const FunctionRegistry& builtins();
  // The registry of this process: the built-ins plus the functions its user code added.
  // SQL operators are built from plan JSON naming their aggregate functions and resolve
  // them here, so a user aggregate is registered here (at startup, before the jobs that
  // call it are planned and run: registration is not synchronised with lookups).
  static FunctionRegistry& process();

  // Adds an overload; `signature` documents it ("SUBSTRING(STRING, INT [, INT])").
  void add_scalar(std::string_view name, std::string signature, OverloadResolver resolver);
  // A fixed signature: arguments implicitly castable to `params` match.
  void add_fixed(std::string_view name, std::vector<LogicalType> params, LogicalType result, ScalarKernel kernel,
                 NullPolicy policy = NullPolicy::kPropagate, bool accepts_scalars = false, PrepareFn prepare = nullptr);
  void add_aggregate(std::string_view name, std::string signature, AggregateFactory factory);

  bool has_scalar(std::string_view name) const;
  bool has_aggregate(std::string_view name) const;
  // The best overload: an exact match over one needing implicit casts (fewest casts
  // first, then registration order). Throws SqlTypeError naming the call and candidates.
  ResolvedFunction resolve(std::string_view name, std::span<const LogicalType> args) const;
  // Throws SqlTypeError naming the call and the candidates when nothing matches.
  std::unique_ptr<AggregateFunction> make_aggregate(std::string_view name, std::span<const LogicalType> args,
                                                    const AggregateOptions& options = {}) const;
  // Upper-case names, sorted (SHOW FUNCTIONS).
  std::vector<std::string> scalar_names() const;
  std::vector<std::string> aggregate_names() const;

 private:
  struct ScalarEntry {
    std::vector<std::pair<std::string, OverloadResolver>> overloads;
  };
  struct AggregateEntry {
    std::vector<std::pair<std::string, AggregateFactory>> overloads;
  };
  std::map<std::string, ScalarEntry, std::less<>> scalars_;
  std::map<std::string, AggregateEntry, std::less<>> aggregates_;
};

std::string upper_ascii(std::string_view s);

// Registration of the built-in groups (each in its own source file).
void register_arithmetic_functions(FunctionRegistry& r);
void register_interval_arithmetic(FunctionRegistry& r);
void register_comparison_functions(FunctionRegistry& r);
void register_math_functions(FunctionRegistry& r);
void register_math_more_functions(FunctionRegistry& r);     // trigonometry, BIN, HEX, RAND, UUID
void register_string_extra_functions(FunctionRegistry& r);  // LOCATE, TO_BASE64, FROM_BASE64
void register_string_functions(FunctionRegistry& r);
void register_string_more_functions(FunctionRegistry& r);
void register_regex_functions(FunctionRegistry& r);
void register_aggregate_functions(FunctionRegistry& r);
void register_temporal_functions(FunctionRegistry& r);
void register_temporal_format_functions(FunctionRegistry& r);
void register_hash_functions(FunctionRegistry& r);
void register_json_functions(FunctionRegistry& r);
void register_row_functions(FunctionRegistry& r);
void register_collection_functions(FunctionRegistry& r);
void register_string_flink_functions(FunctionRegistry& r);  // INSTR, TRANSLATE, ELT, SPLIT, STR_TO_MAP, IS_*, TYPEOF
void register_url_codec_functions(FunctionRegistry& r);     // PARSE_URL, URL_ENCODE/DECODE, ENCODE/DECODE
void register_printf_function(FunctionRegistry& r);
void register_regex_more_functions(FunctionRegistry& r);    // REGEXP_COUNT/EXTRACT_ALL/INSTR/SUBSTR
void register_array_functions(FunctionRegistry& r);         // ARRAY_*, ELEMENT
void register_map_functions(FunctionRegistry& r);           // MAP_KEYS/VALUES/ENTRIES/FROM_ARRAYS/UNION

// FIELD(row, f): the index of field `f` (a name, or a 1-based index) of the ROW type
// `row`, and the field's type (nullable when the row is). Throw SqlTypeError.
std::size_t row_field_index(const LogicalType& row, const Value& field);
LogicalType row_field_type(const LogicalType& row, const Value& field);

}  // namespace clink::sql
