// SideRowCodec: the bytes every SQL join keeps per stored row. Pins the format, the round
// trip, and that rows sort exactly as their column key encoding does (so the rows of a key
// iterate, and joins emit, in the same order on every backend and as before).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../../src/sql/ops/join_row_codec.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/common/column_key.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using sql::SideRowCodec;

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

SchemaPtr one_bigint() { return sql::make_schema({{"v", LogicalType::bigint()}}); }

std::string encode_one(const SchemaPtr& schema, const std::vector<Value>& values) {
  ColumnBatch b = batch(schema, {{values}});
  std::string out;
  SideRowCodec(*schema).encode(b, 0, out);
  return out;
}

TEST(JoinRowCodec, PinsTheIntegerAndStringFormat) {
  auto s = one_bigint();
  EXPECT_EQ(encode_one(s, {Value::null()}), std::string("\x00", 1));
  EXPECT_EQ(encode_one(s, {Value(std::int64_t{0})}), "\x20");
  EXPECT_EQ(encode_one(s, {Value(std::int64_t{1})}), "\x21\x01");
  EXPECT_EQ(encode_one(s, {Value(std::int64_t{256})}), std::string("\x22\x01\x00", 3));
  EXPECT_EQ(encode_one(s, {Value(std::int64_t{-1})}), "\x18");
  EXPECT_EQ(encode_one(s, {Value(std::int64_t{-2})}), "\x17\xfe");
  EXPECT_EQ(encode_one(s, {Value(std::int64_t{-257})}), "\x16\xfe\xff");
  EXPECT_EQ(encode_one(s, {Value(kMax)}), "\x28\x7f\xff\xff\xff\xff\xff\xff\xff");
  EXPECT_EQ(encode_one(s, {Value(kMin)}), std::string("\x10\x80\x00\x00\x00\x00\x00\x00\x00", 9));
  // A millisecond timestamp of 2026: 7 bytes instead of the key encoding's 9.
  EXPECT_EQ(encode_one(s, {Value(std::int64_t{1795000000000})}).size(), 7u);

  auto str = sql::make_schema({{"s", LogicalType::string()}});
  EXPECT_EQ(encode_one(str, {Value("ab")}), "\x01\x02" "ab");
  EXPECT_EQ(encode_one(str, {Value("")}), std::string("\x01\x00", 2));
  EXPECT_EQ(encode_one(str, {Value(std::string(0xEF, 'x'))}).substr(0, 2), "\x01\xef");
  EXPECT_EQ(encode_one(str, {Value(std::string(0xF0, 'x'))}).substr(0, 3), "\x01\xf0\xf0");
  EXPECT_EQ(encode_one(str, {Value(std::string(70000, 'x'))}).substr(0, 5), "\x01\xf2\x01\x11\x70");
}

TEST(JoinRowCodec, RoundTripsEveryTypeWithNulls) {
  auto s = sql::make_schema({{"t", LogicalType::tinyint()},
                             {"i", LogicalType::int_type()},
                             {"b", LogicalType::bigint()},
                             {"ts", LogicalType::timestamp(3)},
                             {"s", LogicalType::string()},
                             {"d", LogicalType::double_type()},
                             {"ok", LogicalType::boolean()}});
  std::vector<Row> rows = {
      {{Value(-128), Value(std::int64_t{-2147483648LL}), Value(kMin), Value(std::int64_t{0}), Value(""), Value(-0.5),
        Value(true)}},
      {{Value(127), Value(std::int64_t{2147483647}), Value(kMax), Value(std::int64_t{1795000000000}),
        Value(std::string(300, 'q')), Value(1e300), Value(false)}},
      {{Value::null(), Value::null(), Value::null(), Value::null(), Value::null(), Value::null(), Value::null()}},
      {{Value(-1), Value(-1), Value(std::int64_t{-1}), Value(std::int64_t{-86400000}), Value("héllo"), Value(0.0),
        Value(true)}},
  };
  ColumnBatch in = batch(s, rows);
  SideRowCodec codec(*s);
  ColumnBatch out(s);
  for (std::size_t r = 0; r < in.size(); ++r) {
    std::string bytes;
    codec.encode(in, r, bytes);
    codec.decode(bytes, out);
  }
  EXPECT_EQ(sql::format_rows(out), sql::format_rows(in));
}

TEST(JoinRowCodec, RowsSortAsTheirColumnKeyEncoding) {
  auto s = sql::make_schema({{"b", LogicalType::bigint()}, {"s", LogicalType::string()}});
  const std::vector<Value> ints = {Value::null(),           Value(kMin),          Value(std::int64_t{-65537}),
                                   Value(std::int64_t{-256}), Value(std::int64_t{-255}), Value(std::int64_t{-2}),
                                   Value(std::int64_t{-1}),  Value(std::int64_t{0}), Value(std::int64_t{1}),
                                   Value(std::int64_t{255}), Value(std::int64_t{256}), Value(std::int64_t{1795000000000}),
                                   Value(kMax)};
  const std::vector<Value> strings = {Value::null(), Value(""), Value("a"), Value("b"), Value("ab"),
                                      Value(std::string(0xF0, 'a')), Value(std::string(0x100, 'a'))};
  std::vector<Row> rows;
  for (const auto& i : ints)
    for (const auto& t : strings) rows.push_back({{i, t}});
  ColumnBatch b = batch(s, rows);
  SideRowCodec codec(*s);
  sql::RowKeyEncoder key(*s, {0, 1});
  std::vector<std::string> compact(rows.size()), keyed(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    codec.encode(b, r, compact[r]);
    key.encode(b, r, keyed[r]);
  }
  for (std::size_t x = 0; x < rows.size(); ++x)
    for (std::size_t y = 0; y < rows.size(); ++y) {
      const int a = compact[x].compare(compact[y]), k = keyed[x].compare(keyed[y]);
      ASSERT_EQ((a > 0) - (a < 0), (k > 0) - (k < 0)) << "rows " << x << " and " << y;
    }
}

TEST(JoinRowCodec, MalformedBytesFailClearly) {
  auto s = sql::make_schema({{"b", LogicalType::bigint()}, {"s", LogicalType::string()}});
  SideRowCodec codec(*s);
  for (std::string bad : {std::string("\x22\x01", 2),         // a BIGINT cut short
                          std::string("\x21\x01\x01\x05" "ab", 6),  // a string cut short
                          std::string("\x05", 1),              // no such header
                          std::string("\x20\x01\x00X", 4)}) {  // bytes left over
    ColumnBatch out(s);
    try {
      codec.decode(bad, out);
      FAIL() << "decoded malformed bytes";
    } catch (const ClinkError& e) {
      EXPECT_EQ(std::string(e.what()), "join state: truncated or malformed row bytes");
    }
  }
}

}  // namespace
}  // namespace clink::test
