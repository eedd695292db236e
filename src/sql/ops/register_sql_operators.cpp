#include "clink/sql/ops/register_sql_operators.hpp"

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/function/wasm_udf.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {

namespace {

// "0,2" -> {0, 2}; "" -> {} (one key for every row: a global aggregate kept keyed).
std::vector<std::size_t> parse_column_list(const std::string& args, std::size_t columns) {
  std::vector<std::size_t> out;
  std::size_t pos = 0;
  while (pos < args.size()) {
    std::size_t comma = args.find(',', pos);
    std::string item = args.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw ClinkError("'" + item + "' is not a column index (expected sql_columns:<i>[,<j>...])");
    std::size_t c = std::stoul(item);
    if (c >= columns)
      throw ClinkError("column " + item + " is out of range (the upstream schema has " + std::to_string(columns) +
                       " columns)");
    out.push_back(c);
    if (comma == std::string::npos) break;
    pos = comma + 1;
    if (pos == args.size()) throw ClinkError("trailing ',' in the column list");
  }
  return out;
}

}  // namespace

void register_sql_operators(OperatorRegistry& r) {
  // A SQL job's spec carries the WebAssembly functions its ops call (wasm_udf.hpp).
  register_spec_section(
      "udfs", [](const nlohmann::json& udfs) { register_spec_wasm_udfs(udfs); },
      [](const nlohmann::json& spec) { return wasm_udfs_for_spec(spec); });
  register_sql_calc(r);
  register_sql_correlate(r);
  register_sql_watermark_assigner(r);
  register_sql_window_assign(r);
  register_sql_window_aggregate(r);
  register_sql_window_session(r);
  register_sql_group_aggregate(r);
  register_sql_local_group_aggregate(r);
  register_sql_limit_sort(r);
  register_sql_join(r);
  register_sql_semi_anti_join(r);
  register_sql_interval_join(r);
  register_sql_temporal_join(r);
  register_sql_lookup_join(r);
  register_sql_window_join(r);
  register_sql_values_source(r);
  register_sql_rank(r);
  register_sql_deduplicate(r);
  register_sql_changelog_normalize(r);
  register_sql_final_table(r);
  register_sql_window_rank(r);
  register_sql_over_aggregate(r);
  register_sql_over_nontime(r);
  register_sql_match_recognize(r);
  register_sql_vector_search(r);
  register_sql_process_table_function(r);
  r.add_key_selector_family(KeySelectorFamily{
      "sql_columns:", kSqlRowType, [](const std::string& args, const UpstreamSpec& up) -> PartitionerFactory {
        // The rows the edge carries: a projecting source's key columns index its projection.
        SchemaPtr schema = upstream_output_schema(up);
        return column_batch_hash_partitioner_factory(schema, parse_column_list(args, schema->size()));
      }});
}

}  // namespace clink::sql
