// The pgoutput and replication-stream decoding of postgres-cdc, on byte strings laid out
// as PostgreSQL 15 sends them (protocol-logicalrep-message-formats).
#include <gtest/gtest.h>

#include <string>

#include "clink/connectors/jdbc/pgoutput.hpp"
#include "clink/core/error.hpp"

namespace clink::test {
using namespace clink::sql;

namespace {

// Big-endian message builder.
struct Bytes {
  std::string s;
  Bytes& c(char v) {
    s.push_back(v);
    return *this;
  }
  Bytes& be(std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  Bytes& u16(std::uint16_t v) { return be(v, 2); }
  Bytes& u32(std::uint32_t v) { return be(v, 4); }
  Bytes& u64(std::uint64_t v) { return be(v, 8); }
  Bytes& str(const std::string& v) {
    s += v;
    s.push_back('\0');
    return *this;
  }
  Bytes& text(const std::string& v) {
    c('t').u32(static_cast<std::uint32_t>(v.size()));
    s += v;
    return *this;
  }
};

}  // namespace

TEST(PostgresCdcPgoutput, LsnTextRoundTrips) {
  EXPECT_EQ(format_pg_lsn(0x16B374D848ULL), "16/B374D848");
  EXPECT_EQ(parse_pg_lsn("16/B374D848"), 0x16B374D848ULL);
  EXPECT_EQ(parse_pg_lsn("0/0"), 0u);
  EXPECT_EQ(parse_pg_lsn("ffffffff/FFFFFFFF"), ~0ULL);
  EXPECT_THROW(parse_pg_lsn("16B374D848"), ClinkError);
  EXPECT_THROW(parse_pg_lsn("1/xyz"), ClinkError);
  EXPECT_THROW(parse_pg_lsn("/1"), ClinkError);
}

TEST(PostgresCdcPgoutput, BeginCommitAndRelation) {
  PgoutputMessage m;
  decode_pgoutput(Bytes().c('B').u64(0x1000).u64(777).u32(42).s, m);
  EXPECT_EQ(m.kind, PgoutputMessage::Kind::kBegin);
  EXPECT_EQ(m.commit_lsn, 0x1000u);
  EXPECT_EQ(m.commit_time, 777);
  EXPECT_EQ(m.xid, 42u);

  decode_pgoutput(Bytes().c('C').c(0).u64(0x1000).u64(0x1030).u64(778).s, m);
  EXPECT_EQ(m.kind, PgoutputMessage::Kind::kCommit);
  EXPECT_EQ(m.commit_lsn, 0x1000u);
  EXPECT_EQ(m.end_lsn, 0x1030u);

  Bytes rel;
  rel.c('R').u32(16385).str("public").str("orders").c('f').u16(2);
  rel.c(1).str("id").u32(20).u32(0xffffffff);
  rel.c(0).str("item").u32(25).u32(0xffffffff);
  decode_pgoutput(rel.s, m);
  ASSERT_EQ(m.kind, PgoutputMessage::Kind::kRelation);
  EXPECT_EQ(m.relation.oid, 16385u);
  EXPECT_EQ(m.relation.schema, "public");
  EXPECT_EQ(m.relation.name, "orders");
  EXPECT_EQ(m.relation.replica_identity, 'f');
  ASSERT_EQ(m.relation.columns.size(), 2u);
  EXPECT_TRUE(m.relation.columns[0].key);
  EXPECT_EQ(m.relation.columns[0].type_oid, 20u);
  EXPECT_EQ(m.relation.columns[0].type_modifier, -1);
  EXPECT_EQ(m.relation.columns[1].name, "item");
  EXPECT_FALSE(m.relation.columns[1].key);
}

TEST(PostgresCdcPgoutput, InsertUpdateDeleteTuples) {
  PgoutputMessage m;
  // The cells are views into the message's bytes: keep them alive while reading.
  const std::string insert = Bytes().c('I').u32(7).c('N').u16(3).text("1").c('n').text("").s;
  decode_pgoutput(insert, m);
  ASSERT_EQ(m.kind, PgoutputMessage::Kind::kInsert);
  EXPECT_EQ(m.relation_oid, 7u);
  ASSERT_EQ(m.new_tuple.size(), 3u);
  EXPECT_EQ(m.new_tuple[0].kind, 't');
  EXPECT_EQ(m.new_tuple[0].value, "1");
  EXPECT_EQ(m.new_tuple[1].kind, 'n');
  EXPECT_EQ(m.new_tuple[2].kind, 't');
  EXPECT_EQ(m.new_tuple[2].value, "");

  // REPLICA IDENTITY FULL: the old row, then the new one with an unchanged TOASTed value.
  const std::string full = Bytes().c('U').u32(7).c('O').u16(2).text("1").text("big").c('N').u16(2).text("2").c('u').s;
  decode_pgoutput(full, m);
  ASSERT_EQ(m.kind, PgoutputMessage::Kind::kUpdate);
  EXPECT_EQ(m.old_kind, 'O');
  EXPECT_EQ(m.old_tuple[1].value, "big");
  EXPECT_EQ(m.new_tuple[0].value, "2");
  EXPECT_EQ(m.new_tuple[1].kind, 'u');

  // The default identity, key unchanged: no old tuple at all.
  const std::string plain = Bytes().c('U').u32(7).c('N').u16(1).text("x").s;
  decode_pgoutput(plain, m);
  EXPECT_EQ(m.old_kind, 0);
  EXPECT_EQ(m.new_tuple[0].value, "x");

  const std::string del = Bytes().c('D').u32(7).c('K').u16(2).text("5").c('n').s;
  decode_pgoutput(del, m);
  ASSERT_EQ(m.kind, PgoutputMessage::Kind::kDelete);
  EXPECT_EQ(m.old_kind, 'K');
  EXPECT_EQ(m.old_tuple[0].value, "5");
  EXPECT_EQ(m.old_tuple[1].kind, 'n');

  decode_pgoutput(Bytes().c('T').u32(2).c(1).u32(7).u32(8).s, m);
  ASSERT_EQ(m.kind, PgoutputMessage::Kind::kTruncate);
  EXPECT_EQ(m.truncate_options, 1);
  EXPECT_EQ(m.truncated, (std::vector<std::uint32_t>{7, 8}));
}

TEST(PostgresCdcPgoutput, MalformedMessagesFailNamingTheMessage) {
  PgoutputMessage m;
  try {
    decode_pgoutput(Bytes().c('I').u32(7).c('N').u16(2).text("1").s, m);  // the second column is missing
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed pgoutput Insert message"), std::string::npos) << e.what();
  }
  try {
    decode_pgoutput(Bytes().c('I').u32(7).c('N').u16(1).c('x').s, m);
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kind 'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(decode_pgoutput("Z", m), ClinkError);
  EXPECT_THROW(decode_pgoutput("", m), ClinkError);
  EXPECT_THROW(decode_pgoutput(Bytes().c('R').u32(1).s, m), ClinkError);  // no NUL-terminated names
}

TEST(PostgresCdcPgoutput, ReplicationStreamFraming) {
  ReplicationMessage r;
  std::string payload = Bytes().c('B').u64(1).u64(2).u32(3).s;
  parse_replication_message(Bytes().c('w').u64(0x10).u64(0x20).u64(99).s + payload, r);
  EXPECT_EQ(r.kind, ReplicationMessage::Kind::kXLogData);
  EXPECT_EQ(r.wal_start, 0x10u);
  EXPECT_EQ(r.wal_end, 0x20u);
  EXPECT_EQ(r.send_time, 99);
  EXPECT_EQ(r.data, payload);

  parse_replication_message(Bytes().c('k').u64(0x30).u64(5).c(1).s, r);
  EXPECT_EQ(r.kind, ReplicationMessage::Kind::kKeepalive);
  EXPECT_EQ(r.wal_end, 0x30u);
  EXPECT_TRUE(r.reply_requested);
  EXPECT_THROW(parse_replication_message(Bytes().c('k').u64(1).s, r), ClinkError);
  EXPECT_THROW(parse_replication_message("x", r), ClinkError);

  const std::string status = standby_status_update(0x30, 0x20, 0x20, 123, false);
  EXPECT_EQ(status, Bytes().c('r').u64(0x30).u64(0x20).u64(0x20).u64(123).c(0).s);
}

}  // namespace clink::test
