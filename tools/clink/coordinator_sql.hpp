#pragma once
// The coordinator's SQL (POST /api/v1/jobs/sql): one catalog for every script submitted
// to it, its DDL kept in the HA catalog store, so a standby that becomes leader has every
// CREATE TABLE / VIEW / FUNCTION its predecessor had; each INSERT or statement set of a
// script is planned here and submitted as a job.
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/cluster/ha/ha_services.hpp"
#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/sql/catalog/catalog.hpp"

namespace clink::cli {

class CoordinatorSql {
 public:
  // Loads the catalog from `store` (what earlier leaders kept).
  CoordinatorSql(cluster::Dispatcher& dispatcher, cluster::CatalogStore& store);
  // Runs the script's statements in order; the ids of the jobs it submitted. Throws
  // BadRequestError with the failing statement's position.
  std::vector<std::string> run(const std::string& script, const nlohmann::json& options);

  // For the SQL gateway's sessions (gateway_backend.hpp): each runs its statements over
  // this catalog with mutex() held, then save()s it.
  sql::Catalog& catalog() { return catalog_; }
  std::mutex& mutex() { return mu_; }
  cluster::Dispatcher& dispatcher() { return dispatcher_; }
  void save();  // the catalog's objects into the store (leader only)

 private:

  cluster::Dispatcher& dispatcher_;
  cluster::CatalogStore& store_;
  std::mutex mu_;  // one script at a time
  sql::Catalog catalog_;
};

}  // namespace clink::cli
