#include "clink/connectors/jdbc/pgoutput.hpp"

#include <fmt/format.h>

#include "clink/core/error.hpp"

namespace clink::sql {

namespace {

// Big-endian reads over a message, failing with the message's name when it is short.
class Reader {
 public:
  Reader(std::string_view bytes, const char* what) : b_(bytes), what_(what) {}

  std::uint8_t u8() { return static_cast<std::uint8_t>(take(1)[0]); }
  char byte() { return take(1)[0]; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(be(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(be(4)); }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  std::uint64_t u64() { return be(8); }
  std::int64_t i64() { return static_cast<std::int64_t>(be(8)); }
  // A NUL-terminated string.
  std::string_view cstring() {
    auto end = b_.find('\0', pos_);
    if (end == std::string_view::npos) fail("a string without its terminating NUL");
    std::string_view s = b_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  std::string_view take(std::size_t n) {
    if (b_.size() - pos_ < n)
      fail(fmt::format("{} bytes wanted at byte {}, {} left", n, pos_, b_.size() - pos_));
    std::string_view s = b_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  bool done() const { return pos_ == b_.size(); }
  [[noreturn]] void fail(const std::string& why) const {
    throw ClinkError(fmt::format("postgres-cdc: malformed {} message ({} bytes): {}", what_, b_.size(), why));
  }

 private:
  std::uint64_t be(std::size_t n) {
    std::string_view s = take(n);
    std::uint64_t v = 0;
    for (char c : s) v = (v << 8) | static_cast<std::uint8_t>(c);
    return v;
  }
  std::string_view b_;
  std::size_t pos_ = 0;
  const char* what_;
};

void read_tuple(Reader& r, PgoutputTuple& out) {
  const std::uint16_t n = r.u16();
  out.resize(n);
  for (std::uint16_t i = 0; i < n; ++i) {
    PgoutputCell& c = out[i];
    c.kind = r.byte();
    switch (c.kind) {
      case 'n':
      case 'u': c.value = {}; break;
      case 't':
      case 'b': c.value = r.take(r.u32()); break;
      default: r.fail(fmt::format("column {} of a tuple has the unknown kind '{}'", i + 1, c.kind));
    }
  }
}

void put_be(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

std::string format_pg_lsn(PgLsn lsn) {
  return fmt::format("{:X}/{:X}", static_cast<std::uint32_t>(lsn >> 32), static_cast<std::uint32_t>(lsn));
}

PgLsn parse_pg_lsn(std::string_view text) {
  auto slash = text.find('/');
  auto hex = [&](std::string_view part, std::uint64_t& v) {
    if (part.empty() || part.size() > 8) return false;
    v = 0;
    for (char c : part) {
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + static_cast<std::uint64_t>(d);
    }
    return true;
  };
  std::uint64_t hi = 0, lo = 0;
  if (slash == std::string_view::npos || !hex(text.substr(0, slash), hi) || !hex(text.substr(slash + 1), lo))
    throw ClinkError(fmt::format("'{}' is not a PostgreSQL LSN (X/Y in hexadecimal)", text));
  return (hi << 32) | lo;
}

void parse_replication_message(std::string_view bytes, ReplicationMessage& out) {
  if (bytes.empty()) throw ClinkError("postgres-cdc: an empty message in the replication stream");
  const char tag = bytes[0];
  if (tag == 'w') {
    Reader r(bytes.substr(1), "XLogData");
    out.kind = ReplicationMessage::Kind::kXLogData;
    out.wal_start = r.u64();
    out.wal_end = r.u64();
    out.send_time = r.i64();
    out.reply_requested = false;
    out.data = bytes.substr(25);
    return;
  }
  if (tag == 'k') {
    Reader r(bytes.substr(1), "primary keepalive");
    out.kind = ReplicationMessage::Kind::kKeepalive;
    out.wal_end = r.u64();
    out.wal_start = 0;
    out.send_time = r.i64();
    out.reply_requested = r.u8() != 0;
    out.data = {};
    return;
  }
  throw ClinkError(fmt::format("postgres-cdc: unknown message '{}' in the replication stream", tag));
}

std::string standby_status_update(PgLsn written, PgLsn flushed, PgLsn applied, std::int64_t now_pg_micros,
                                  bool reply_requested) {
  std::string out;
  out.reserve(34);
  out.push_back('r');
  put_be(out, written, 8);
  put_be(out, flushed, 8);
  put_be(out, applied, 8);
  put_be(out, static_cast<std::uint64_t>(now_pg_micros), 8);
  out.push_back(reply_requested ? 1 : 0);
  return out;
}

void decode_pgoutput(std::string_view bytes, PgoutputMessage& out) {
  if (bytes.empty()) throw ClinkError("postgres-cdc: an empty pgoutput message");
  const char tag = bytes[0];
  const std::string_view body = bytes.substr(1);
  switch (tag) {
    case 'B': {
      Reader r(body, "pgoutput Begin");
      out.kind = PgoutputMessage::Kind::kBegin;
      out.commit_lsn = r.u64();  // the commit record's LSN ("final LSN")
      out.commit_time = r.i64();
      out.xid = r.u32();
      return;
    }
    case 'C': {
      Reader r(body, "pgoutput Commit");
      out.kind = PgoutputMessage::Kind::kCommit;
      r.u8();  // flags, unused
      out.commit_lsn = r.u64();
      out.end_lsn = r.u64();
      out.commit_time = r.i64();
      return;
    }
    case 'R': {
      Reader r(body, "pgoutput Relation");
      out.kind = PgoutputMessage::Kind::kRelation;
      PgoutputRelation& rel = out.relation;
      rel.oid = out.relation_oid = r.u32();
      rel.schema = r.cstring();
      rel.name = r.cstring();
      rel.replica_identity = r.byte();
      const std::uint16_t n = r.u16();
      rel.columns.resize(n);
      for (auto& c : rel.columns) {
        c.key = (r.u8() & 1) != 0;
        c.name = r.cstring();
        c.type_oid = r.u32();
        c.type_modifier = r.i32();
      }
      return;
    }
    case 'I': {
      Reader r(body, "pgoutput Insert");
      out.kind = PgoutputMessage::Kind::kInsert;
      out.relation_oid = r.u32();
      if (char n = r.byte(); n != 'N') r.fail(fmt::format("'N' expected before the new tuple, got '{}'", n));
      out.old_kind = 0;
      read_tuple(r, out.new_tuple);
      return;
    }
    case 'U': {
      Reader r(body, "pgoutput Update");
      out.kind = PgoutputMessage::Kind::kUpdate;
      out.relation_oid = r.u32();
      char k = r.byte();
      out.old_kind = 0;
      if (k == 'K' || k == 'O') {
        out.old_kind = k;
        read_tuple(r, out.old_tuple);
        k = r.byte();
      }
      if (k != 'N') r.fail(fmt::format("'N' expected before the new tuple, got '{}'", k));
      read_tuple(r, out.new_tuple);
      return;
    }
    case 'D': {
      Reader r(body, "pgoutput Delete");
      out.kind = PgoutputMessage::Kind::kDelete;
      out.relation_oid = r.u32();
      const char k = r.byte();
      if (k != 'K' && k != 'O') r.fail(fmt::format("'K' or 'O' expected before the old tuple, got '{}'", k));
      out.old_kind = k;
      read_tuple(r, out.old_tuple);
      return;
    }
    case 'T': {
      Reader r(body, "pgoutput Truncate");
      out.kind = PgoutputMessage::Kind::kTruncate;
      const std::uint32_t n = r.u32();
      out.truncate_options = r.u8();
      out.truncated.resize(n);
      for (auto& oid : out.truncated) oid = r.u32();
      return;
    }
    case 'O': {
      Reader r(body, "pgoutput Origin");
      out.kind = PgoutputMessage::Kind::kOrigin;
      r.u64();
      r.cstring();
      return;
    }
    case 'Y': out.kind = PgoutputMessage::Kind::kType; return;     // custom types: values come as text anyway
    case 'M': out.kind = PgoutputMessage::Kind::kMessage; return;  // pg_logical_emit_message (only when asked for)
    default:
      throw ClinkError(fmt::format("postgres-cdc: unknown pgoutput message '{}' ({} bytes)", tag, bytes.size()));
  }
}

}  // namespace clink::sql
