#include "ptf_params.hpp"

#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "exec_options.hpp"

namespace clink::sql {

nlohmann::json process_table_function_params(const LogicalProcessTableFunction& f, const SessionConfig& session) {
  using json = nlohmann::json;
  json args = json::array(), more = json::array();
  for (const auto& a : f.args) args.push_back(expr_to_json(*a));
  auto on_time = [](const PtfTableArgument& t) { return t.on_time ? json(*t.on_time) : json(); };
  auto order = [](const PtfTableArgument& t) {
    json out = json::array();
    for (const auto& k : t.order_keys) out.push_back({{"column", k.column}, {"descending", k.descending}});
    return out;
  };
  for (std::size_t t = 1; t < f.tables.size(); ++t)
    more.push_back({{"partition_keys", f.tables[t].partition_keys},
                    {"order_keys", order(f.tables[t])},
                    {"on_time", on_time(f.tables[t])}});
  json p = {{"schema", schema_to_json(f.schema)},
            {"function", f.function},
            {"uid", f.uid},
            {"set_semantics", f.set_semantics},
            {"partition_keys", f.tables[0].partition_keys},
            {"order_keys", order(f.tables[0])},
            {"on_time", on_time(f.tables[0])},
            {"args", args}};
  if (!more.empty()) p["more_tables"] = more;
  if (const std::int64_t ttl = state_ttl_ms(session, f.pos); ttl > 0) p["state_ttl_ms"] = ttl;
  return p;
}

}  // namespace clink::sql
