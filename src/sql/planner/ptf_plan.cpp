#include "ptf_plan.hpp"

#include <fmt/format.h>

namespace clink::sql {

std::string describe_process_table_function(const LogicalNode& node) {
  const auto& p = static_cast<const LogicalProcessTableFunction&>(node);
  const Schema& in = node.input().schema;
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  };
  std::string s = fmt::format("ProcessTableFunction(function=[{}], uid=[{}]", p.function, p.uid);
  if (!p.partition_keys.empty()) {
    std::vector<std::string> keys;
    for (auto k : p.partition_keys) keys.push_back(in.name(k));
    s += fmt::format(", partitionBy=[{}]", join(keys));
  }
  if (!p.order_keys.empty()) {
    std::vector<std::string> keys;
    for (const auto& k : p.order_keys) keys.push_back(in.name(k.column) + (k.descending ? " DESC" : " ASC"));
    s += fmt::format(", orderBy=[{}]", join(keys));
  }
  if (p.on_time) s += fmt::format(", onTime=[{}]", in.name(*p.on_time));
  if (!p.args.empty()) {
    std::vector<std::string> args;
    for (const auto& a : p.args) args.push_back(expr_text(a, in));
    s += fmt::format(", args=[{}]", join(args));
  }
  std::vector<std::string> out;
  for (const auto& f : node.schema.fields()) out.push_back(f.name);
  return s + fmt::format(", select=[{}])", join(out));
}

}  // namespace clink::sql
