#include "pg_replication.hpp"

#include <poll.h>

#include <fmt/format.h>
#include <libpq-fe.h>

namespace clink::sql {

namespace {
PgConnectOptions replication_options(PgConnectOptions o) {
  o.replication = true;
  return o;
}
}  // namespace

PgReplicationConnection::PgReplicationConnection(PgConnectOptions options)
    : conn_(replication_options(std::move(options))), describe_(conn_.describe()) {}

PgReplicationConnection::~PgReplicationConnection() { release(); }

void PgReplicationConnection::release() {
  if (buffer_) PQfreemem(buffer_);
  buffer_ = nullptr;
}

PgReplicationConnection::CreatedSlot PgReplicationConnection::create_slot(const std::string& slot, bool export_snapshot) {
  const std::string sql = fmt::format("CREATE_REPLICATION_SLOT {} LOGICAL pgoutput (SNAPSHOT '{}')",
                                      quote_pg_identifier(slot), export_snapshot ? "export" : "nothing");
  PgResult r = conn_.exec(sql);
  if (r.rows() != 1 || r.columns() < 3)
    throw PgError(fmt::format("PostgreSQL {}: {} returned no slot", describe_, sql), "", false);
  CreatedSlot out;
  out.consistent_point = parse_pg_lsn(r.value(0, 1));
  if (!r.is_null(0, 2)) out.snapshot_name = std::string(r.value(0, 2));
  return out;
}

void PgReplicationConnection::start(const std::string& slot, PgLsn from, const std::string& publication) {
  // publication_names is a list of identifiers inside a string literal.
  const std::string sql =
      fmt::format("START_REPLICATION SLOT {} LOGICAL {} (proto_version '1', publication_names {})",
                  quote_pg_identifier(slot), format_pg_lsn(from), quote_pg_literal(quote_pg_identifier(publication)));
  PGresult* r = PQexec(conn_.raw(), sql.c_str());
  if (!r || PQresultStatus(r) != PGRES_COPY_BOTH) {
    PgError e = conn_.error(fmt::format("cannot start logical replication: {}", sql), r);
    PQclear(r);
    throw e;
  }
  PQclear(r);
  streaming_ = true;
}

bool PgReplicationConnection::next(std::string_view& bytes) {
  release();
  PGconn* c = conn_.raw();
  int n = PQgetCopyData(c, &buffer_, 1);
  if (n == 0) {
    if (!PQconsumeInput(c)) throw conn_.error("the replication stream broke");
    n = PQgetCopyData(c, &buffer_, 1);
  }
  if (n > 0) {
    bytes = std::string_view(buffer_, static_cast<std::size_t>(n));
    return true;
  }
  if (n == 0) return false;
  // -1: the COPY ended (the server stopped streaming); -2: an error.
  streaming_ = false;
  PGresult* r = PQgetResult(c);
  PgError e = conn_.error("the replication stream ended", r);
  PQclear(r);
  while ((r = PQgetResult(c)) != nullptr) PQclear(r);
  throw e;
}

void PgReplicationConnection::wait(int timeout_ms) {
  pollfd p{conn_.socket(), POLLIN, 0};
  ::poll(&p, 1, timeout_ms);
}

void PgReplicationConnection::send(std::string_view bytes) {
  PGconn* c = conn_.raw();
  if (PQputCopyData(c, bytes.data(), static_cast<int>(bytes.size())) != 1 || PQflush(c) != 0)
    throw conn_.error("cannot send a status update on the replication stream");
}

}  // namespace clink::sql
