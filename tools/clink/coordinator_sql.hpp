#pragma once
// The coordinator's SQL (POST /api/v1/jobs/sql): one catalog for every script submitted
// to it, its DDL kept in the HA catalog store, so a standby that becomes leader has every
// CREATE TABLE / VIEW / FUNCTION / MATERIALIZED TABLE its predecessor had; each INSERT or
// statement set of a script is planned here and submitted as a job.
//
// Materialized tables: the coordinator runs their jobs (a CONTINUOUS table's maintenance
// job is a job of its Dispatcher, cancelled by SUSPEND / DROP) and its refresh scheduler
// refreshes every FULL table on its freshness (refresh_scheduler.hpp), one refresh at a
// time with the catalog locked, so a statement waits for a refresh in progress. A refresh
// is a bounded job on the workers writing <path>.staging, swapped in by the coordinator
// when it finished: the backing's path must be one filesystem for both (as Flink's
// filesystem tables need). Refresh jobs are not kept in the HA job store: a new leader's
// scheduler runs the refresh again instead.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/cluster/ha/ha_services.hpp"
#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"

namespace clink::cli {

class RefreshScheduler;

// The option that marks a materialized table's refresh job (its table's name).
inline constexpr const char* kRefreshJobOption = "$internal.materialized-table.refresh";

class CoordinatorSql {
 public:
  // Loads the catalog from `store` (what earlier leaders kept).
  CoordinatorSql(cluster::Dispatcher& dispatcher, cluster::CatalogStore& store);
  ~CoordinatorSql();  // stops the refresh scheduler
  // Runs the script's statements in order; the ids of the jobs it submitted. Throws
  // BadRequestError with the failing statement's position.
  std::vector<std::string> run(const std::string& script, const nlohmann::json& options);

  // For the SQL gateway's sessions (gateway_backend.hpp): each runs its statements over
  // this catalog with mutex() held, then save()s it.
  sql::Catalog& catalog() { return catalog_; }
  std::mutex& mutex() { return mu_; }
  cluster::Dispatcher& dispatcher() { return dispatcher_; }
  void save();  // the catalog's objects into the store (leader only)

  // Makes `runner` keep materialized tables in this catalog and run their jobs on the
  // Dispatcher, submitted with `options()` (a session's SETs over the configuration).
  void prepare(sql::StatementRunner& runner, std::function<cluster::SubmitOptions()> options);

  // The refresh scheduler: started by the leader once it serves; stop_refreshing starts
  // no refresh after it (one in progress ends when the Dispatcher cancels its job).
  void start_refreshing();
  void stop_refreshing();

 private:
  cluster::Dispatcher& dispatcher_;
  cluster::CatalogStore& store_;
  std::mutex mu_;  // one script at a time
  sql::Catalog catalog_;
  std::shared_ptr<sql::MaterializedDefinitions> materialized_ = std::make_shared<sql::MaterializedDefinitions>();
  std::atomic<bool> stopping_{false};
  std::unique_ptr<RefreshScheduler> scheduler_;
};

}  // namespace clink::cli
