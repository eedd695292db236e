#include "clink/sql/handler/materialized_table.hpp"

#include <fcntl.h>
#include <stdio.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "clink/connectors/sql/sql_filesystem_sink.hpp"
#include "clink/sql/binder/binder.hpp"
#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/function/date_format.hpp"
#include "clink/sql/optimizer/optimizer.hpp"
#include "clink/sql/parser/parser.hpp"
#include "clink/sql/physical/physical_plan.hpp"
#include "clink/sql/planner/changelog_mode.hpp"
#include "clink/sql/planner/rank_plan.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDir = "materialized";
constexpr std::int64_t kDefaultThresholdMs = 30 * 60'000;   // materialized-table.refresh-mode.freshness-threshold
constexpr std::int64_t kDefaultContinuousMs = 3 * 60'000;   // materialized-table.default-freshness.continuous
constexpr std::int64_t kDefaultFullMs = 60 * 60'000;        // materialized-table.default-freshness.full

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t session_duration(const SessionConfig& s, const char* key, std::int64_t def, SourcePosition pos) {
  auto it = s.find(key);
  if (it == s.end()) return def;
  try {
    return parse_duration_ms(it->second);
  } catch (const std::exception& e) {
    throw TranslationError(pos, fmt::format("SET '{}' = '{}': {}", key, it->second, e.what()));
  }
}

std::optional<std::string> take(std::vector<ast::Property>& options, std::string_view key) {
  for (auto it = options.begin(); it != options.end(); ++it)
    if (it->key == key) {
      std::string v = it->value;
      options.erase(it);
      return v;
    }
  return std::nullopt;
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : list + ",") {
    if (ch == ',') {
      while (!cur.empty() && std::isspace(static_cast<unsigned char>(cur.back()))) cur.pop_back();
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (!(cur.empty() && std::isspace(static_cast<unsigned char>(ch)))) {
      cur += ch;
    }
  }
  return out;
}

// The tables a query reads, through views (for the FULL arm's boundedness check).
void collect_tables(const Catalog& catalog, const ast::Query& query, std::vector<const TableDef*>& out, int depth = 0) {
  for (const auto& name : referenced_tables(query)) {
    if (const auto* t = catalog.table(name)) out.push_back(t);
    else if (const auto* v = catalog.view(name); v && v->query && depth < 32) collect_tables(catalog, *v->query, out, depth + 1);
  }
}

// The GROUP BY columns a keyed aggregate's output carries (by their output names); empty
// when the query is not a single keyed GROUP BY selecting all of its key columns.
std::vector<std::string> group_by_key(const ast::Query& q, const Schema& out) {
  const auto* sel = std::get_if<ast::Select>(&q.body);
  if (!sel || sel->group_by.empty()) return {};
  std::vector<std::string> key;
  for (const auto& g : sel->group_by) {
    if (g.kind != ast::GroupingElement::Kind::Expression || !g.expr) return {};
    const auto* ref = g.expr->as<ast::ColumnRef>();
    if (!ref) return {};
    const std::string& col = ref->names.back();
    std::optional<std::string> found;
    for (const auto& item : sel->items) {
      const auto* r = item.expr ? item.expr->as<ast::ColumnRef>() : nullptr;
      if (r && r->names.back() == col) found = item.alias.value_or(col);
    }
    if (!found || !out.index_of(*found)) return {};
    key.push_back(*found);
  }
  return key;
}

ast::QueryPtr parse_stored_query(const std::string& sql) {
  ast::Script s = parse(sql);
  if (s.statements.size() != 1 || !s.statements[0].as<ast::QueryStatement>())
    throw TranslationError({}, "the stored query of a materialized table is not a query: " + sql);
  return s.statements[0].as<ast::QueryStatement>()->query;
}

// Replaces `target` by `staged` atomically: an exchange of the two names (so a reader
// sees one complete directory or the other), then the old one is removed.
void swap_directory(const fs::path& staged, const fs::path& target) {
  fs::create_directories(target.parent_path());
  if (!fs::exists(target)) {
    fs::rename(staged, target);
    return;
  }
  if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0)
    throw TranslationError({}, fmt::format("cannot swap {} into {}: {}", staged.string(), target.string(), std::strerror(errno)));
  fs::remove_all(staged);  // now the previous snapshot
}

// 'partition.fields.<field>.date-formatter' -> field.
std::optional<std::string> date_formatter_field(std::string_view key) {
  constexpr std::string_view prefix = "partition.fields.", suffix = ".date-formatter";
  if (key.size() <= prefix.size() + suffix.size() || key.substr(0, prefix.size()) != prefix ||
      key.substr(key.size() - suffix.size()) != suffix)
    return std::nullopt;
  return std::string(key.substr(prefix.size(), key.size() - prefix.size() - suffix.size()));
}

bool hidden_name(const fs::path& p) {
  auto n = p.filename().string();
  return !n.empty() && (n[0] == '.' || n[0] == '_');
}

// Empties a continuous table's backing directory for a job that computes it anew (hidden
// entries, the sink's own, stay).
void clear_backing(const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (!hidden_name(e.path())) fs::remove_all(e.path());
}

}  // namespace

std::int64_t parse_duration_ms(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::size_t b = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (b == i) throw std::invalid_argument("not a duration (e.g. '30 min', '1 h', '90 s')");
  const std::int64_t n = std::stoll(text.substr(b, i - b));
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit;
  for (; i < text.size(); ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  if (unit.empty() || unit == "ms" || unit == "milli" || unit == "millis" || unit == "millisecond" || unit == "milliseconds") return n;
  if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds") return n * 1000;
  if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" || unit == "minutes") return n * 60'000;
  if (unit == "h" || unit == "hour" || unit == "hours") return n * 3'600'000;
  if (unit == "d" || unit == "day" || unit == "days") return n * 86'400'000;
  throw std::invalid_argument("unknown time unit '" + unit + "' (ms, s, min, h, d)");
}

nlohmann::json MaterializedTableDef::to_json() const {
  return {{"name", name},         {"view", view},
          {"query", query_sql},   {"freshness_ms", freshness_ms},
          {"refresh_mode", refresh_mode}, {"status", status},
          {"path", path},         {"partitioned_by", partitioned_by},
          {"primary_key", primary_key},   {"snapshot", snapshot},
          {"default_path", default_path}, {"last_refresh_ms", last_refresh_ms},
          {"refreshes", refreshes},       {"last_schedule_ms", last_schedule_ms},
          {"job_id", job_id},             {"date_formatters", date_formatters},
          {"resume_options", resume_options}, {"time_zone", time_zone}};
}

MaterializedTableDef MaterializedTableDef::from_json(const nlohmann::json& j) {
  MaterializedTableDef d;
  d.name = j.at("name").get<std::string>();
  d.view = j.value("view", false);
  d.query_sql = j.at("query").get<std::string>();
  d.freshness_ms = j.value("freshness_ms", std::int64_t{0});
  d.refresh_mode = j.value("refresh_mode", "CONTINUOUS");
  d.status = j.value("status", "ACTIVATED");
  d.path = j.value("path", "");
  d.partitioned_by = j.value("partitioned_by", std::vector<std::string>{});
  d.primary_key = j.value("primary_key", std::vector<std::string>{});
  d.snapshot = j.value("snapshot", false);
  d.default_path = j.value("default_path", false);
  d.last_refresh_ms = j.value("last_refresh_ms", std::int64_t{0});
  d.refreshes = j.value("refreshes", std::int64_t{0});
  d.last_schedule_ms = j.value("last_schedule_ms", std::int64_t{0});
  d.job_id = j.value("job_id", "");
  d.date_formatters = j.value("date_formatters", std::vector<std::pair<std::string, std::string>>{});
  d.resume_options = j.value("resume_options", std::vector<std::pair<std::string, std::string>>{});
  d.time_zone = j.value("time_zone", "");
  return d;
}

std::optional<MaterializedTableDef> MaterializedTables::find(const std::string& name) const {
  if (catalog_.persistence_dir().empty()) {
    auto it = memory_->find(name);
    if (it == memory_->end()) return std::nullopt;
    return it->second;
  }
  fs::path p = fs::path(catalog_.persistence_dir()) / kDir / (name + ".json");
  std::ifstream in(p);
  if (!in) return std::nullopt;
  return MaterializedTableDef::from_json(nlohmann::json::parse(in));
}

std::vector<MaterializedTableDef> MaterializedTables::all() const {
  std::vector<MaterializedTableDef> out;
  if (catalog_.persistence_dir().empty()) {
    for (const auto& [n, d] : *memory_) out.push_back(d);
    return out;
  }
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(catalog_.persistence_dir()) / kDir, ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  for (const auto& n : names)
    if (auto d = find(n)) out.push_back(*d);
  return out;
}

void MaterializedTables::save(const MaterializedTableDef& def) {
  if (catalog_.persistence_dir().empty()) {
    (*memory_)[def.name] = def;
    return;
  }
  fs::path dir = fs::path(catalog_.persistence_dir()) / kDir;
  fs::create_directories(dir);
  fs::path tmp = dir / ("." + def.name + ".json.tmp");
  std::ofstream(tmp) << def.to_json().dump(2) << '\n';
  fs::rename(tmp, dir / (def.name + ".json"));  // a crash leaves the old definition or the new one
}

void MaterializedTables::remove(const std::string& name) {
  memory_->erase(name);
  if (!catalog_.persistence_dir().empty())
    fs::remove(fs::path(catalog_.persistence_dir()) / kDir / (name + ".json"));
}

nlohmann::json MaterializedTables::plan_insert(const MaterializedTableDef& def, ast::QueryPtr query,
                                               const std::vector<ast::Property>& hints, SourcePosition pos,
                                               const std::string& job_name) const {
  ast::Insert ins;
  ins.table = {def.name};
  ins.query = std::move(query);
  ins.pos = pos;
  if (!hints.empty()) ins.hints.push_back(ast::TableHint{"OPTIONS", hints, pos});
  Binder binder(catalog_, registry_, session_);
  LogicalPtr sink = binder.bind_insert(ins);
  OptimizerOptions options;
  if (auto tz = session_.find("table.local-time-zone"); tz != session_.end())
    options.session.time_zone = TimeZone::of(tz->second);
  sink = reuse_scans({optimize(sink, options)}).front();
  PhysicalPlanner planner(catalog_, session_);
  return planner.compile({sink}, job_name);
}

void MaterializedTables::execute(const ast::MaterializedTable& m, const ast::Statement& st, const MaterializedJobs& jobs) {
  using A = ast::MaterializedTable::Action;
  const std::string name = m.name.back();
  const char* kind = m.view ? "materialized view" : "materialized table";
  auto def = find(name);
  if (m.action == A::Create && !(m.or_alter && def)) return create(m, st, jobs);
  if (!def) {
    if (m.action == A::Drop && m.if_exists) return;
    if (catalog_.has(name))
      throw TranslationError(st.pos, fmt::format("{} `{}` is not a {}", to_string(*catalog_.kind_of(name)), name, kind));
    throw TranslationError(st.pos, fmt::format("{} `{}` does not exist", m.view ? "Materialized view" : "Materialized table", name));
  }
  switch (m.action) {
    case A::Create:  // CREATE OR ALTER of an existing table
    case A::AlterQuery: return alter_query(std::move(*def), m, st, jobs);
    case A::AlterSchema: return alter_schema(std::move(*def), m, st, jobs);
    case A::Drop:  // the refresh pipeline first, as Flink's
      stop_continuous(*def, jobs);
      catalog_.remove(ObjectKind::kTable, name);
      remove(name);
      if (def->default_path) fs::remove_all(def->path);
      return;
    case A::Suspend:
      if (def->status == "SUSPENDED")
        throw TranslationError(st.pos, fmt::format("Materialized table `{}` is already suspended", name));
      def->status = "SUSPENDED";
      stop_continuous(*def, jobs);  // saves
      return;
    case A::Resume:
      if (def->status == "ACTIVATED")
        throw TranslationError(st.pos, fmt::format("Materialized table `{}` is not suspended", name));
      def->status = "ACTIVATED";
      def->last_schedule_ms = now_ms();  // the schedule goes on from here (no catch-up)
      def->resume_options.clear();
      for (const auto& p : resume_hints(*def, m.options, st.pos)) def->resume_options.emplace_back(p.key, p.value);
      if (!def->full()) def->resume_options.clear();  // the new job's only (run_continuous takes them from the statement)
      save(*def);
      // No savepoint of the suspended job: the maintenance job recomputes the backing
      // from the sources (see docs/materialized-tables.md).
      if (!def->full()) {
        clear_backing(def->path);  // the resumed job computes the backing from the sources again
        run_continuous(*def, st, jobs);
      }
      return;
    case A::Refresh: {
      std::vector<std::pair<std::string, std::string>> partition;
      for (const auto& p : m.partition) partition.emplace_back(p.key, p.value);
      return refresh(name, partition, st, jobs.run);
    }
  }
}

void MaterializedTables::create(const ast::MaterializedTable& m, const ast::Statement& st, const MaterializedJobs& jobs) {
  const std::string name = m.name.back();
  const char* kind = m.view ? "materialized view" : "materialized table";
  if (catalog_.has(name) || find(name)) {
    if (m.if_not_exists) return;
    throw TranslationError(st.pos, fmt::format("Could not execute CREATE {}: {} `{}` already exists",
                                               m.view ? "MATERIALIZED VIEW" : "MATERIALIZED TABLE", kind, name));
  }
  std::vector<ast::Property> options = m.options;
  MaterializedTableDef def;
  def.name = name;
  def.view = m.view;
  def.query_sql = m.query_sql;
  def.partitioned_by = m.partitioned_by;
  if (m.primary_key) def.primary_key = m.primary_key->columns;
  // The seed's WITH spellings: freshness ('0' / 'continuous': the continuous arm, an
  // interval: the full arm), partition_by, primary_key.
  std::optional<std::int64_t> freshness = m.freshness_ms;
  std::string mode = m.refresh_mode;
  if (auto f = take(options, "freshness")) {
    std::string v = *f;
    for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (v == "0" || v == "continuous") {
      mode = "CONTINUOUS";
    } else {
      try {
        freshness = parse_duration_ms(v.find_first_not_of("0123456789") == std::string::npos ? v + "s" : v);
      } catch (const std::exception& e) {
        throw TranslationError(st.pos, fmt::format("{} `{}`: 'freshness' = '{}': {}", kind, name, *f, e.what()));
      }
      mode = "FULL";
    }
  }
  if (auto p = take(options, "partition_by")) def.partitioned_by = split_names(*p);
  if (auto p = take(options, "primary_key")) def.primary_key = split_names(*p);
  take(options, "mode");  // the seed's 'upsert': derived from the query here
  for (auto it = options.begin(); it != options.end();) {
    if (auto field = date_formatter_field(it->key)) {
      def.date_formatters.emplace_back(*field, it->value);
      it = options.erase(it);
    } else {
      ++it;
    }
  }
  // Flink's derivation: a freshness below the threshold is CONTINUOUS, else FULL.
  if (mode.empty()) {
    const auto threshold = session_duration(session_, "materialized-table.refresh-mode.freshness-threshold",
                                            kDefaultThresholdMs, st.pos);
    mode = freshness && *freshness >= threshold ? "FULL" : "CONTINUOUS";
  }
  def.refresh_mode = mode;
  def.freshness_ms = freshness ? *freshness
                               : (mode == "FULL" ? session_duration(session_, "materialized-table.default-freshness.full", kDefaultFullMs, st.pos)
                                                 : session_duration(session_, "materialized-table.default-freshness.continuous", kDefaultContinuousMs, st.pos));

  // The query's schema and changelog decide the backing.
  Binder binder(catalog_, registry_, session_);
  LogicalPtr q = plan_unfiltered_ranks(binder.bind_select(*m.query));  // its changelog mode is read unoptimised
  ChangelogMode cm = changelog_mode(*q);
  for (const auto& p : def.partitioned_by)
    if (!q->schema.index_of(p))
      throw TranslationError(st.pos, fmt::format("{} `{}`: the partition column `{}` is not a column of the query", kind, name, p));
  for (const auto& k : def.primary_key)
    if (!q->schema.index_of(k))
      throw TranslationError(m.primary_key ? m.primary_key->pos : st.pos,
                             fmt::format("{} `{}`: the primary key column `{}` is not a column of the query", kind, name, k));
  if (cm.updating() && def.primary_key.empty()) {
    def.primary_key = group_by_key(*m.query, q->schema);
    if (def.primary_key.empty()) {
      SourcePosition at = cm.producer && cm.producer->pos.known() ? cm.producer->pos : m.query_pos;
      // Only an aggregate without keys is a global aggregate (an OVER aggregate or a
      // non-windowed ORDER BY also updates without a GROUP BY).
      const bool global = cm.producer && cm.producer->kind == LogicalKind::kAggregate &&
                          static_cast<const LogicalAggregate&>(*cm.producer).keys.empty();
      if (global)
        throw TranslationError(at, fmt::format("{} `{}`: the query is a global aggregate (no GROUP BY key): its one row "
                                               "is updated in place and the backing has no key to upsert it by; add a "
                                               "GROUP BY or declare PRIMARY KEY (..) NOT ENFORCED",
                                               kind, name));
      throw TranslationError(at, fmt::format("{} `{}`: the query produces updates ({}) and no key is known: declare "
                                             "PRIMARY KEY (..) NOT ENFORCED",
                                             kind, name, cm.producer ? construct_name(*cm.producer) : "a changelog"));
    }
  }
  std::string connector = take(options, "connector").value_or("filesystem");
  if (mode == "FULL") {
    if (connector != "filesystem" && connector != "filesystem-snapshot")
      throw TranslationError(st.pos, fmt::format("{} `{}`: a FULL refresh swaps files: the backing's connector must be "
                                                 "filesystem, got '{}'", kind, name, connector));
    std::vector<const TableDef*> sources;
    collect_tables(catalog_, *m.query, sources);
    for (const auto* t : sources)
      if (!sql_source_bounded(t->connector(), t->options)) {
        const auto* c = find_sql_connector(t->connector());
        std::string when = c && c->bounded ? fmt::format("a {} table is bounded {}", c->name, c->bounded_when)
                                           : fmt::format("a {} table never is", t->connector());
        throw TranslationError(m.query_pos, fmt::format("{} `{}`: REFRESH_MODE = FULL recomputes the query over bounded "
                                                        "sources, but `{}` ({}) is unbounded ({}); use "
                                                        "REFRESH_MODE = CONTINUOUS or a bounded source",
                                                        kind, name, t->name, t->connector(), when));
      }
  }
  const bool file_backed = connector == "filesystem" || connector == "filesystem-snapshot";
  def.snapshot = file_backed && (mode == "FULL" || cm.updating() || connector == "filesystem-snapshot");
  if (file_backed) {
    auto path = take(options, "path");
    if (!path) {
      if (catalog_.persistence_dir().empty())
        throw TranslationError(st.pos, fmt::format("{} `{}` needs a 'path' option for its backing files (or a catalog "
                                                   "directory, --catalog-dir, to keep them in)", kind, name));
      path = (fs::path(catalog_.persistence_dir()) / kDir / name).string();
      def.default_path = true;
    }
    if (path->rfind("file://", 0) == 0) path->erase(0, 7);
    while (path->size() > 1 && path->back() == '/') path->pop_back();
    def.path = *path;
    if (auto f = take(options, "format"); f && *f != "json")
      throw TranslationError(st.pos, fmt::format("{} `{}`: the backing's format is json, got '{}'", kind, name, *f));
  }

  TableDef t;
  t.name = name;
  for (const auto& f : q->schema.fields()) t.columns.push_back({f.name, CatalogColumn::Kind::kPhysical, f.type});
  t.primary_key = def.primary_key;
  if (!t.primary_key.empty()) {
    t.primary_key_name = m.primary_key && !m.primary_key->constraint_name.empty() ? m.primary_key->constraint_name
                                                                                  : "PK_" + name;
    for (auto& c : t.columns)  // a key column is NOT NULL, as Flink's
      if (std::find(t.primary_key.begin(), t.primary_key.end(), c.name) != t.primary_key.end()) c.type = c.type.with_nullable(false);
  }
  t.partitioned_by = def.partitioned_by;
  t.comment = m.comment;
  t.options.emplace_back("connector", file_backed ? "filesystem" : connector);
  if (file_backed) {
    t.options.emplace_back("path", def.path);
    t.options.emplace_back("format", "json");
  }
  for (const auto& p : options) t.options.emplace_back(p.key, p.value);
  for (const auto& [field, pattern] : def.date_formatters) {
    auto index = q->schema.index_of(field);
    if (std::find(def.partitioned_by.begin(), def.partitioned_by.end(), field) == def.partitioned_by.end() || !index)
      throw TranslationError(st.pos, fmt::format("{} `{}`: 'partition.fields.{}.date-formatter' names `{}`, which is not "
                                                 "a partition key ({})", kind, name, field, field,
                                                 fmt::join(def.partitioned_by, ", ")));
    if (!q->schema.type(*index).is_character_string())
      throw TranslationError(st.pos, fmt::format("{} `{}`: the partition key `{}` of 'partition.fields.{}.date-formatter' "
                                                 "must be a string column, it is {}", kind, name, field, field,
                                                 q->schema.type(*index).to_string()));
    try {
      DateFormatter check(pattern);
    } catch (const std::exception& e) {
      throw TranslationError(st.pos, fmt::format("{} `{}`: 'partition.fields.{}.date-formatter' = '{}': {}", kind, name,
                                                 field, pattern, e.what()));
    }
  }
  if (file_backed) fs::create_directories(def.path);
  catalog_.add_table(t);
  def.last_schedule_ms = now_ms();
  if (auto tz = session_.find("table.local-time-zone"); tz != session_.end()) def.time_zone = tz->second;
  save(def);
  try {
    if (def.full()) refresh(name, {}, st, jobs.run);  // the initial population
    else run_continuous(def, st, jobs);
  } catch (...) {
    if (!def.full()) throw;  // a continuous job that failed leaves the table, as Flink's
    catalog_.remove(ObjectKind::kTable, name);
    remove(name);
    if (def.default_path) fs::remove_all(def.path);
    throw;
  }
}

// ALTER MATERIALIZED TABLE t AS <query>, and CREATE OR ALTER of an existing t: Flink's
// schema evolution (the original columns in order, with their types, then new nullable
// ones at the end). A FULL table's next refresh runs the new query; an activated
// continuous table's job restarts on it from the sources (Flink's new refresh job does
// not restore the old one's state either) and rebuilds the backing, so no row is kept
// twice.
void MaterializedTables::alter_query(MaterializedTableDef def, const ast::MaterializedTable& m, const ast::Statement& st,
                                     const MaterializedJobs& jobs) {
  const std::string& name = def.name;
  if (m.action == ast::MaterializedTable::Action::Create) {  // CREATE OR ALTER: only the query may change
    auto changed = [&](const char* what) {
      return TranslationError(st.pos, fmt::format("CREATE OR ALTER MATERIALIZED TABLE `{}`: the {} of an existing "
                                                  "materialized table cannot be changed (only its query)", name, what));
    };
    if (m.freshness_ms && *m.freshness_ms != def.freshness_ms) throw changed("FRESHNESS");
    if (!m.refresh_mode.empty() && m.refresh_mode != def.refresh_mode) throw changed("REFRESH_MODE");
    if (m.partitioned_by != def.partitioned_by) throw changed("partition keys");
    if (m.primary_key && m.primary_key->columns != def.primary_key) throw changed("primary key");
  }
  const TableDef* backing = catalog_.table(name);
  if (!backing) throw TranslationError(st.pos, fmt::format("Materialized table `{}` has no backing table", name));
  Binder binder(catalog_, registry_, session_);
  LogicalPtr q = plan_unfiltered_ranks(binder.bind_select(*m.query));  // its changelog mode is read unoptimised
  const auto& fields = q->schema.fields();
  const auto& columns = backing->columns;
  if (fields.size() < columns.size())
    throw TranslationError(m.query_pos, fmt::format("Failed to modify query because drop column is unsupported. When "
                                                    "modifying a query, you can only append new columns at the end of "
                                                    "original schema. The original schema has {} columns, but the newly "
                                                    "derived schema from the query has {} columns.",
                                                    columns.size(), fields.size()));
  TableDef next = *backing;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& f = fields[i];
    if (i < columns.size()) {
      const auto& c = columns[i];
      // A key column is stored NOT NULL; the query's may be nullable.
      if (f.name != c.name || f.type.with_nullable(true) != c.type.with_nullable(true))
        throw TranslationError(m.query_pos, fmt::format("When modifying the query of a materialized table, currently "
                                                        "only support appending columns at the end of original schema, "
                                                        "dropping, renaming, and reordering columns are not supported.\n"
                                                        "Column mismatch at position {}: Original column is [`{}` {}], "
                                                        "but new column is [`{}` {}].",
                                                        i, c.name, c.type.to_string(), f.name, f.type.to_string()));
    } else {
      if (!f.type.nullable())
        throw TranslationError(m.query_pos, fmt::format("Materialized table `{}`: the new column `{}` {} must be "
                                                        "nullable (rows written before it have no value)",
                                                        name, f.name, f.type.to_string()));
      next.columns.push_back({f.name, CatalogColumn::Kind::kPhysical, f.type});
    }
  }
  if (changelog_mode(*q).updating() && !def.snapshot)
    throw TranslationError(m.query_pos, fmt::format("Materialized table `{}` is appended to: its new query must be "
                                                    "insert-only as its first was, but it produces updates", name));
  catalog_.replace_table(name, std::move(next));
  def.query_sql = m.query_sql;
  save(def);
  restart_continuous(def, st, jobs);
}

void MaterializedTables::restart_continuous(MaterializedTableDef& def, const ast::Statement& st, const MaterializedJobs& jobs) {
  if (def.full() || def.status != "ACTIVATED") return;
  stop_continuous(def, jobs);
  clear_backing(def.path);
  run_continuous(def, st, jobs);
}

void MaterializedTables::run_continuous(MaterializedTableDef& def, const ast::Statement& st, const MaterializedJobs& jobs) {
  std::vector<ast::Property> hints;
  if (def.snapshot) {  // the backing is read as filesystem, written by the snapshot sink
    hints.push_back({"connector", "filesystem-snapshot", st.pos});
    hints.push_back({"sink.parallelism", "1", st.pos});
  }
  ast::QueryPtr query = parse_stored_query(def.query_sql);
  const auto* m = st.as<ast::MaterializedTable>();
  if (m && m->query) query = m->query;  // positions as written
  // RESUME WITH (...): dynamic options of this job's sink only (Flink does not keep them).
  if (m && m->action == ast::MaterializedTable::Action::Resume)
    for (auto& p : resume_hints(def, m->options, st.pos)) hints.push_back(std::move(p));
  nlohmann::json spec = plan_insert(def, query, hints, st.pos, "materialized-table_" + def.name);
  if (!jobs.start) return jobs.run(spec, st);  // in the foreground, until it ends
  def.job_id = jobs.start(spec, st);
  save(def);
}

void MaterializedTables::stop_continuous(MaterializedTableDef& def, const MaterializedJobs& jobs) {
  if (!def.job_id.empty() && jobs.cancel) jobs.cancel(def.job_id);
  def.job_id.clear();
  save(def);
}

std::vector<ast::Property> MaterializedTables::resume_hints(const MaterializedTableDef& def,
                                                           const std::vector<ast::Property>& options, SourcePosition pos) const {
  std::vector<ast::Property> out;
  for (const auto& p : options) {
    const SourcePosition at = p.pos.known() ? p.pos : pos;
    if (p.key == "connector" || p.key == "path" || p.key == "format")
      throw TranslationError(at, fmt::format("ALTER MATERIALIZED TABLE `{}` RESUME WITH: '{}' is the backing's own and "
                                             "cannot be a dynamic option", def.name, p.key));
    if (p.key == "sink.parallelism" && def.snapshot && p.value != "1")
      throw TranslationError(at, fmt::format("ALTER MATERIALIZED TABLE `{}` RESUME WITH: 'sink.parallelism' = '{}': "
                                             "the backing's snapshot is written at parallelism 1 (one file per "
                                             "partition, replaced as a whole)", def.name, p.value));
    if (p.key == "sink.parallelism" && def.snapshot) continue;  // '1', as it is anyway
    out.push_back(p);
  }
  return out;
}

void MaterializedTables::refresh(const std::string& name, const std::vector<std::pair<std::string, std::string>>& partition,
                                 const ast::Statement& st, const MaterializedJobRunner& run, bool periodic) {
  auto def = find(name);
  if (!def) throw TranslationError(st.pos, fmt::format("Materialized table `{}` does not exist", name));
  if (def->path.empty())
    throw TranslationError(st.pos, fmt::format("Materialized table `{}` is not backed by files: only its continuous job maintains it", name));
  // PARTITION (k = 'v'): a prefix of the partition keys, in any order.
  std::string subdir, filter;
  for (std::size_t i = 0; i < partition.size(); ++i) {
    if (i >= def->partitioned_by.size())
      throw TranslationError(st.pos, fmt::format("Materialized table `{}`: PARTITION names more columns than its partition keys ({})",
                                                 name, fmt::join(def->partitioned_by, ", ")));
    const std::string& key = def->partitioned_by[i];
    auto it = std::find_if(partition.begin(), partition.end(), [&](const auto& p) { return p.first == key; });
    if (it == partition.end())
      throw TranslationError(st.pos, fmt::format("Materialized table `{}`: PARTITION must name a prefix of its partition keys ({})",
                                                 name, fmt::join(def->partitioned_by, ", ")));
    subdir += "/" + key + "=" + escape_partition_value(it->second);
    filter += fmt::format("{}CAST({} AS STRING) = {}", i ? " AND " : "", ast::quote_identifier(key), ast::quote_string(it->second));
  }
  for (const auto& [k, v] : partition)
    if (std::find(def->partitioned_by.begin(), def->partitioned_by.end(), k) == def->partitioned_by.end())
      throw TranslationError(st.pos, fmt::format("Materialized table `{}`: `{}` is not a partition key", name, k));
  ast::QueryPtr query;
  const auto* m = st.as<ast::MaterializedTable>();
  if (!filter.empty()) query = parse_stored_query(fmt::format("SELECT * FROM ({}) AS `__refresh` WHERE {}", def->query_sql, filter));
  else if (m && m->query) query = m->query;
  else query = parse_stored_query(def->query_sql);

  const fs::path staging = def->path + ".staging";
  fs::remove_all(staging);
  std::vector<ast::Property> hints = {{"connector", "filesystem-snapshot", st.pos},
                                      {"path", staging.string(), st.pos},
                                      {"sink.parallelism", "1", st.pos}};
  if (periodic)
    for (const auto& [k, v] : def->resume_options) hints.push_back({k, v, st.pos});
  try {
    run(plan_insert(*def, query, hints, st.pos, "refresh_" + name), st);
  } catch (...) {
    fs::remove_all(staging);  // the backing is untouched
    throw;
  }
  const fs::path target(def->path);
  if (!subdir.empty()) {
    fs::path from = staging.string() + subdir, to = target.string() + subdir;
    if (fs::exists(from)) swap_directory(from, to);
    else fs::remove_all(to);  // the partition has no rows now
  } else if (!def->partitioned_by.empty()) {
    swap_directory(staging, target);
  } else {
    // One file: renamed over the backing's; other files (an append job's) then go.
    fs::create_directories(target);
    fs::rename(staging / "part-0.json", target / "part-0.json");
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(target, ec))
      if (!hidden_name(e.path()) && e.path().filename() != "part-0.json") fs::remove_all(e.path());
  }
  fs::remove_all(staging);
  def->last_refresh_ms = now_ms();
  ++def->refreshes;
  save(*def);
}

}  // namespace clink::sql
