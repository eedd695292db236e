#include "clink/sql/spec/sql_op_spec.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"

namespace clink::sql {

using nlohmann::json;

const SchemaPtr& dead_letter_schema() {
  static const SchemaPtr s = make_schema({{"reason", LogicalType::string()},
                                          {"origin", LogicalType::string()},
                                          {"position", LogicalType::string()},
                                          {"payload", LogicalType::string()}});
  return s;
}

SchemaPtr schema_from_json(const json& fields, const std::string& where) {
  if (!fields.is_array()) throw ClinkError(where + ": a schema must be an array of {name, type}, got " + fields.dump());
  std::vector<RowField> out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const json& f = fields[i];
    if (!f.is_object() || !f.contains("name") || !f.contains("type") || !f.at("name").is_string() ||
        !f.at("type").is_string())
      throw ClinkError(where + ": field " + std::to_string(i) + " needs string 'name' and 'type', got " + f.dump());
    try {
      out.push_back({f.at("name").get<std::string>(), parse_logical_type(f.at("type").get<std::string>())});
    } catch (const std::exception& e) {
      throw ClinkError(where + ": field " + std::to_string(i) + " ('" + f.at("name").get<std::string>() +
                       "'): bad type '" + f.at("type").get<std::string>() + "': " + e.what());
    }
  }
  return make_schema(std::move(out));
}

json schema_to_json(const Schema& schema) {
  json a = json::array();
  for (const auto& f : schema.fields()) a.push_back({{"name", f.name}, {"type", f.type.to_string()}});
  return a;
}

void check_schema_equal(const Schema& expected, const Schema& actual, const std::string& what) {
  if (expected == actual) return;
  throw ClinkError(what + ": schema " + actual.to_string() + " does not match " + expected.to_string());
}

namespace {
std::vector<std::string> with_contract_params(std::vector<std::string> known) {
  for (const char* k : {"schema", "input_schemas", "session"}) known.push_back(k);
  return known;
}
}  // namespace

SqlOpParams::SqlOpParams(const OperatorSpecContext& ctx, std::string factory, std::vector<std::string> known)
    : OpParams(ctx, std::move(factory), with_contract_params(std::move(known))) {
  for (std::size_t i = 0; i < ctx.input_types.size(); ++i)
    if (ctx.input_types[i] != kSqlRowType)
      fail("input " + std::to_string(i) + " carries " + ctx.input_types[i] + " records, expected " + kSqlRowType);
}

std::size_t SqlOpParams::column(const json& v, const Schema& schema, const std::string& what) const {
  if (!v.is_number_integer()) fail(what + " must be a column index, got " + v.dump());
  auto i = v.get<std::int64_t>();
  if (i < 0 || static_cast<std::size_t>(i) >= schema.size())
    fail(what + ": column " + std::to_string(i) + " is out of range for the input schema " + schema.to_string());
  return static_cast<std::size_t>(i);
}

std::vector<std::size_t> SqlOpParams::columns(const std::string& name, const Schema& schema) const {
  std::vector<std::size_t> out;
  if (!has(name)) return out;
  const json& a = params_->at(name);
  if (!a.is_array()) fail("param '" + name + "' must be an array of column indices, got " + a.dump());
  for (std::size_t k = 0; k < a.size(); ++k) out.push_back(column(a[k], schema, "param '" + name + "'[" + std::to_string(k) + "]"));
  return out;
}

SchemaPtr SqlOpParams::output_schema() const {
  try {
    return schema_from_json(require("schema"), "param 'schema'");
  } catch (const ClinkError& e) {
    std::string m = e.what();
    if (m.rfind(where_, 0) == 0) throw;
    fail(m);
  }
}

SchemaPtr upstream_output_schema(const UpstreamSpec& up) {
  if (up.side_output == kDeadLetterTag) return dead_letter_schema();
  if (!up.params->contains("schema"))
    throw ClinkError("upstream op '" + up.op_id + "' (" + up.factory + ") declares no 'schema'");
  SchemaPtr schema = schema_from_json(up.params->at("schema"), "op '" + up.op_id + "' param 'schema'");
  const bool projected = up.params->contains("projected") && up.params->at("projected").is_array();
  const bool metadata = up.params->contains("metadata") && up.params->at("metadata").is_array();
  if (!projected && !metadata) return schema;
  // A source's output: its physical columns (restricted to `projected`), then its
  // metadata columns ({"key", "name", "type"} each).
  std::vector<RowField> fields;
  if (!projected) fields = schema->fields();
  else
    for (const auto& i : up.params->at("projected")) {
      if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::size_t>() >= schema->size())
        throw ClinkError("op '" + up.op_id + "' param 'projected': " + i.dump() + " is not a column index below " +
                         std::to_string(schema->size()));
      fields.push_back(schema->field(i.get<std::size_t>()));
    }
  if (metadata)
    for (const auto& m : up.params->at("metadata")) {
      if (!m.is_object() || !m.contains("name") || !m.contains("type"))
        throw ClinkError("op '" + up.op_id + "' param 'metadata': each column needs a \"name\" and a \"type\", got " +
                         m.dump());
      fields.push_back({m["name"].get<std::string>(), parse_logical_type(m["type"].get<std::string>())});
    }
  return make_schema(std::move(fields));
}

namespace {

// Whether an input declared `declared` takes rows of `upstream`: the same columns, where a
// nullable column may come NOT NULL (the branches of a UNION whose column is nullable
// because another branch's is: the op after the union reads them all as the union's).
bool accepts(const Schema& declared, const Schema& upstream) {
  if (declared == upstream) return true;
  if (declared.size() != upstream.size()) return false;
  for (std::size_t c = 0; c < declared.size(); ++c) {
    const RowField& d = declared.field(c);
    const RowField& u = upstream.field(c);
    if (d.name != u.name) return false;
    if (!(d.type == u.type) && !(d.type.nullable() && d.type.same_ignoring_nullability(u.type))) return false;
  }
  return true;
}

}  // namespace

SchemaPtr SqlOpParams::input_schema(std::size_t i) const {
  const json& all = require("input_schemas");
  if (!all.is_array() || i >= all.size()) fail("param 'input_schemas' needs one schema per input (input " + std::to_string(i) + ")");
  SchemaPtr s;
  try {
    s = schema_from_json(all[i], "param 'input_schemas'[" + std::to_string(i) + "]");
  } catch (const ClinkError& e) {
    fail(e.what());
  }
  for (const auto& up : ctx_.upstreams) {
    if (up.input != static_cast<int>(i)) continue;
    SchemaPtr theirs;
    try {
      theirs = upstream_output_schema(up);
    } catch (const ClinkError& e) {
      fail("input " + std::to_string(i) + ": " + e.what());
    }
    if (!accepts(*s, *theirs))
      fail("input " + std::to_string(i) + ": 'input_schemas'[" + std::to_string(i) + "] " + s->to_string() +
           " does not match the schema of upstream op '" + up.op_id + "': " + theirs->to_string());
  }
  return s;
}

}  // namespace clink::sql
