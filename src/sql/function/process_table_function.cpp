// The PTF registry and the input-row accessor (process_table_function.hpp); the state
// handles are in src/sql/ops/ptf_state.cpp (they need the keyed state backend).
#include "clink/sql/function/process_table_function.hpp"

#include <algorithm>
#include <cctype>

#include "clink/core/error.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"

namespace clink::sql {

namespace {


bool output_supported(const LogicalType& t) { return table_function_type_supported(t); }

bool param_supported(const LogicalType& t) { return output_supported(t) || t.kind() == TypeKind::kIntervalDayTime; }

}  // namespace

// ------------------------------------------------------------------ PtfRow

std::size_t PtfRow::index_of(std::string_view name) const {
  if (auto i = batch_->schema()->index_of(name)) return *i;
  throw ClinkError("process table function: the table argument has no column `" + std::string(name) + "`");
}

const std::string& PtfRow::name(std::size_t i) const { return batch_->schema()->name(i); }

std::string PtfRow::text_at(std::size_t i) const {
  if (is_null(i)) return "null";
  std::string s;
  append_print_cell(batch_->column(i), row_, *TimeZone::utc(), s);
  return s;
}

// ------------------------------------------------------------------ registry

ProcessTableFunctionRegistry& ProcessTableFunctionRegistry::process() {
  static ProcessTableFunctionRegistry* registry = [] {
    auto* r = new ProcessTableFunctionRegistry();
    register_example_ptfs(*r);
    return r;
  }();
  return *registry;
}

void ProcessTableFunctionRegistry::add(std::string_view name, PtfSignature sig,
                                       std::function<std::unique_ptr<ProcessTableFunction>()> make) {
  const std::string n(name);
  if (n.empty()) throw ClinkError("a process table function needs a name");
  if (!make) throw ClinkError("process table function " + n + " has no factory");
  if (sig.output.empty()) throw ClinkError("process table function " + n + " has no output columns");
  if (sig.table_arg.empty()) throw ClinkError("process table function " + n + " has no table argument name");
  if (!sig.more_table_args.empty()) {  // Flink's rules for multiple table arguments
    if (sig.more_table_args.size() + 1 > 20)
      throw ClinkError("process table function " + n + ": Unsupported table argument count. Currently, the number of "
                       "input tables is limited to 20.");
    if (sig.semantics != PtfTableSemantics::kSet)
      throw ClinkError("process table function " + n + ": All table arguments must use set semantics if multiple table "
                       "arguments are declared.");
    if (sig.pass_columns_through)
      throw ClinkError("process table function " + n + ": Pass-through columns are not supported if multiple table "
                       "arguments are declared.");
    std::vector<std::string> seen = {upper_ascii(sig.table_arg)};
    for (const auto& t : sig.more_table_args) {
      if (t.empty() || std::find(seen.begin(), seen.end(), upper_ascii(t)) != seen.end())
        throw ClinkError("process table function " + n + ": table argument names must be distinct and not empty");
      seen.push_back(upper_ascii(t));
    }
  }
  if (sig.supports_updates && sig.pass_columns_through)
    throw ClinkError("process table function " + n + ": PASS_COLUMNS_THROUGH is not supported if SUPPORT_UPDATES is "
                     "declared (as in Flink)");
  if (sig.semantics == PtfTableSemantics::kRow && !sig.state.empty())
    throw ClinkError("process table function " + n + ": a table with row semantics cannot have state (Flink: state "
                     "needs TABLE_AS_SET)");
  for (const auto& f : sig.output)
    if (!output_supported(f.type))
      throw ClinkError("process table function " + n + ": output column `" + f.name + "` is " + f.type.to_string() +
                       ", not supported (BOOLEAN, INT, BIGINT, DOUBLE, STRING)");
  for (const auto& p : sig.params)
    if (!param_supported(p.type))
      throw ClinkError("process table function " + n + ": parameter `" + p.name + "` is " + p.type.to_string() +
                       ", not supported (BOOLEAN, INT, BIGINT, DOUBLE, STRING, INTERVAL DAY TO SECOND)");
  for (std::size_t i = 0; i < sig.state.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (upper_ascii(sig.state[i].name) == upper_ascii(sig.state[j].name))
        throw ClinkError("process table function " + n + ": duplicate state entry `" + sig.state[i].name + "`");
  functions_[upper_ascii(n)] = ProcessTableFunctionDef{n, std::move(sig), std::move(make)};
}

const ProcessTableFunctionDef* ProcessTableFunctionRegistry::find(std::string_view name) const {
  auto it = functions_.find(upper_ascii(name));
  return it == functions_.end() ? nullptr : &it->second;
}

std::vector<std::string> ProcessTableFunctionRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [k, d] : functions_) out.push_back(d.name);
  return out;
}

}  // namespace clink::sql
