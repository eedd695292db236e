#include <gtest/gtest.h>

#include <memory>

#include "clink/sql/aggregate.hpp"
#include "expr_test_util.hpp"

using namespace clink::sql;
using namespace clink::sql::testing;

namespace {

// One accumulator in aligned storage, created and destroyed with the function.
struct Acc {
  const AggregateFunction& f;
  alignas(16) unsigned char bytes[256];
  explicit Acc(const AggregateFunction& fn) : f(fn) { f.create(bytes); }
  ~Acc() { f.destroy(bytes); }
  void* p() { return bytes; }
};

Column column_of(const LogicalType& t, const std::vector<Value>& vs) {
  Column c(t);
  for (const auto& v : vs) c.append_value(v);
  return c;
}

void feed(const AggregateFunction& f, void* acc, const Column& c, bool retract = false) {
  std::vector<void*> accs(c.size(), acc);
  std::vector<std::uint32_t> rows(c.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::uint32_t>(i);
  const Column* args[] = {&c};
  if (retract) f.retract(accs.data(), args, rows);
  else f.accumulate(accs.data(), args, rows);
}

std::string value(const AggregateFunction& f, const void* acc) {
  Column out(f.result_type());
  f.get_value(acc, out);
  return cell(out, 0, *TimeZone::utc());
}

std::unique_ptr<AggregateFunction> agg(const char* name, std::vector<LogicalType> args, AggregateOptions o = {}) {
  return FunctionRegistry::builtins().make_aggregate(name, args, o);
}

}  // namespace

TEST(AggregateTest, CountAndCountStar) {
  auto star = agg("COUNT", {});
  auto count = agg("COUNT", {LogicalType::int_type()});
  EXPECT_EQ(star->accumulator_size(), 8u);
  EXPECT_EQ(star->result_type().to_string(), "BIGINT NOT NULL");
  auto col = column_of(LogicalType::int_type(), {1, Value::null(), 3});
  Acc a(*star), b(*count);
  feed(*star, a.p(), col);
  feed(*count, b.p(), col);
  EXPECT_EQ(value(*star, a.p()), "3");
  EXPECT_EQ(value(*count, b.p()), "2");
  feed(*count, b.p(), column_of(LogicalType::int_type(), {1}), true);
  EXPECT_EQ(value(*count, b.p()), "1");
  std::string bytes;
  star->serialize(a.p(), bytes);
  EXPECT_EQ(bytes.size(), 8u);
}

TEST(AggregateTest, SumAndAvgFollowFlinkTypesExactly) {
  auto sum = agg("SUM", {LogicalType::bigint()});
  EXPECT_EQ(sum->result_type().to_string(), "BIGINT");
  Acc s(*sum);
  EXPECT_EQ(value(*sum, s.p()), "NULL");  // empty group
  feed(*sum, s.p(), column_of(LogicalType::bigint(), {INT64_MAX, std::int64_t{1}}));
  EXPECT_EQ(value(*sum, s.p()), "NULL");  // past BIGINT: NULL, never wrapped
  feed(*sum, s.p(), column_of(LogicalType::bigint(), {std::int64_t{2}}), false);
  feed(*sum, s.p(), column_of(LogicalType::bigint(), {INT64_MAX}), true);
  EXPECT_EQ(value(*sum, s.p()), "3");  // exact through the overflow and back
  feed(*sum, s.p(), column_of(LogicalType::bigint(), {std::int64_t{1}, std::int64_t{2}}), true);
  EXPECT_EQ(value(*sum, s.p()), "NULL");  // all retracted

  auto avg = agg("AVG", {LogicalType::int_type()});
  EXPECT_EQ(avg->result_type().to_string(), "INT");
  Acc a(*avg);
  feed(*avg, a.p(), column_of(LogicalType::int_type(), {1, 2, Value::null()}));
  EXPECT_EQ(value(*avg, a.p()), "1");  // integer average, as Flink

  Int128 v1 = 0, v2 = 0;
  Decimal128::parse("1.10", 5, 2, v1);
  Decimal128::parse("2.25", 5, 2, v2);
  auto dsum = agg("SUM", {LogicalType::decimal(5, 2)});
  auto davg = agg("AVG", {LogicalType::decimal(5, 2)});
  EXPECT_EQ(dsum->result_type().to_string(), "DECIMAL(38, 2)");
  EXPECT_EQ(davg->result_type().to_string(), "DECIMAL(38, 6)");
  Acc ds(*dsum), da(*davg);
  auto dcol = column_of(LogicalType::decimal(5, 2), {Value::decimal(v1), Value::decimal(v2), Value::decimal(v2)});
  feed(*dsum, ds.p(), dcol);
  feed(*davg, da.p(), dcol);
  EXPECT_EQ(value(*dsum, ds.p()), "5.60");
  EXPECT_EQ(value(*davg, da.p()), "1.866667");

  auto fsum = agg("AVG", {LogicalType::double_type()});
  Acc f(*fsum);
  feed(*fsum, f.p(), column_of(LogicalType::double_type(), {1.0, 2.0}));
  EXPECT_EQ(value(*fsum, f.p()), "1.5");
}

TEST(AggregateTest, MinMaxWithAndWithoutRetraction) {
  auto min = agg("MIN", {LogicalType::int_type()});
  EXPECT_FALSE(min->supports_retraction());
  EXPECT_TRUE(min->trivially_copyable());
  Acc m(*min);
  feed(*min, m.p(), column_of(LogicalType::int_type(), {5, -3, Value::null(), 7}));
  EXPECT_EQ(value(*min, m.p()), "-3");
  EXPECT_THROW(feed(*min, m.p(), column_of(LogicalType::int_type(), {5}), true), clink::ClinkError);

  auto rmax = agg("MAX", {LogicalType::double_type()}, {false, true});
  EXPECT_TRUE(rmax->supports_retraction());
  Acc r(*rmax);
  feed(*rmax, r.p(), column_of(LogicalType::double_type(), {1.5, 9.0, -2.0, 9.0}));
  EXPECT_EQ(value(*rmax, r.p()), "9.0");
  feed(*rmax, r.p(), column_of(LogicalType::double_type(), {9.0}), true);
  EXPECT_EQ(value(*rmax, r.p()), "9.0");  // one 9.0 is left
  feed(*rmax, r.p(), column_of(LogicalType::double_type(), {9.0}), true);
  EXPECT_EQ(value(*rmax, r.p()), "1.5");  // the next maximum shows
  feed(*rmax, r.p(), column_of(LogicalType::double_type(), {1.5, -2.0}), true);
  EXPECT_EQ(value(*rmax, r.p()), "NULL");

  auto smin = agg("MIN", {LogicalType::string()});
  Acc sm(*smin);
  feed(*smin, sm.p(), column_of(LogicalType::string(), {"pear", "Apple", "apple"}));
  EXPECT_EQ(value(*smin, sm.p()), "Apple");
  // State round trip of a multiset accumulator.
  std::string bytes;
  smin->serialize(sm.p(), bytes);
  Acc back(*smin);
  std::string_view in = bytes;
  smin->deserialize(back.p(), in);
  EXPECT_TRUE(in.empty());
  feed(*smin, back.p(), column_of(LogicalType::string(), {"Apple"}), true);
  EXPECT_EQ(value(*smin, back.p()), "apple");
}

TEST(AggregateTest, DistinctAggregatesAndMerge) {
  auto cd = agg("COUNT", {LogicalType::string()}, {true, true});
  Acc a(*cd), b(*cd);
  feed(*cd, a.p(), column_of(LogicalType::string(), {"x", "y", "x", Value::null()}));
  EXPECT_EQ(value(*cd, a.p()), "2");
  feed(*cd, a.p(), column_of(LogicalType::string(), {"x"}), true);
  EXPECT_EQ(value(*cd, a.p()), "2");  // one "x" is still there
  feed(*cd, a.p(), column_of(LogicalType::string(), {"x"}), true);
  EXPECT_EQ(value(*cd, a.p()), "1");
  feed(*cd, b.p(), column_of(LogicalType::string(), {"y", "z"}));
  cd->merge(a.p(), b.p());
  EXPECT_EQ(value(*cd, a.p()), "2");  // {y, z}
  auto sd = agg("SUM", {LogicalType::int_type()}, {true, false});
  Acc s(*sd);
  feed(*sd, s.p(), column_of(LogicalType::int_type(), {3, 3, 4}));
  EXPECT_EQ(value(*sd, s.p()), "7");
  std::string bytes;
  sd->serialize(s.p(), bytes);
  Acc back(*sd);
  std::string_view in = bytes;
  sd->deserialize(back.p(), in);
  EXPECT_EQ(value(*sd, back.p()), "7");
  auto sum = agg("SUM", {LogicalType::int_type()});
  Acc x(*sum), y(*sum);
  feed(*sum, x.p(), column_of(LogicalType::int_type(), {1, 2}));
  feed(*sum, y.p(), column_of(LogicalType::int_type(), {10}));
  sum->merge(x.p(), y.p());
  EXPECT_EQ(value(*sum, x.p()), "13");
  EXPECT_THROW(agg("SUM", {LogicalType::string()}), SqlTypeError);
  EXPECT_THROW(agg("NOPE", {}), SqlTypeError);
}

TEST(AggregateTest, PerRowAccumulatorsUpdateManyGroupsInOneCall) {
  auto sum = agg("SUM", {LogicalType::bigint()});
  Acc g1(*sum), g2(*sum);
  auto col = column_of(LogicalType::bigint(), {std::int64_t{1}, std::int64_t{10}, std::int64_t{100}, std::int64_t{1000}});
  void* accs[] = {g1.p(), g2.p(), nullptr, g1.p()};  // row 2 filtered out
  const Column* args[] = {&col};
  const std::uint32_t rows[] = {0, 1, 2, 3};
  sum->accumulate(accs, args, rows);
  EXPECT_EQ(value(*sum, g1.p()), "1001");
  EXPECT_EQ(value(*sum, g2.p()), "10");
  // A selection: accs[k] takes row rows[k] (rows 3 and 1 here).
  const std::uint32_t picked[] = {3, 1};
  void* accs2[] = {g2.p(), g2.p()};
  sum->accumulate(accs2, args, picked);
  EXPECT_EQ(value(*sum, g2.p()), "1020");
}

// DISTINCT over several arguments dedups whole tuples, with multiplicity: a tuple
// leaves the inner aggregate only when its last occurrence is retracted.
TEST(AggregateTest, DistinctOverArgumentTuplesWithMultiplicity) {
  std::vector<LogicalType> types = {LogicalType::bigint(), LogicalType::string()};
  auto d = make_distinct_aggregate(agg("COUNT", {}), types);
  ASSERT_NE(d, nullptr);
  Acc a(*d);
  auto x = column_of(LogicalType::bigint(), {std::int64_t{1}, std::int64_t{1}, std::int64_t{1}, std::int64_t{2}, Value::null()});
  auto y = column_of(LogicalType::string(), {"a", "a", "b", "a", "a"});
  const Column* args[] = {&x, &y};
  const std::uint32_t rows[] = {0, 1, 2, 3, 4};
  void* accs[] = {a.p(), a.p(), a.p(), a.p(), a.p()};
  d->accumulate(accs, args, rows);
  EXPECT_EQ(value(*d, a.p()), "3");  // (1,a) (1,b) (2,a); the NULL row is skipped
  const std::uint32_t first[] = {0};
  d->retract(accs, args, first);
  EXPECT_EQ(value(*d, a.p()), "3");  // (1,a) is still there once
  d->retract(accs, args, first);
  EXPECT_EQ(value(*d, a.p()), "2");
  std::string bytes;
  d->serialize(a.p(), bytes);
  Acc b(*d);
  std::string_view in(bytes);
  d->deserialize(b.p(), in);
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(value(*d, b.p()), "2");
  Acc c(*d);
  d->accumulate(accs, args, std::span<const std::uint32_t>(rows, 1));  // (1,a) back into a
  d->merge(c.p(), a.p());
  EXPECT_EQ(value(*d, c.p()), "3");
  EXPECT_EQ(make_distinct_aggregate(agg("COUNT", {}), std::vector<LogicalType>{LogicalType::array(LogicalType::int_type())}),
            nullptr);
}
