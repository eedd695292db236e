#pragma once
// Materialized tables (Flink 2.x) and materialized views (the seed's spelling): one
// mechanism. A materialized table is a backing table in the catalog (readable as a
// source like any table) plus its definition: the query, the freshness, the refresh mode
// and its status, kept in `materialized/<name>.json` of the catalog directory (in memory
// without one). See docs/materialized-tables.md.
//
//   CONTINUOUS  a maintenance job INSERTs the query into the backing: the filesystem sink
//               (append) for an insert-only query, the filesystem-snapshot sink keyed by
//               the primary key (declared, else the GROUP BY's) for an updating one.
//   FULL        a bounded recompute writes a staging snapshot; the backing is then
//               replaced atomically: one file rename, or the partition directories
//               swapped as a directory (renameat2 RENAME_EXCHANGE).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/common/session_config.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/parser/ast.hpp"

namespace clink::sql {

struct MaterializedTableDef {
  std::string name;
  bool view = false;              // created as MATERIALIZED VIEW
  std::string query_sql;          // the defining query as written
  std::int64_t freshness_ms = 0;
  std::string refresh_mode;       // CONTINUOUS / FULL
  std::string status = "ACTIVATED";  // ACTIVATED / SUSPENDED
  std::string path;               // the backing's directory
  std::vector<std::string> partitioned_by;
  std::vector<std::string> primary_key;
  bool snapshot = false;          // the backing is written by the snapshot sink
  bool default_path = false;      // the path is under the catalog directory (dropped with it)
  std::int64_t last_refresh_ms = 0;  // the last completed full refresh (epoch ms)
  std::int64_t refreshes = 0;

  bool full() const { return refresh_mode == "FULL"; }
  nlohmann::json to_json() const;
  static MaterializedTableDef from_json(const nlohmann::json& j);
};

// Runs a job to completion (throws when it fails or was stopped).
using MaterializedJobRunner = std::function<void(const nlohmann::json& spec, const ast::Statement& statement)>;

class MaterializedTables {
 public:
  MaterializedTables(Catalog& catalog, const FunctionRegistry& registry, const SessionConfig& session)
      : catalog_(catalog), registry_(registry), session_(session) {}

  // CREATE / ALTER / REFRESH / DROP; jobs go to `run`. Throws TranslationError with the
  // statement's positions.
  void execute(const ast::MaterializedTable& stmt, const ast::Statement& statement, const MaterializedJobRunner& run);

  // A full refresh of `name` (the scheduler's, and ALTER ... REFRESH's): a bounded
  // recompute, then the atomic swap. `partition`: (column, value) pairs, a prefix of the
  // partition keys.
  void refresh(const std::string& name, const std::vector<std::pair<std::string, std::string>>& partition,
               const ast::Statement& statement, const MaterializedJobRunner& run);

  std::optional<MaterializedTableDef> find(const std::string& name) const;
  std::vector<MaterializedTableDef> all() const;

  // SHOW MATERIALIZED TABLES and SHOW CREATE MATERIALIZED TABLE, in the SQL client's
  // table format (materialized_table_show.cpp).
  std::string show(const ast::Show& stmt, SourcePosition pos) const;

 private:
  void create(const ast::MaterializedTable& stmt, const ast::Statement& statement, const MaterializedJobRunner& run);
  void alter_query(MaterializedTableDef def, const ast::MaterializedTable& stmt, const ast::Statement& statement,
                   const MaterializedJobRunner& run);
  void run_continuous(const MaterializedTableDef& def, const ast::Statement& statement, const MaterializedJobRunner& run);
  nlohmann::json plan_insert(const MaterializedTableDef& def, ast::QueryPtr query, const std::vector<ast::Property>& hints,
                             SourcePosition pos, const std::string& job_name) const;
  void save(const MaterializedTableDef& def);
  void remove(const std::string& name);

  Catalog& catalog_;
  const FunctionRegistry& registry_;
  const SessionConfig& session_;
  std::map<std::string, MaterializedTableDef> memory_;  // without a catalog directory
};

// "30 min", "1 h", "90s", "180000" (ms): Flink's duration option values.
std::int64_t parse_duration_ms(const std::string& text);

}  // namespace clink::sql
