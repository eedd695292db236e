// The catalog's models (CREATE MODEL): kept apart from tables, views and functions (a
// model name does not clash with a table's, as in Flink) and persisted one file each
// under <catalog dir>/models/, as tables are under tables/.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/core/durable_file.hpp"
#include "clink/core/error.hpp"
#include "catalog_files.hpp"
#include "clink/sql/catalog/catalog.hpp"

namespace clink::sql {

namespace fs = std::filesystem;

namespace {

constexpr const char* kModelsDir = "models";

nlohmann::json columns_json(const std::vector<SqlFunctionParam>& cs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : cs) out.push_back({{"name", c.name}, {"type", c.type.to_string()}});
  return out;
}

std::vector<SqlFunctionParam> columns_from_json(const nlohmann::json& j) {
  std::vector<SqlFunctionParam> out;
  for (const auto& c : j) out.push_back({c.at("name").get<std::string>(), parse_logical_type(c.at("type").get<std::string>())});
  return out;
}

}  // namespace

std::optional<std::string> ModelDef::option(std::string_view key) const {
  for (const auto& [k, v] : options)
    if (k == key) return v;
  return std::nullopt;
}

const ModelDef* Catalog::model(std::string_view name) const {
  auto it = models_.find(name);
  return it == models_.end() ? nullptr : &it->second;
}

void Catalog::add_model(ModelDef def) {
  if (models_.count(def.name)) throw ClinkError(fmt::format("Model `{}` already exists", def.name));
  const std::string name = def.name;
  const bool temporary = def.temporary;
  models_.emplace(name, std::move(def));
  ++generation_;
  if (dir_.empty() || temporary) return;
  fs::path dir = fs::path(dir_) / kModelsDir;
  fs::create_directories(dir);
  write_file_durably(dir / catalog_file_name(name), to_json(models_.at(name)).dump(2) + "\n");
}

void Catalog::remove_model(std::string_view name) {
  auto it = models_.find(name);
  if (it == models_.end()) return;
  const std::string key = it->first;
  models_.erase(it);
  ++generation_;
  if (dir_.empty()) return;
  std::error_code ec;
  fs::remove(fs::path(dir_) / kModelsDir / catalog_file_name(key), ec);
}

std::vector<std::string> Catalog::model_names() const {
  std::vector<std::string> out;
  for (const auto& [n, m] : models_) out.push_back(n);
  return out;
}

nlohmann::json Catalog::to_json(const ModelDef& m) {
  nlohmann::json options = nlohmann::json::array();
  for (const auto& [k, v] : m.options) options.push_back({k, v});
  return {{"name", m.name}, {"input", columns_json(m.input)}, {"output", columns_json(m.output)},
          {"comment", m.comment}, {"options", options}};
}

ModelDef Catalog::model_from_json(const nlohmann::json& j) {
  ModelDef m;
  m.name = j.at("name").get<std::string>();
  m.input = columns_from_json(j.at("input"));
  m.output = columns_from_json(j.at("output"));
  m.comment = j.value("comment", std::string());
  for (const auto& kv : j.at("options")) m.options.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
  return m;
}

void Catalog::load_models(const std::string& dir) {
  const fs::path d = fs::path(dir) / kModelsDir;
  if (!fs::exists(d)) return;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(d))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      ModelDef m = model_from_json(nlohmann::json::parse(ss.str()));
      models_[m.name] = std::move(m);
    } catch (const std::exception& e) {
      throw ClinkError(fmt::format("catalog file {}: {}", p.string(), e.what()));
    }
  }
}

}  // namespace clink::sql
