#include "clink/sql/catalog/catalog.hpp"

#include "clink/core/durable_file.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog_files.hpp"
#include "clink/sql/parser/parser.hpp"

namespace clink::sql {

namespace fs = std::filesystem;

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::int64_t> parse_int(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  try {
    std::size_t used = 0;
    long long v = std::stoll(*s, &used);
    if (used != s->size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

const char* kind_dir(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kTable: return "tables";
    case ObjectKind::kView: return "views";
    case ObjectKind::kFunction: return "functions";
  }
  return "";
}

nlohmann::json opt_json(const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
nlohmann::json opt_json(const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

template <class T>
std::optional<T> opt_from(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

}  // namespace

std::string to_string(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kTable: return "table";
    case ObjectKind::kView: return "view";
    case ObjectKind::kFunction: return "function";
  }
  return "object";
}

// ------------------------------------------------------------------ TableDef

std::optional<std::string> TableDef::option(std::string_view key) const {
  for (const auto& [k, v] : options)
    if (k == key) return v;
  return std::nullopt;
}

void TableDef::set_option(const std::string& key, const std::string& value) {
  for (auto& [k, v] : options)
    if (k == key) {
      v = value;
      return;
    }
  options.emplace_back(key, value);
}

bool TableDef::reset_option(std::string_view key) {
  auto it = std::find_if(options.begin(), options.end(), [&](const auto& kv) { return kv.first == key; });
  if (it == options.end()) return false;
  options.erase(it);
  return true;
}

const CatalogColumn* TableDef::column(std::string_view n) const {
  for (const auto& c : columns)
    if (c.name == n) return &c;
  return nullptr;
}

std::optional<std::size_t> TableDef::column_index(std::string_view n) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == n) return i;
  return std::nullopt;
}

Schema TableDef::schema() const {
  std::vector<RowField> fields;
  for (const auto& c : columns) fields.push_back({c.name, c.type});
  return Schema(std::move(fields));
}

Schema TableDef::physical_schema() const {
  std::vector<RowField> fields;
  for (const auto& c : columns)
    if (c.kind == CatalogColumn::Kind::kPhysical) fields.push_back({c.name, c.type});
  return Schema(std::move(fields));
}

TableStatistics TableDef::statistics() const {
  if (analyzed_statistics.analyzed) return analyzed_statistics;
  TableStatistics s;
  s.row_count = parse_int(option("statistics.row-count"));
  for (const auto& c : columns) {
    std::string prefix = "statistics.columns." + c.name + ".";
    ColumnStatistics cs;
    cs.ndv = parse_int(option(prefix + "ndv"));
    cs.null_count = parse_int(option(prefix + "null-count"));
    cs.min = option(prefix + "min");
    cs.max = option(prefix + "max");
    if (cs.ndv || cs.null_count || cs.min || cs.max) s.columns[c.name] = cs;
  }
  return s;
}

std::int64_t TableDef::allowed_lateness_ms() const {
  return parse_int(option("allowed_lateness_ms")).value_or(0);
}

bool TableDef::late_records_to_dlq() const { return option("late_records_to_dlq").value_or("false") == "true"; }

// ------------------------------------------------------------------ Catalog

std::optional<ObjectKind> Catalog::kind_of(std::string_view name) const {
  if (tables_.find(name) != tables_.end()) return ObjectKind::kTable;
  if (views_.find(name) != views_.end()) return ObjectKind::kView;
  if (functions_.find(upper(name)) != functions_.end()) return ObjectKind::kFunction;
  return std::nullopt;
}

const TableDef* Catalog::table(std::string_view name) const {
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : &it->second;
}

const ViewDef* Catalog::view(std::string_view name) const {
  auto it = views_.find(name);
  return it == views_.end() ? nullptr : &it->second;
}

const FunctionDef* Catalog::function(std::string_view name) const {
  auto it = functions_.find(upper(name));
  return it == functions_.end() ? nullptr : &it->second;
}

void Catalog::add_table(TableDef def) {
  if (tables_.count(def.name) || views_.count(def.name))
    throw ClinkError(fmt::format("{} `{}` already exists", table(def.name) ? "table" : "view", def.name));
  std::string name = def.name;
  tables_.emplace(name, std::move(def));
  ++generation_;
  persist(ObjectKind::kTable, name);
}

void Catalog::add_view(ViewDef def) {
  if (tables_.count(def.name) || views_.count(def.name))
    throw ClinkError(fmt::format("{} `{}` already exists", table(def.name) ? "table" : "view", def.name));
  std::string name = def.name;
  views_.emplace(name, std::move(def));
  persist(ObjectKind::kView, name);
}

void Catalog::add_function(FunctionDef def, bool replace) {
  std::string key = upper(def.name);
  if (functions_.count(key) && !replace) throw ClinkError(fmt::format("function `{}` already exists", def.name));
  functions_[key] = std::move(def);
  ++generation_;
  persist(ObjectKind::kFunction, key);
}

void Catalog::replace_table(const std::string& old_name, TableDef def) {
  if (def.name != old_name) {
    if (has(def.name)) throw ClinkError(fmt::format("cannot rename `{}` to `{}`: the name is taken", old_name, def.name));
    tables_.erase(old_name);
    unpersist(ObjectKind::kTable, old_name);
  }
  std::string name = def.name;
  tables_[name] = std::move(def);
  ++generation_;
  persist(ObjectKind::kTable, name);
}

void Catalog::replace_view(ViewDef def) {
  std::string name = def.name;
  views_[name] = std::move(def);
  persist(ObjectKind::kView, name);
}

void Catalog::remove(ObjectKind kind, std::string_view name) {
  std::string key(name);
  switch (kind) {
    case ObjectKind::kTable: tables_.erase(key); break;
    case ObjectKind::kView: views_.erase(key); break;
    case ObjectKind::kFunction: key = upper(name); functions_.erase(key); break;
  }
  ++generation_;
  unpersist(kind, key);
}

std::vector<std::string> Catalog::table_names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : tables_) out.push_back(k);
  return out;
}

std::vector<std::string> Catalog::view_names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : views_) out.push_back(k);
  return out;
}

std::vector<std::string> Catalog::function_names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : functions_) out.push_back(v.name);
  return out;
}

std::vector<std::string> Catalog::views_referencing(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : views_) {
    auto refs = referenced_tables(*v.query);
    if (std::find(refs.begin(), refs.end(), name) != refs.end()) out.push_back(k);
  }
  return out;
}

// ------------------------------------------------------------------ persistence

// An object's file: its name with every byte outside [A-Za-z0-9_-] (and a leading '.')
// as %XX, so a name such as `../../x` stays a file inside the catalog directory. Loading
// reads the name from the file's content, so the file name only has to be unique.
std::string catalog_file_name(const std::string& name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool keep = std::isalnum(c) || c == '_' || c == '-' || (c == '.' && i > 0);
    if (keep) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out + ".json";
}

void Catalog::set_persistence_dir(std::string dir) {
  dir_ = std::move(dir);
  for (auto kind : {ObjectKind::kTable, ObjectKind::kView, ObjectKind::kFunction})
    fs::create_directories(fs::path(dir_) / kind_dir(kind));
}

void Catalog::persist(ObjectKind kind, const std::string& name) const {
  if (dir_.empty()) return;
  nlohmann::json j;
  switch (kind) {
    case ObjectKind::kTable: {
      const auto& t = tables_.at(name);
      if (t.temporary) return;
      j = to_json(t);
      break;
    }
    case ObjectKind::kView: {
      const auto& v = views_.at(name);
      if (v.temporary) return;
      j = to_json(v);
      break;
    }
    case ObjectKind::kFunction: {
      const auto& f = functions_.at(name);
      if (f.temporary) return;
      j = to_json(f);
      break;
    }
  }
  fs::path dir = fs::path(dir_) / kind_dir(kind);
  fs::create_directories(dir);
  // Atomic and durable: a crash leaves the old file or the new one.
  write_file_durably(dir / catalog_file_name(name), j.dump(2) + "\n");
}

void Catalog::unpersist(ObjectKind kind, const std::string& name) const {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::remove(fs::path(dir_) / kind_dir(kind) / catalog_file_name(name), ec);
}

void Catalog::load_from_dir(const std::string& dir) {
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      return nlohmann::json::parse(ss.str());
    } catch (const std::exception& e) {
      throw ClinkError(fmt::format("catalog file {}: {}", p.string(), e.what()));
    }
  };
  auto files = [&](ObjectKind kind) {
    std::vector<fs::path> out;
    fs::path d = fs::path(dir) / kind_dir(kind);
    if (!fs::exists(d)) return out;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".json") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  };
  for (const auto& p : files(ObjectKind::kTable)) {
    auto t = table_from_json(read(p));
    tables_[t.name] = std::move(t);
  }
  for (const auto& p : files(ObjectKind::kView)) {
    auto v = view_from_json(read(p));
    views_[v.name] = std::move(v);
  }
  for (const auto& p : files(ObjectKind::kFunction)) {
    auto f = function_from_json(read(p));
    functions_[upper(f.name)] = std::move(f);
  }
  load_models(dir);
  ++generation_;
}

nlohmann::json Catalog::to_json(const TableDef& t) {
  nlohmann::json cols = nlohmann::json::array();
  for (const auto& c : t.columns) {
    nlohmann::json jc = {{"name", c.name}, {"type", c.type.to_string()}};
    switch (c.kind) {
      case CatalogColumn::Kind::kPhysical: jc["kind"] = "physical"; break;
      case CatalogColumn::Kind::kComputed: jc["kind"] = "computed"; jc["expr"] = c.expr_sql; break;
      case CatalogColumn::Kind::kMetadata:
        jc["kind"] = "metadata";
        jc["metadata_key"] = opt_json(c.metadata_key);
        jc["virtual"] = c.is_virtual;
        break;
    }
    if (!c.comment.empty()) jc["comment"] = c.comment;
    cols.push_back(jc);
  }
  nlohmann::json opts = nlohmann::json::array();
  for (const auto& [k, v] : t.options) opts.push_back({k, v});
  nlohmann::json j = {{"kind", "table"}, {"name", t.name}, {"columns", cols}, {"options", opts},
                      {"primary_key", t.primary_key}, {"primary_key_name", t.primary_key_name},
                      {"partitioned_by", t.partitioned_by}, {"comment", t.comment}};
  if (t.watermark) j["watermark"] = {{"rowtime", t.watermark->rowtime_column}, {"expr", t.watermark->expr_sql}};
  if (t.analyzed_statistics.analyzed) {
    nlohmann::json cs = nlohmann::json::object();
    for (const auto& [name, s] : t.analyzed_statistics.columns)
      cs[name] = {{"ndv", opt_json(s.ndv)}, {"null_count", opt_json(s.null_count)}, {"min", opt_json(s.min)},
                  {"max", opt_json(s.max)}};
    j["statistics"] = {{"row_count", opt_json(t.analyzed_statistics.row_count)}, {"columns", cs}};
  }
  return j;
}

TableDef Catalog::table_from_json(const nlohmann::json& j) {
  TableDef t;
  t.name = j.at("name").get<std::string>();
  for (const auto& jc : j.at("columns")) {
    CatalogColumn c;
    c.name = jc.at("name").get<std::string>();
    c.type = parse_logical_type(jc.at("type").get<std::string>());
    std::string kind = jc.at("kind").get<std::string>();
    if (kind == "computed") {
      c.kind = CatalogColumn::Kind::kComputed;
      c.expr_sql = jc.at("expr").get<std::string>();
      c.expr = parse_expression(c.expr_sql);
    } else if (kind == "metadata") {
      c.kind = CatalogColumn::Kind::kMetadata;
      c.metadata_key = opt_from<std::string>(jc, "metadata_key");
      c.is_virtual = jc.value("virtual", false);
    }
    c.comment = jc.value("comment", "");
    t.columns.push_back(std::move(c));
  }
  for (const auto& kv : j.at("options")) t.options.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
  t.primary_key = j.value("primary_key", std::vector<std::string>{});
  t.primary_key_name = j.value("primary_key_name", "");
  t.partitioned_by = j.value("partitioned_by", std::vector<std::string>{});
  t.comment = j.value("comment", "");
  if (j.contains("watermark")) {
    WatermarkSpec w;
    w.rowtime_column = j["watermark"].at("rowtime").get<std::string>();
    w.expr_sql = j["watermark"].at("expr").get<std::string>();
    w.expr = parse_expression(w.expr_sql);
    t.watermark = std::move(w);
  }
  if (j.contains("statistics")) {
    t.analyzed_statistics.analyzed = true;
    t.analyzed_statistics.row_count = opt_from<std::int64_t>(j["statistics"], "row_count");
    for (const auto& [name, s] : j["statistics"].at("columns").items()) {
      ColumnStatistics cs;
      cs.ndv = opt_from<std::int64_t>(s, "ndv");
      cs.null_count = opt_from<std::int64_t>(s, "null_count");
      cs.min = opt_from<std::string>(s, "min");
      cs.max = opt_from<std::string>(s, "max");
      t.analyzed_statistics.columns[name] = cs;
    }
  }
  return t;
}

nlohmann::json Catalog::to_json(const ViewDef& v) {
  std::vector<nlohmann::json> cols;
  for (const auto& f : v.schema.fields()) cols.push_back({{"name", f.name}, {"type", f.type.to_string()}});
  return {{"kind", "view"}, {"name", v.name}, {"query", v.query_sql}, {"column_aliases", v.column_aliases},
          {"columns", cols}, {"comment", v.comment}};
}

ViewDef Catalog::view_from_json(const nlohmann::json& j) {
  ViewDef v;
  v.name = j.at("name").get<std::string>();
  v.query_sql = j.at("query").get<std::string>();
  v.query = parse_query(v.query_sql);
  v.column_aliases = j.value("column_aliases", std::vector<std::string>{});
  std::vector<RowField> fields;
  for (const auto& c : j.at("columns"))
    fields.push_back({c.at("name").get<std::string>(), parse_logical_type(c.at("type").get<std::string>())});
  v.schema = Schema(std::move(fields));
  v.comment = j.value("comment", "");
  return v;
}

nlohmann::json Catalog::to_json(const FunctionDef& f) {
  if (f.language == "WASM") {  // body_sql: the declaration with its module (catalog_ddl_wasm.cpp)
    std::vector<nlohmann::json> params;
    for (const auto& p : f.params) params.push_back({{"name", p.name}, {"type", p.type.to_string()}});
    return {{"kind", "function"}, {"name", f.name}, {"language", f.language}, {"params", params},
            {"returns", f.return_type.to_string()}, {"wasm", nlohmann::json::parse(f.body_sql)}};
  }
  if (!f.class_name.empty())
    return {{"kind", "function"}, {"name", f.name}, {"language", f.language}, {"class", f.class_name}};
  std::vector<nlohmann::json> params;
  for (const auto& p : f.params) params.push_back({{"name", p.name}, {"type", p.type.to_string()}});
  return {{"kind", "function"}, {"name", f.name}, {"language", f.language}, {"params", params},
          {"returns", f.return_type.to_string()}, {"body", f.body_sql}};
}

FunctionDef Catalog::function_from_json(const nlohmann::json& j) {
  FunctionDef f;
  f.name = j.at("name").get<std::string>();
  f.language = j.value("language", "SQL");
  if (f.language == "WASM") {
    for (const auto& p : j.at("params"))
      f.params.push_back({p.at("name").get<std::string>(), parse_logical_type(p.at("type").get<std::string>())});
    f.return_type = parse_logical_type(j.at("returns").get<std::string>());
    f.body_sql = j.at("wasm").dump();
    f.class_name = f.name;
    return f;
  }
  if (j.contains("class")) {
    f.class_name = j.at("class").get<std::string>();
    return f;
  }
  for (const auto& p : j.at("params"))
    f.params.push_back({p.at("name").get<std::string>(), parse_logical_type(p.at("type").get<std::string>())});
  f.return_type = parse_logical_type(j.at("returns").get<std::string>());
  f.body_sql = j.at("body").get<std::string>();
  f.body = parse_expression(f.body_sql);
  return f;
}

// ------------------------------------------------------------------ references

namespace {

struct RefCollector {
  std::set<std::string> ctes;
  std::vector<std::string> out;

  void add(const std::string& n) {
    if (ctes.count(n)) return;
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  void expr(const ast::ExprPtr& e) {
    if (!e) return;
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, ast::InSubquery>) {
            expr(n.value);
            query(*n.query);
          } else if constexpr (std::is_same_v<T, ast::Exists> || std::is_same_v<T, ast::ScalarSubquery>) {
            query(*n.query);
          } else if constexpr (std::is_same_v<T, ast::Unary>) {
            expr(n.operand);
          } else if constexpr (std::is_same_v<T, ast::Binary>) {
            expr(n.left);
            expr(n.right);
          } else if constexpr (std::is_same_v<T, ast::FunctionCall>) {
            for (const auto& a : n.args) expr(a);
            expr(n.filter);
          } else if constexpr (std::is_same_v<T, ast::Case>) {
            expr(n.operand);
            for (const auto& w : n.whens) {
              expr(w.when);
              expr(w.then);
            }
            expr(n.otherwise);
          } else if constexpr (std::is_same_v<T, ast::InList>) {
            expr(n.value);
            for (const auto& a : n.list) expr(a);
          } else if constexpr (std::is_same_v<T, ast::Between>) {
            expr(n.value);
            expr(n.low);
            expr(n.high);
          } else if constexpr (std::is_same_v<T, ast::Cast>) {
            expr(n.value);
          } else if constexpr (std::is_same_v<T, ast::IsTest>) {
            expr(n.operand);
          }
        },
        e->node);
  }
  void table(const ast::TableRef& t) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, ast::NamedTable>) {
            if (!n.name.empty()) add(n.name.back());
          } else if constexpr (std::is_same_v<T, ast::DerivedTable>) {
            query(*n.query);
          } else if constexpr (std::is_same_v<T, ast::WindowTvf>) {
            for (const auto& a : n.args)
              if (a.kind == ast::TvfArg::Kind::Table && !a.table.empty()) add(a.table.back());
          } else if constexpr (std::is_same_v<T, ast::TableFunction>) {
            for (const auto& a : n.args) expr(a);
          } else if constexpr (std::is_same_v<T, ast::MatchRecognize>) {
            table(*n.input);
            for (const auto& e : n.partition_by) expr(e);
            for (const auto& i : n.measures) expr(i.expr);
            for (const auto& d : n.define) expr(d.condition);
          } else if constexpr (std::is_same_v<T, ast::Join>) {
            table(*n.left);
            table(*n.right);
            expr(n.on);
          }
        },
        t.node);
  }
  void query(const ast::Query& q) {
    std::set<std::string> saved = ctes;
    for (const auto& c : q.with) {
      query(*c.query);
      ctes.insert(c.name);
    }
    std::visit(
        [&](const auto& b) {
          using T = std::decay_t<decltype(b)>;
          if constexpr (std::is_same_v<T, ast::Select>) {
            for (const auto& f : b.from) table(*f);
            for (const auto& i : b.items) expr(i.expr);
            expr(b.where);
            expr(b.having);
          } else if constexpr (std::is_same_v<T, ast::SetOperation>) {
            query(*b.left);
            query(*b.right);
          }
        },
        q.body);
    ctes = std::move(saved);
  }
};

}  // namespace

std::vector<std::string> referenced_tables(const ast::Query& query) {
  RefCollector c;
  c.query(query);
  return c.out;
}

}  // namespace clink::sql

namespace clink::sql {


}  // namespace clink::sql
