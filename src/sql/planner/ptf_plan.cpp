#include "ptf_plan.hpp"

#include <fmt/format.h>

namespace clink::sql {

std::string describe_process_table_function(const LogicalNode& node) {
  const auto& p = static_cast<const LogicalProcessTableFunction&>(node);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  };
  std::string s = fmt::format("ProcessTableFunction(function=[{}], uid=[{}]", p.function, p.uid);
  // Per table argument (input i); one table keeps the single-table form.
  for (std::size_t t = 0; t < p.tables.size(); ++t) {
    const Schema& in = node.inputs[t]->schema;
    const PtfTableArgument& a = p.tables[t];
    const std::string tag = p.tables.size() > 1 ? fmt::format("#{}", t) : "";
    if (!a.partition_keys.empty()) {
      std::vector<std::string> keys;
      for (auto k : a.partition_keys) keys.push_back(in.name(k));
      s += fmt::format(", partitionBy{}=[{}]", tag, join(keys));
    }
    if (!a.order_keys.empty()) {
      std::vector<std::string> keys;
      for (const auto& k : a.order_keys) keys.push_back(in.name(k.column) + (k.descending ? " DESC" : " ASC"));
      s += fmt::format(", orderBy{}=[{}]", tag, join(keys));
    }
    if (a.on_time) s += fmt::format(", onTime{}=[{}]", tag, in.name(*a.on_time));
  }
  const Schema& in = node.input(0).schema;
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
