#include "clink/connectors/sql/sql_connector_params.hpp"

#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"

namespace clink::sql {

namespace {
std::vector<std::string> with_session(std::vector<std::string> structural) {
  structural.push_back("session");
  return structural;
}
}  // namespace

SqlConnectorParams::SqlConnectorParams(const OperatorSpecContext& ctx, std::string factory,
                                       std::vector<std::string> structural)
    : OpParams(ctx, std::move(factory), with_session(std::move(structural)), true) {
  for (const auto& [key, value] : params_->items()) {
    if (is_known(key)) continue;
    if (value.is_string()) options_[key] = value.get<std::string>();
    else if (value.is_boolean()) options_[key] = value.get<bool>() ? "true" : "false";
    else if (value.is_number()) options_[key] = value.dump();
    else fail("option '" + key + "' must be a string, number or boolean, got " + value.dump());
  }
}

const nlohmann::json& SqlConnectorParams::raw(const std::string& key) const { return params_->at(key); }

SchemaPtr SqlConnectorParams::schema(const char* key) const {
  if (!params_->contains(key)) fail(std::string("missing required param '") + key + "'");
  const auto& s = params_->at(key);
  if (!s.is_array()) fail(std::string("param '") + key + "' must be a list of {\"name\", \"type\"}");
  std::vector<RowField> fields;
  for (const auto& f : s) {
    if (!f.is_object() || !f.contains("name") || !f.contains("type") || !f["name"].is_string() || !f["type"].is_string())
      fail(std::string("param '") + key + "': each field needs a string \"name\" and \"type\", got " + f.dump());
    try {
      fields.push_back(RowField{f["name"].get<std::string>(), parse_logical_type(f["type"].get<std::string>())});
    } catch (const ClinkError& e) {
      fail(std::string("param '") + key + "': field '" + f["name"].get<std::string>() + "': " + e.what());
    }
  }
  return make_schema(std::move(fields));
}

std::optional<std::string> SqlConnectorParams::option(const std::string& key) const {
  auto it = options_.find(key);
  if (it == options_.end()) return std::nullopt;
  return it->second;
}

std::string SqlConnectorParams::option_or(const std::string& key, const std::string& def) const {
  return option(key).value_or(def);
}

std::int64_t SqlConnectorParams::int_option(const std::string& key, std::int64_t def, std::int64_t min,
                                            std::int64_t max) const {
  auto v = option(key);
  if (!v) return def;
  std::int64_t x = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
  if (ec != std::errc() || p != v->data() + v->size()) fail("option '" + key + "' must be an integer, got '" + *v + "'");
  if (x < min || x > max)
    fail("option '" + key + "' must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got '" +
         *v + "'");
  return x;
}

double SqlConnectorParams::double_option(const std::string& key, double def, double min, double max) const {
  auto v = option(key);
  if (!v) return def;
  double x = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
  if (ec != std::errc() || p != v->data() + v->size() || std::isnan(x))
    fail("option '" + key + "' must be a number, got '" + *v + "'");
  if (x < min || x > max) fail("option '" + key + "' must be between " + std::to_string(min) + " and " +
                               std::to_string(max) + ", got '" + *v + "'");
  return x;
}

bool SqlConnectorParams::bool_option(const std::string& key, bool def) const {
  auto v = option(key);
  if (!v) return def;
  if (*v == "true" || *v == "TRUE" || *v == "True") return true;
  if (*v == "false" || *v == "FALSE" || *v == "False") return false;
  fail("option '" + key + "' must be true or false, got '" + *v + "'");
}

std::string SqlConnectorParams::local_time_zone() const {
  if (params_->contains("session") && (*params_)["session"].is_object() && (*params_)["session"].contains("table.local-time-zone"))
    return (*params_)["session"]["table.local-time-zone"].get<std::string>();
  return "UTC";
}

std::vector<std::size_t> SqlConnectorParams::indices(const std::string& key, std::size_t bound) const {
  std::vector<std::size_t> out;
  if (!has(key)) return out;
  const auto& v = raw(key);
  if (!v.is_array()) fail("param '" + key + "' must be a list of column indices, got " + v.dump());
  for (const auto& x : v) {
    if (!x.is_number_integer() || x.get<std::int64_t>() < 0 || x.get<std::size_t>() >= bound)
      fail("param '" + key + "': " + x.dump() + " is not a column index below " + std::to_string(bound));
    out.push_back(x.get<std::size_t>());
  }
  return out;
}

std::vector<std::size_t> SqlConnectorParams::projected(std::size_t columns) const {
  if (has("projected")) return indices("projected", columns);
  std::vector<std::size_t> all(columns);
  for (std::size_t i = 0; i < columns; ++i) all[i] = i;
  return all;
}

}  // namespace clink::sql
