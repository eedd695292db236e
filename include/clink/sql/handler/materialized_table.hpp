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
#include <memory>
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
  // The scheduler's clock: the schedule time (a freshness boundary, epoch ms) of the last
  // periodic refresh, or when the schedule started (CREATE, RESUME). 0: not recorded
  // (a definition from before it existed: last_refresh_ms stands in).
  std::int64_t last_schedule_ms = 0;
  std::string job_id;  // a CONTINUOUS table's maintenance job on a coordinator ('' elsewhere)
  // 'partition.fields.<field>.date-formatter' options: (field, pattern), a FULL table's
  // periodic refresh recomputes that partition only (kept here: no connector takes them).
  std::vector<std::pair<std::string, std::string>> date_formatters;
  // RESUME WITH (...) of a FULL table: dynamic options of its periodic refreshes' sink
  // (Flink's ResumeRefreshWorkflow), until the next RESUME.
  std::vector<std::pair<std::string, std::string>> resume_options;
  // The creating session's table.local-time-zone ('' : UTC): the wall clock of the
  // schedule and of the date-formatter (Flink keeps the session's configuration with the
  // refresh workflow).
  std::string time_zone;

  bool full() const { return refresh_mode == "FULL"; }
  nlohmann::json to_json() const;
  static MaterializedTableDef from_json(const nlohmann::json& j);
};

// Runs a job to completion (throws when it fails or was stopped).
using MaterializedJobRunner = std::function<void(const nlohmann::json& spec, const ast::Statement& statement)>;

// How the jobs of materialized tables run where the statement runs.
//   run     a refresh (bounded): to completion, throwing when it fails; the swap follows.
//   start   a CONTINUOUS table's maintenance job; returns its job id, kept with the table
//           so SUSPEND / DROP / ALTER ... AS can cancel it (a coordinator submits it and
//           returns). Unset: `run` runs it in the foreground (`clink run`), id ''.
//   cancel  ends a started job (a coordinator's); unset where jobs run in the foreground.
struct MaterializedJobs {
  MaterializedJobRunner run;
  std::function<std::string(const nlohmann::json& spec, const ast::Statement& statement)> start;
  std::function<void(const std::string& job_id)> cancel;
};

// The definitions of a catalog without a directory, shared by the runners over it (a
// coordinator's sessions; it keeps them in its HA store).
using MaterializedDefinitions = std::map<std::string, MaterializedTableDef>;

class MaterializedTables {
 public:
  MaterializedTables(Catalog& catalog, const FunctionRegistry& registry, const SessionConfig& session)
      : catalog_(catalog), registry_(registry), session_(session), memory_(std::make_shared<MaterializedDefinitions>()) {}

  // Without a catalog directory the definitions live in `defs`, shared with other runners.
  void share_definitions(std::shared_ptr<MaterializedDefinitions> defs) { memory_ = std::move(defs); }

  // CREATE / ALTER / REFRESH / DROP; jobs go to `jobs`. Throws TranslationError with the
  // statement's positions.
  void execute(const ast::MaterializedTable& stmt, const ast::Statement& statement, const MaterializedJobs& jobs);

  // A full refresh of `name` (ALTER ... REFRESH's, and the scheduler's): a bounded
  // recompute, then the atomic swap. `partition`: (column, value) pairs, a prefix of the
  // partition keys.
  void refresh(const std::string& name, const std::vector<std::pair<std::string, std::string>>& partition,
               const ast::Statement& statement, const MaterializedJobRunner& run) {
    refresh(name, partition, statement, run, false);
  }

  // The scheduler (materialized_table_schedule.cpp). Flink's workflow scheduler runs a
  // FULL table's refresh on a cron made of its freshness: at every multiple of the
  // freshness in the creating session's time zone (table.local-time-zone). When the table sets
  // 'partition.fields.<f>.date-formatter', a periodic refresh recomputes only the
  // partition f = the schedule time minus the freshness, formatted so (the interval
  // that just ended); else the whole table.
  //
  // When the next periodic refresh of `def` falls due (epoch ms); INT64_MAX when none
  // (not FULL, or SUSPENDED).
  std::int64_t next_scheduled_refresh(const MaterializedTableDef& def) const;
  // Runs every refresh due at `now_ms`, one at a time (a refresh that fails is logged by
  // `failed` and not retried before the next boundary); returns when the next one falls
  // due (INT64_MAX: none). A refresh that overran its interval runs the latest missed
  // schedule once, at once (back to back, never overlapping).
  std::int64_t refresh_due(std::int64_t now_ms, const MaterializedJobRunner& run,
                           const std::function<void(const std::string& name, const std::exception*)>& done);

  std::optional<MaterializedTableDef> find(const std::string& name) const;
  std::vector<MaterializedTableDef> all() const;

  // SHOW MATERIALIZED TABLES and SHOW CREATE MATERIALIZED TABLE, in the SQL client's
  // table format (materialized_table_show.cpp).
  std::string show(const ast::Show& stmt, SourcePosition pos) const;

 private:
  void create(const ast::MaterializedTable& stmt, const ast::Statement& statement, const MaterializedJobs& jobs);
  // ALTER ... ADD / MODIFY / DROP (materialized_table_alter.cpp).
  void alter_schema(MaterializedTableDef def, const ast::MaterializedTable& stmt, const ast::Statement& statement,
                    const MaterializedJobs& jobs);
  // An activated CONTINUOUS table whose definition changed: its job is cancelled, the
  // backing cleared and a new job started from the sources (Flink's new refresh job does
  // not restore the old one's state either).
  void restart_continuous(MaterializedTableDef& def, const ast::Statement& statement, const MaterializedJobs& jobs);
  void alter_query(MaterializedTableDef def, const ast::MaterializedTable& stmt, const ast::Statement& statement,
                   const MaterializedJobs& jobs);
  // Starts the maintenance job (def.job_id: its id, saved) / cancels the one running.
  void run_continuous(MaterializedTableDef& def, const ast::Statement& statement, const MaterializedJobs& jobs);
  void stop_continuous(MaterializedTableDef& def, const MaterializedJobs& jobs);
  // periodic: the scheduler's (with the RESUME WITH options).
  void refresh(const std::string& name, const std::vector<std::pair<std::string, std::string>>& partition,
               const ast::Statement& statement, const MaterializedJobRunner& run, bool periodic);
  // RESUME WITH (...): the options a job of `def` may take as dynamic options of its sink.
  std::vector<ast::Property> resume_hints(const MaterializedTableDef& def, const std::vector<ast::Property>& options,
                                          SourcePosition pos) const;
  // The partition a periodic refresh at `schedule_ms` recomputes (date-formatter options).
  std::vector<std::pair<std::string, std::string>> scheduled_partition(const MaterializedTableDef& def,
                                                                       std::int64_t schedule_ms) const;
  nlohmann::json plan_insert(const MaterializedTableDef& def, ast::QueryPtr query, const std::vector<ast::Property>& hints,
                             SourcePosition pos, const std::string& job_name) const;
  void save(const MaterializedTableDef& def);
  void remove(const std::string& name);

  Catalog& catalog_;
  const FunctionRegistry& registry_;
  const SessionConfig& session_;
  std::shared_ptr<MaterializedDefinitions> memory_;  // without a catalog directory
};

// "30 min", "1 h", "90s", "180000" (ms): Flink's duration option values.
std::int64_t parse_duration_ms(const std::string& text);

}  // namespace clink::sql
