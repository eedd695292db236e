#include <gtest/gtest.h>

#include "clink/runtime/key_group.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/common/column_serde.hpp"
#include "clink/sql/common/temporal.hpp"
#include "clink/sql/common/time_zone.hpp"

namespace clink::test {

// A typed DataStream key with the SQL key layout of one nullable BIGINT column: the typed
// HashPartitioner keyed by it must route exactly as the SQL partitioner.
struct NullableBigintKey {
  std::optional<std::int64_t> v;
};

}  // namespace clink::test

template <>
struct clink::KeyCodec<clink::test::NullableBigintKey> {
  static void encode(const clink::test::NullableBigintKey& k, std::string& out) {
    if (!k.v) {
      out += '\0';
      return;
    }
    out += '\1';
    KeyCodec<std::int64_t>::encode(*k.v, out);
  }
};

namespace clink::test {

using namespace clink::sql;

namespace {

Int128 dec(std::string_view s, int p, int sc) {
  Int128 v = 0;
  Decimal128::parse(s, p, sc, v);
  return v;
}

SchemaPtr wide_schema() {
  return make_schema({
      {"id", LogicalType::bigint().not_null()},
      {"name", LogicalType::string()},
      {"ts", LogicalType::timestamp(3)},
      {"price", LogicalType::decimal(10, 2)},
      {"ok", LogicalType::boolean()},
      {"d", LogicalType::double_type()},
      {"tags", LogicalType::array(LogicalType::string())},
      {"attrs", LogicalType::map(LogicalType::string(), LogicalType::int_type())},
      {"pt", LogicalType::row({{"x", LogicalType::int_type()}, {"y", LogicalType::string()}})},
      {"raw", LogicalType::bytes()},
      {"day", LogicalType::date()},
      {"ltz", LogicalType::timestamp_ltz(3)},
  });
}

std::int64_t ts(int y, int mo, int d, int h, int mi, int s) {
  return ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 * 1000000LL + s * 1000000LL;
}

ColumnBatch sample_batch() {
  ColumnBatch b(wide_schema());
  b.append_row({1, "abc", ts(2020, 4, 15, 8, 5, 0), Value::decimal(dec("12.5", 10, 2)), true, 1.5,
                ValueList{{"a", Value::null()}}, ValueList{{"k", 1, "n", Value::null()}}, ValueList{{7, "q"}},
                std::string("\x01\xab", 2), 18367, ts(2020, 4, 15, 0, 0, 0)},
               RowKind::kInsert, 1000);
  b.append_row({2, Value::null(), Value::null(), Value::null(), Value::null(), Value::null(), Value::null(),
                Value::null(), Value::null(), Value::null(), Value::null(), Value::null()},
               RowKind::kUpdateBefore);
  b.append_row({-3, "", ts(1969, 12, 31, 23, 59, 59), Value::decimal(dec("-0.05", 10, 2)), false, 1e10,
                ValueList{}, ValueList{}, ValueList{{Value::null(), Value::null()}}, std::string(), -1, 0},
               RowKind::kDelete, 3000);
  return b;
}

}  // namespace

TEST(ColumnBatchTest, FormatsRowsLikeFlinksPrintSink) {
  auto b = sample_batch();
  b.validate();
  EXPECT_EQ(format_rows(b, *TimeZone::of("+08:00")),
            (std::vector<std::string>{
                "+I[1, abc, 2020-04-15T08:05, 12.50, true, 1.5, [a, null], {k=1, n=null}, +I[7, q], [1, -85], "
                "2020-04-15, 2020-04-15T00:00:00Z]",
                "-U[2, null, null, null, null, null, null, null, null, null, null, null]",
                "-D[-3, , 1969-12-31T23:59:59, -0.05, false, 1.0E10, [], {}, +I[null, null], [], 1969-12-31, "
                "1970-01-01T00:00:00Z]"}));
  EXPECT_EQ(b.row_values(0)[3], Value::decimal(1250));
  EXPECT_EQ(b.event_times(), (std::vector<clink::EventTime>{1000, kNoEventTime, 3000}));
}

TEST(ColumnBatchTest, RejectsRowsThatDoNotFitTheSchema) {
  ColumnBatch b(wide_schema());
  EXPECT_THROW(b.append_row({1, "x"}), clink::ClinkError);
  try {
    b.append_row({Value::null(), "x", 0, Value::null(), Value::null(), Value::null(), Value::null(), Value::null(),
                  Value::null(), Value::null(), Value::null(), Value::null()});
    FAIL();
  } catch (const clink::ClinkError& e) {
    EXPECT_STREQ(e.what(), "NULL for the NOT NULL column `id`");
  }
}

TEST(ColumnBatchTest, GatherAndFilterKeepKindsTimesAndNestedValues) {
  auto b = sample_batch();
  std::uint32_t idx[] = {2, 0, 2};
  auto g = b.gather(idx, 3);
  g.validate();
  auto lines = format_rows(g);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], format_rows(b)[2]);
  EXPECT_EQ(lines[1], format_rows(b)[0]);
  EXPECT_EQ(lines[2], format_rows(b)[2]);
  EXPECT_EQ(g.event_times(), (std::vector<clink::EventTime>{3000, 1000, 3000}));
  std::uint64_t mask = 0b101;
  auto f = b.filter(&mask);
  EXPECT_EQ(format_rows(f), (std::vector<std::string>{format_rows(b)[0], format_rows(b)[2]}));
  auto clone = b.clone();
  EXPECT_EQ(format_rows(column_batch_cast(*clone)), format_rows(b));
  auto empty = b.empty_like(8);
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_EQ(empty->type(), b.type());
}

TEST(ColumnBatchTest, ColumnWiseBuildersAndCommit) {
  auto schema = make_schema({{"a", LogicalType::bigint()}, {"s", LogicalType::string()}});
  ColumnBatch b(schema, 4);
  for (int i = 0; i < 100; ++i) {
    if (i % 7 == 0) b.column(0).append_null();
    else b.column(0).append<std::int64_t>(i);
    b.column(1).append_string(std::to_string(i * 2));
  }
  b.commit_rows(100, RowKind::kUpdateAfter, 5);
  b.validate();
  EXPECT_EQ(b.size(), 100u);
  EXPECT_EQ(b.column(0).null_count(), 15u);
  EXPECT_EQ(format_row(b, 7, *TimeZone::utc()), "+U[null, 14]");
  EXPECT_EQ(format_row(b, 99, *TimeZone::utc()), "+U[99, 198]");
  b.column(0).append<std::int64_t>(1);
  EXPECT_THROW(b.validate(), clink::ClinkError);
}

// append_range copies fixed-width and string rows contiguously: word-aligned (a column
// appended whole, as the FIELD kernel does) and not, nulls and all, after existing rows.
TEST(ColumnBatchTest, AppendRangeCopiesRowsAlignedOrNot) {
  Column ints(LogicalType::bigint()), strs(LogicalType::string());
  for (int i = 0; i < 150; ++i) {
    if (i % 5 == 0) ints.append_null(), strs.append_null();
    else ints.append<std::int64_t>(i), strs.append_string("s" + std::to_string(i));
  }
  for (auto [begin, end, prefix] : {std::tuple<std::size_t, std::size_t, std::size_t>{0, 150, 0}, {0, 70, 64},
                                    {3, 131, 0}, {64, 130, 5}, {10, 10, 2}}) {
    Column di(LogicalType::bigint()), ds(LogicalType::string());
    for (std::size_t p = 0; p < prefix; ++p) di.append<std::int64_t>(-1), ds.append_string("p");
    di.append_range(ints, begin, end);
    ds.append_range(strs, begin, end);
    ASSERT_EQ(di.size(), prefix + end - begin);
    ASSERT_EQ(ds.size(), prefix + end - begin);
    for (std::size_t r = 0; r < di.size(); ++r) {
      const Value want_i = r < prefix ? Value(std::int64_t{-1}) : ints.value_at(begin + r - prefix);
      const Value want_s = r < prefix ? Value(std::string("p")) : strs.value_at(begin + r - prefix);
      EXPECT_EQ(di.value_at(r), want_i) << begin << " " << r;
      EXPECT_EQ(ds.value_at(r), want_s) << begin << " " << r;
    }
    EXPECT_EQ(di.null_count(), ds.null_count());
    di.append<std::int64_t>(7);  // no stray bit past the copied rows
    EXPECT_TRUE(di.is_valid(di.size() - 1));
    di.append_null();
    EXPECT_TRUE(di.is_null(di.size() - 1));
  }
}

TEST(ColumnSerdeTest, RoundTripsEveryType) {
  auto b = sample_batch();
  std::string bytes = serialize_batch(b);
  auto back = deserialize_batch(b.schema(), bytes);
  back.validate();
  EXPECT_EQ(format_rows(back), format_rows(b));
  EXPECT_EQ(back.row_kinds(), b.row_kinds());
  EXPECT_EQ(back.event_times(), b.event_times());
  EXPECT_EQ(serialize_batch(back), bytes);
  // A gathered batch (nested children not starting at 0) encodes the same as a fresh one.
  std::uint32_t idx[] = {2};
  auto g = b.gather(idx, 1);
  EXPECT_EQ(format_rows(deserialize_batch(b.schema(), serialize_batch(g))), (std::vector<std::string>{format_rows(b)[2]}));
}

TEST(ColumnSerdeTest, RejectsTruncatedAndMismatchedInput) {
  auto b = sample_batch();
  std::string bytes = serialize_batch(b);
  EXPECT_THROW(deserialize_batch(b.schema(), bytes.substr(0, bytes.size() - 1)), clink::ClinkError);
  EXPECT_THROW(deserialize_batch(b.schema(), bytes + "x"), clink::ClinkError);
  EXPECT_THROW(deserialize_batch(make_schema({{"a", LogicalType::bigint()}}), bytes), clink::ClinkError);
  auto other = make_schema({{"a", LogicalType::string()}});
  ColumnBatch one(make_schema({{"a", LogicalType::bigint()}}));
  one.append_row({5});
  EXPECT_THROW(deserialize_batch(other, serialize_batch(one)), clink::ClinkError);
  // A pinned encoding: 1 BIGINT row (5, +I, no event time).
  EXPECT_EQ(serialize_batch(one), std::string("CLB1\x01\0\0\0\x01\0\0\0\0\0\x05\x01\x05\0\0\0\0\0\0\0", 24));
}

TEST(ColumnKeyTest, EncodingIsPinned) {
  auto schema = make_schema({{"i", LogicalType::bigint()},
                             {"s", LogicalType::string()},
                             {"d", LogicalType::double_type()},
                             {"m", LogicalType::decimal(5, 2)},
                             {"b", LogicalType::boolean()},
                             {"x", LogicalType::int_type()}});
  ColumnBatch b(schema);
  b.append_row({-2, "ab", -0.0, Value::decimal(-1), true, Value::null()});
  RowKeyEncoder enc(*schema, {0, 1, 2, 3, 4, 5});
  std::string expected = std::string("\x01\x7f\xff\xff\xff\xff\xff\xff\xfe", 9) + std::string("\x01\0\0\0\x02" "ab", 7) +
                         std::string("\x01\x80\0\0\0\0\0\0\0", 9) +
                         std::string("\x01\x7f\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 17) +
                         std::string("\x01\x01", 2) + std::string("\0", 1);
  EXPECT_EQ(enc.encode(b, 0), expected);
  // The hash of the key bytes is the runtime's XXH3 key hash.
  std::vector<std::uint64_t> hashes;
  enc.hash_rows(b, hashes);
  EXPECT_EQ(hashes[0], clink::key_hash(expected));
}

TEST(ColumnKeyTest, EncodingIsOrderPreservingForNumbers) {
  auto schema = make_schema({{"d", LogicalType::double_type()}, {"i", LogicalType::int_type()}});
  ColumnBatch b(schema);
  std::vector<double> ds = {-1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, 1e300};
  for (std::size_t k = 0; k < ds.size(); ++k) b.append_row({ds[k], static_cast<int>(k) - 3});
  RowKeyEncoder d(*schema, {0}), i(*schema, {1});
  for (std::size_t r = 1; r < ds.size(); ++r) {
    EXPECT_LE(d.encode(b, r - 1), d.encode(b, r));
    EXPECT_LT(i.encode(b, r - 1), i.encode(b, r));
  }
  EXPECT_EQ(d.encode(b, 2), d.encode(b, 3));  // -0.0 and 0.0 are one key
}

TEST(ColumnKeyTest, PartitionerRoutesLikeTheKeyGroupOfTheKeyBytes) {
  auto schema = make_schema({{"k", LogicalType::bigint().not_null()}, {"s", LogicalType::string()}});
  ColumnBatch b(schema);
  for (int i = 0; i < 500; ++i) b.append_row({i * 7919 % 1000, "v" + std::to_string(i)}, RowKind::kInsert, i);
  RowKeyEncoder enc(*schema, {0});
  auto factory = column_batch_hash_partitioner_factory(schema, {0});
  auto part = factory(0, 4, 128);
  std::vector<clink::BatchPtr> out(4);
  part->partition(b.clone(), out);
  std::vector<std::vector<std::string>> expected(4);
  auto all = format_rows(b);
  for (std::size_t r = 0; r < b.size(); ++r) {
    int kg = clink::key_group_for_hash(clink::key_hash(enc.encode(b, r)), 128);
    expected[static_cast<std::size_t>(clink::subtask_for_key_group(kg, 128, 4))].push_back(all[r]);
  }
  std::size_t total = 0;
  for (int t = 0; t < 4; ++t) {
    ASSERT_TRUE(out[t]) << t;
    EXPECT_EQ(format_rows(column_batch_cast(*out[t])), expected[t]);
    total += out[t]->size();
  }
  EXPECT_EQ(total, 500u);
  // Rows with equal keys always land together, whatever else the row holds.
  ColumnBatch one(schema);
  one.append_row({42, "other"});
  std::vector<clink::BatchPtr> out1(4);
  part->partition(one.clone(), out1);
  int kg42 = clink::key_group_for_hash(clink::key_hash(enc.encode(one, 0)), 128);
  EXPECT_TRUE(out1[static_cast<std::size_t>(clink::subtask_for_key_group(kg42, 128, 4))]);
}

TEST(ColumnKeyTest, PartitionerRoutesLikeTheTypedHashPartitioner) {
  auto schema = make_schema({{"k", LogicalType::bigint()}});
  ColumnBatch sql(schema);
  clink::Batch<std::optional<std::int64_t>> typed;
  for (int i = 0; i < 300; ++i) {
    std::optional<std::int64_t> k;
    if (i % 17 != 0) k = static_cast<std::int64_t>(i) * 1000003 - 150000000;
    sql.append_row({k ? Value(*k) : Value::null()});
    typed.push(k);
  }
  auto key_fn = [](const std::optional<std::int64_t>& v) { return NullableBigintKey{v}; };
  clink::HashPartitioner<std::optional<std::int64_t>, decltype(key_fn)> typed_part(key_fn, 3, 128);
  ColumnBatchHashPartitioner sql_part(*schema, {0}, 3, 128);
  std::vector<clink::BatchPtr> typed_out(3), sql_out(3);
  typed_part.partition(typed.clone(), typed_out);
  sql_part.partition(sql.clone(), sql_out);
  for (std::size_t t = 0; t < 3; ++t) {
    std::vector<std::string> want, got;
    if (typed_out[t])
      for (const auto& r : clink::batch_cast<std::optional<std::int64_t>>(*typed_out[t]).records)
        want.push_back(r.value ? "+I[" + std::to_string(*r.value) + "]" : "+I[null]");
    if (sql_out[t]) got = format_rows(column_batch_cast(*sql_out[t]));
    EXPECT_EQ(got, want) << "subtask " << t;
    EXPECT_FALSE(want.empty());
  }
}

// hash_rows writes integer keys straight into a flat buffer (no per-value encoder): its
// hashes must be key_hash of the encoded key bytes, row for row (key groups are part of
// the checkpoint format), for every integer width, several columns, extreme values and
// NULLs, and for keys that mix in other types (the general path).
TEST(ColumnKeyTest, HashRowsOfIntegerKeysEqualsTheHashOfTheKeyBytes) {
  auto schema = make_schema({{"t", LogicalType::tinyint()},
                             {"s", LogicalType::smallint()},
                             {"i", LogicalType::int_type()},
                             {"b", LogicalType::bigint()},
                             {"ts", LogicalType::timestamp(3)},
                             {"d", LogicalType::date()},
                             {"str", LogicalType::string()},
                             {"nn", LogicalType::bigint().not_null()}});
  const std::int64_t extremes[] = {0, 1, -1, 127, -128, 32767, -32768, 2147483647, -2147483648LL,
                                   std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  auto batch = [&](bool nulls) {
    ColumnBatch b(schema);
    for (int r = 0; r < 300; ++r) {
      std::int64_t x = r < 11 ? extremes[r] : static_cast<std::int64_t>(r) * 2654435761LL - 400000000000LL;
      auto maybe = [&](Value v, int k) { return nulls && (r + k) % 7 == 0 ? Value::null() : v; };
      const std::int64_t i8 = static_cast<std::int8_t>(x), i16 = static_cast<std::int16_t>(x),
                         i32 = static_cast<std::int32_t>(x);
      b.append_row({maybe(i8, 0), maybe(i16, 1), maybe(i32, 2), maybe(x, 3), maybe(x, 4), maybe(i32, 5),
                    maybe("k" + std::to_string(r % 13), 6), x});
    }
    return b;
  };
  const std::vector<std::vector<std::size_t>> keys = {{0}, {1}, {2}, {3}, {4}, {5}, {7}, {3, 7}, {0, 1, 2, 3},
                                                      {4, 5, 2}, {3, 6}, {6}};
  for (bool nulls : {false, true}) {
    ColumnBatch b = batch(nulls);
    for (const auto& k : keys) {
      RowKeyEncoder enc(*schema, k);
      std::vector<std::uint64_t> hashes;
      enc.hash_rows(b, hashes);
      ASSERT_EQ(hashes.size(), b.size());
      for (std::size_t r = 0; r < b.size(); ++r)
        ASSERT_EQ(hashes[r], clink::key_hash(enc.encode(b, r))) << "nulls " << nulls << " key " << k[0] << " row " << r;
    }
  }
}

}  // namespace clink::test
