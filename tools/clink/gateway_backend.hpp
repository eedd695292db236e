#pragma once
// The coordinator's SQL gateway sessions (docs/sql-gateway.md): each session a
// StatementRunner (its SETs) over the coordinator's catalog (CoordinatorSql: shared with
// POST /jobs/sql, kept in the HA catalog store). DDL answers OK; an INSERT or statement
// set is submitted to the Dispatcher (the job runs on the workers) and answers its job
// id; a SELECT is a job of the Dispatcher too, its result sink a gateway_collect_sink
// (collect_sink.hpp) posting its rows from whichever worker runs it to `collect_url`
// (this gateway), where its operation serves them page by page.
#include <map>
#include <memory>
#include <string>

#include "clink/cluster/gateway/sql_gateway.hpp"
#include "coordinator_sql.hpp"

namespace clink::cli {

std::unique_ptr<cluster::gateway::SessionBackend> make_gateway_session(CoordinatorSql& sql, cluster::gateway::SqlGateway& gateway,
                                                                       const std::string& collect_url,
                                                                       const std::map<std::string, std::string>& properties);

}  // namespace clink::cli
