#pragma once
// A logical replication connection (replication=database) over libpq: creating a slot
// (with an exported snapshot), and the COPY BOTH stream START_REPLICATION opens. The
// pgoutput bytes it hands out are decoded by pgoutput.hpp. Private to src/ (the source
// reader uses it); libpq itself stays in the .cpp.
#include <cstdint>
#include <string>
#include <string_view>

#include "clink/connectors/jdbc/pg_connection.hpp"
#include "clink/connectors/jdbc/pgoutput.hpp"

namespace clink::sql {

class PgReplicationConnection {
 public:
  // Connects with replication=database (PgConnectOptions::replication set here).
  explicit PgReplicationConnection(PgConnectOptions options);
  ~PgReplicationConnection();
  PgReplicationConnection(const PgReplicationConnection&) = delete;
  PgReplicationConnection& operator=(const PgReplicationConnection&) = delete;

  struct CreatedSlot {
    PgLsn consistent_point = 0;  // the stream starts here; the snapshot holds what committed before
    std::string snapshot_name;   // SET TRANSACTION SNAPSHOT '<it>' (empty when not exported)
  };
  // CREATE_REPLICATION_SLOT "slot" LOGICAL pgoutput (SNAPSHOT 'export' | 'nothing'). An
  // exported snapshot stays importable until this connection's next command.
  CreatedSlot create_slot(const std::string& slot, bool export_snapshot);

  // START_REPLICATION SLOT "slot" LOGICAL <from> (proto_version '1', publication_names '..').
  void start(const std::string& slot, PgLsn from, const std::string& publication);
  bool streaming() const { return streaming_; }

  // The next CopyData message of the stream, without blocking: false when none has
  // arrived. The bytes stay valid until the next call. Throws PgError when the stream
  // ended or broke (naming the server's reason).
  bool next(std::string_view& bytes);
  // Waits up to timeout_ms for the socket to become readable.
  void wait(int timeout_ms);
  // Sends a CopyData message (a standby status update) and flushes it.
  void send(std::string_view bytes);

  PgConnection& connection() { return conn_; }
  const std::string& describe() const { return describe_; }

 private:
  void release();
  PgConnection conn_;
  std::string describe_;
  bool streaming_ = false;
  char* buffer_ = nullptr;  // libpq's copy of the last message (PQfreemem)
};

}  // namespace clink::sql
