#pragma once
// PostgreSQL's logical replication wire format, as the postgres-cdc source reads it: the
// streaming replication messages inside COPY BOTH (XLogData 'w', primary keepalive 'k',
// the standby status update 'r' we send back) and the pgoutput plugin's messages
// (protocol version 1: Begin, Commit, Relation, Insert, Update, Delete, Truncate, Origin,
// Type, Message). https://www.postgresql.org/docs/15/protocol-replication.html and
// protocol-logicalrep-message-formats.html.
//
// Pure byte parsing, no libpq: tested on byte strings. Decoding never allocates per
// message once warm: a PgoutputMessage is reused, its tuples' cells are views into the
// bytes it was decoded from (valid while those bytes are).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clink::sql {

// A WAL position (PostgreSQL's XLogRecPtr), written "16/B374D848" (hex high / low words).
using PgLsn = std::uint64_t;
std::string format_pg_lsn(PgLsn lsn);
// Throws ClinkError naming the text when it is not "X/Y" in hex.
PgLsn parse_pg_lsn(std::string_view text);

// Microseconds since 2000-01-01 (PostgreSQL's epoch) <-> since 1970-01-01.
constexpr std::int64_t kPgEpochOffsetMicros = 946684800LL * 1000000;

// ---- the replication stream inside COPY BOTH ------------------------------------------

struct ReplicationMessage {
  enum class Kind { kXLogData, kKeepalive } kind = Kind::kXLogData;
  PgLsn wal_start = 0;  // XLogData: where its data starts
  PgLsn wal_end = 0;    // the server's end of WAL (XLogData) / position sent so far (keepalive)
  std::int64_t send_time = 0;  // server clock, microseconds since 2000-01-01
  bool reply_requested = false;  // keepalive: answer with a status update now
  std::string_view data;         // XLogData: the plugin's message
};
// One CopyData payload from the server; throws ClinkError on anything else.
void parse_replication_message(std::string_view bytes, ReplicationMessage& out);
// The standby status update ('r'): received up to `written`, durable up to `flushed`
// (what the slot's confirmed_flush_lsn becomes), applied up to `applied`.
std::string standby_status_update(PgLsn written, PgLsn flushed, PgLsn applied, std::int64_t now_pg_micros,
                                  bool reply_requested);

// ---- pgoutput ------------------------------------------------------------------------

struct PgoutputColumn {
  std::string name;
  std::uint32_t type_oid = 0;
  std::int32_t type_modifier = -1;
  bool key = false;  // part of the replica identity
};

// A Relation message: the table the following changes of its oid are about.
struct PgoutputRelation {
  std::uint32_t oid = 0;
  std::string schema;  // "" for pg_catalog, as pgoutput sends it
  std::string name;
  char replica_identity = 'd';  // d default (primary key), n nothing, f full, i index
  std::vector<PgoutputColumn> columns;
};

// One column of a tuple: 'n' NULL, 'u' an unchanged TOASTed value (not sent), 't' text,
// 'b' binary (only with the binary option, which we do not ask for).
struct PgoutputCell {
  char kind = 'n';
  std::string_view value;
};
using PgoutputTuple = std::vector<PgoutputCell>;

struct PgoutputMessage {
  enum class Kind { kBegin, kCommit, kRelation, kInsert, kUpdate, kDelete, kTruncate, kOrigin, kType, kMessage };
  Kind kind = Kind::kBegin;
  // Begin: the transaction's commit LSN and time and its xid. Commit: flags, the commit
  // record's LSN (commit_lsn), the transaction's end (end_lsn), the time.
  PgLsn commit_lsn = 0;
  PgLsn end_lsn = 0;
  std::int64_t commit_time = 0;  // microseconds since 2000-01-01
  std::uint32_t xid = 0;
  // Relation (the whole relation), and the relation of Insert / Update / Delete.
  std::uint32_t relation_oid = 0;
  PgoutputRelation relation;
  // Update / Delete: 'K' (the old key), 'O' (the old row: REPLICA IDENTITY FULL) or 0
  // (none: an Update that changed no key column under the default identity).
  char old_kind = 0;
  PgoutputTuple old_tuple;
  PgoutputTuple new_tuple;  // Insert, Update
  // Truncate: the relations and the options (1 CASCADE, 2 RESTART IDENTITY).
  std::vector<std::uint32_t> truncated;
  std::uint8_t truncate_options = 0;
};

// Decodes one pgoutput message; throws ClinkError naming the message and what is wrong
// with it (truncated, an unknown message or tuple kind).
void decode_pgoutput(std::string_view bytes, PgoutputMessage& out);

}  // namespace clink::sql
