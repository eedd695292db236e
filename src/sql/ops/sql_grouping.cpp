#include "clink/sql/ops/sql_grouping.hpp"

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/ops/row_key.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"

namespace clink::sql {

using nlohmann::json;

SqlGrouping SqlGrouping::parse(const SqlOpParams& p, const Schema& input) {
  SqlGrouping g;
  g.keys = p.columns("keys", input);
  for (auto k : g.keys)
    if (!key_type_decodable(input.type(k)))
      p.fail("param 'keys': grouping by column " + std::to_string(k) + " of type " + input.type(k).to_string() +
             " is not supported (ARRAY, MAP and ROW keys)");
  g.set_column = p.get_bool("grouping_set_column", false);
  if (!p.has("grouping_sets")) {
    if (g.set_column) p.fail("param 'grouping_set_column' needs 'grouping_sets'");
    g.in_set.push_back(std::vector<bool>(g.keys.size(), true));
    return g;
  }
  const json& sets = p.params().at("grouping_sets");
  if (!sets.is_array() || sets.empty()) p.fail("param 'grouping_sets' must be a non-empty array of arrays, got " + sets.dump());
  for (std::size_t s = 0; s < sets.size(); ++s) {
    if (!sets[s].is_array()) p.fail("param 'grouping_sets'[" + std::to_string(s) + "] must be an array, got " + sets[s].dump());
    std::vector<bool> in(g.keys.size(), false);
    for (const json& v : sets[s]) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::size_t>() >= g.keys.size())
        p.fail("param 'grouping_sets'[" + std::to_string(s) + "]: " + v.dump() + " is not an index into 'keys' (" +
               std::to_string(g.keys.size()) + " keys)");
      in[v.get<std::size_t>()] = true;
    }
    g.in_set.push_back(std::move(in));
  }
  if (g.in_set.size() > 255) p.fail("param 'grouping_sets': at most 255 grouping sets");
  return g;
}

void SqlGrouping::encode(const ColumnBatch& batch, std::size_t row, std::size_t set, std::string& out) const {
  if (in_set.size() > 1) {
    out.push_back(static_cast<char>(set));
  } else if (keys.empty()) {
    out.push_back('\1');
    return;
  }
  const auto& in = in_set[set];
  for (std::size_t k = 0; k < keys.size(); ++k)
    if (in[k]) append_key_value(batch.column(keys[k]), row, out);
}

std::size_t SqlGrouping::decode(std::string_view key, ColumnBatch& out) const {
  std::size_t set = 0;
  if (in_set.size() > 1) {
    set = static_cast<unsigned char>(key[0]);
    key.remove_prefix(1);
  }
  const auto& in = in_set.at(set);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (in[k]) decode_key_value(key, out.column(k));
    else out.column(k).append_null();
  }
  return set;
}

void SqlGrouping::append_set_column(std::size_t set, ColumnBatch& out) const {
  if (set_column) out.column(out.schema()->size() - 1).append<std::int32_t>(static_cast<std::int32_t>(set));
}

void SqlGrouping::set_column_field(std::vector<RowField>& out) const {
  if (set_column) out.push_back({"$grouping_set", LogicalType::int_type().not_null()});
}

void SqlGrouping::key_fields(const Schema& input, std::vector<RowField>& out) const {
  for (std::size_t k = 0; k < keys.size(); ++k) {
    bool everywhere = true;
    for (const auto& s : in_set) everywhere = everywhere && s[k];
    LogicalType t = input.type(keys[k]);
    out.push_back({input.name(keys[k]), everywhere ? t : t.with_nullable(true)});
  }
}

void check_output_types(const Schema& declared, const std::vector<RowField>& derived, const SqlOpParams& p) {
  std::string want;
  for (const auto& f : derived) want += (want.empty() ? "" : ", ") + f.type.to_string();
  if (declared.size() != derived.size())
    p.fail("param 'schema' has " + std::to_string(declared.size()) + " fields, the operator produces " +
           std::to_string(derived.size()) + " (" + want + ")");
  for (std::size_t i = 0; i < derived.size(); ++i)
    if (!(declared.type(i) == derived[i].type))
      p.fail("param 'schema': field " + std::to_string(i) + " ('" + declared.name(i) + "') is " +
             declared.type(i).to_string() + ", the operator produces " + derived[i].type.to_string() + " (all: " + want +
             ")");
}

}  // namespace clink::sql
