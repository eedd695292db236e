#include <gtest/gtest.h>

#include <memory>

#include "clink/sql/common/multiset_type.hpp"
#include "clink/sql/function/aggregate.hpp"
#include "expr_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

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
  EXPECT_EQ(value(*sum, s.p()), "-9223372036854775808");  // past BIGINT: wraps, as Flink's
  feed(*sum, s.p(), column_of(LogicalType::bigint(), {std::int64_t{2}}), false);
  feed(*sum, s.p(), column_of(LogicalType::bigint(), {INT64_MAX}), true);
  EXPECT_EQ(value(*sum, s.p()), "3");  // exact through the overflow and back
  feed(*sum, s.p(), column_of(LogicalType::bigint(), {std::int64_t{1}, std::int64_t{2}}), true);
  EXPECT_EQ(value(*sum, s.p()), "NULL");  // all retracted

  // $SUM (SET 'clink.sql.arithmetic' = 'null'): past BIGINT is NULL, never wrapped.
  auto nsum = agg("$SUM", {LogicalType::bigint()});
  Acc n(*nsum);
  feed(*nsum, n.p(), column_of(LogicalType::bigint(), {INT64_MAX, std::int64_t{1}}));
  EXPECT_EQ(value(*nsum, n.p()), "NULL");
  feed(*nsum, n.p(), column_of(LogicalType::bigint(), {INT64_MAX}), true);
  EXPECT_EQ(value(*nsum, n.p()), "1");

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

  // Strings without retraction: the least value alone (bytewise), round trip through state.
  auto imin = agg("MIN", {LogicalType::string()});
  EXPECT_FALSE(imin->supports_retraction());
  Acc im(*imin);
  feed(*imin, im.p(), column_of(LogicalType::string(), {"pear", Value::null(), "apple", "Apple"}));
  std::string ibytes;
  imin->serialize(im.p(), ibytes);
  Acc iback(*imin);
  std::string_view iin = ibytes;
  imin->deserialize(iback.p(), iin);
  EXPECT_TRUE(iin.empty());
  EXPECT_EQ(value(*imin, iback.p()), "Apple");
  EXPECT_THROW(feed(*imin, iback.p(), column_of(LogicalType::string(), {"Apple"}), true), clink::ClinkError);

  auto smin = agg("MIN", {LogicalType::string()}, {false, true});
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

namespace {

void feed2(const AggregateFunction& f, void* acc, const Column& a, const Column& b, bool retract = false) {
  std::vector<void*> accs(a.size(), acc);
  std::vector<std::uint32_t> rows(a.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::uint32_t>(i);
  const Column* args[] = {&a, &b};
  if (retract) f.retract(accs.data(), args, rows);
  else f.accumulate(accs.data(), args, rows);
}
Column strings(const std::vector<Value>& vs) { return column_of(LogicalType::string(), vs); }
Column doubles(const std::vector<Value>& vs) { return column_of(LogicalType::double_type(), vs); }

}  // namespace

// Flink's MathAggFunctionITCase "retract": unmatched retractions drive the count below
// zero; WELFORD_M2 keeps counting and restarts from 0 (group C ends with one value: 0.0).
TEST(AggregateTest, VarianceFollowsFlinkThroughUnmatchedRetractions) {
  auto pop = agg("STDDEV_POP", {LogicalType::double_type()}, {false, true});
  auto samp = agg("STDDEV_SAMP", {LogicalType::double_type()}, {false, true});
  EXPECT_EQ(pop->accumulator_size(), 24u);
  EXPECT_TRUE(pop->trivially_copyable());
  for (const AggregateFunction* f : {pop.get(), samp.get()}) {
    Acc b(*f), c(*f);
    feed(*f, b.p(), doubles({0.27, Value::null()}));
    feed(*f, b.p(), doubles({0.27}), true);
    EXPECT_EQ(value(*f, b.p()), "NULL") << "group B";
    feed(*f, c.p(), doubles({0.27, 0.28, Value::null(), Value::null(), Value::null()}));
    feed(*f, c.p(), doubles({Value::null(), 0.27}), true);
    feed(*f, c.p(), doubles({0.30}));
    feed(*f, c.p(), doubles({0.27, 0.30, 0.28}), true);
    feed(*f, c.p(), doubles({0.27, 0.50}));
    EXPECT_EQ(value(*f, c.p()), f == pop.get() ? "0.0" : "NULL") << "group C";
  }
}

// Flink's merge of WELFORD_M2 accumulators (its MathAggFunctionITCase "merge": 0..49 in
// mini-batches, VAR_POP 208.25, VAR_SAMP 212.5); an accumulator with a negative count
// (retractions only) merges its count last, as Flink's merge() does.
TEST(AggregateTest, VarianceMergesLikeFlink) {
  auto var_pop = agg("VAR_POP", {LogicalType::double_type()});
  auto var_samp = agg("VAR_SAMP", {LogicalType::double_type()});
  for (const AggregateFunction* f : {var_pop.get(), var_samp.get()}) {
    Acc total(*f), low(*f), high(*f), negative(*f);
    Column a(LogicalType::double_type()), b(LogicalType::double_type());
    for (int i = 0; i < 25; ++i) a.append<double>(i);
    for (int i = 25; i < 50; ++i) b.append<double>(i);
    feed(*f, low.p(), a);
    feed(*f, high.p(), b);
    feed(*f, negative.p(), doubles({3.0}), true);
    f->merge(total.p(), low.p());
    f->merge(total.p(), high.p());
    EXPECT_EQ(value(*f, total.p()), f == var_pop.get() ? "208.25" : "212.5");
    // The negative accumulator only lowers the count (M2 = 10412.5 stays): 10412.5 / 49 and / 48.
    f->merge(total.p(), negative.p());
    EXPECT_EQ(value(*f, total.p()), f == var_pop.get() ? "212.5" : "216.92708333333334");
    std::string bytes;
    f->serialize(total.p(), bytes);
    EXPECT_EQ(bytes.size(), 24u);
  }
}

TEST(AggregateTest, FirstAndLastValueOverUpdatingInputKeepArrivalOrder) {
  auto first = agg("FIRST_VALUE", {LogicalType::string()}, {false, true});
  auto last = agg("LAST_VALUE", {LogicalType::string()}, {false, true});
  EXPECT_TRUE(first->supports_retraction());
  EXPECT_FALSE(first->supports_merge());  // Flink's has no merge()
  Acc f(*first), l(*last);
  feed(*first, f.p(), strings({"b", Value::null(), "a", "b"}));
  feed(*last, l.p(), strings({"a", "b", "a", Value::null()}));
  EXPECT_EQ(value(*first, f.p()), "b");
  EXPECT_EQ(value(*last, l.p()), "a");
  feed(*first, f.p(), strings({"b", "zz"}), true);  // the earliest b goes; zz was never there
  feed(*last, l.p(), strings({"a"}), true);         // the earliest a goes: the last is still a
  EXPECT_EQ(value(*first, f.p()), "a");
  EXPECT_EQ(value(*last, l.p()), "a");
  feed(*first, f.p(), strings({"a", "b"}), true);
  EXPECT_EQ(value(*first, f.p()), "NULL");
}

TEST(AggregateTest, FirstAndLastValueOverInsertOnlyInputAreFixedSize) {
  auto first = agg("FIRST_VALUE", {LogicalType::int_type()});
  auto last = agg("LAST_VALUE", {LogicalType::int_type()});
  EXPECT_TRUE(first->trivially_copyable());
  EXPECT_EQ(first->accumulator_size(), 8u);
  EXPECT_FALSE(first->supports_retraction());
  Acc f(*first), l(*last);
  EXPECT_EQ(value(*first, f.p()), "NULL");
  auto col = column_of(LogicalType::int_type(), {Value::null(), 4, 7, Value::null()});
  feed(*first, f.p(), col);
  feed(*last, l.p(), col);
  EXPECT_EQ(value(*first, f.p()), "4");
  EXPECT_EQ(value(*last, l.p()), "7");
}

// ListAggWsWithRetractAggFunction.merge: both lists concatenated, then both retraction
// lists applied (each removes the earliest equal value or stays pending); the merged
// separator is the other accumulator's.
TEST(AggregateTest, ListAggWithRetractionMergesAndRestoresLikeFlink) {
  auto listagg = agg("LISTAGG", {LogicalType::string(), LogicalType::string()}, {false, true});
  Acc a(*listagg), b(*listagg), restored(*listagg);
  feed2(*listagg, a.p(), strings({"a", "b"}), strings({",", ","}));
  feed2(*listagg, a.p(), strings({"c"}), strings({","}), true);  // nothing to remove: pending
  feed2(*listagg, b.p(), strings({"c", "d"}), strings({"-", "-"}));
  feed2(*listagg, b.p(), strings({"a", "x"}), strings({"-", "-"}), true);
  EXPECT_EQ(value(*listagg, a.p()), "a,b");
  EXPECT_EQ(value(*listagg, b.p()), "c-d");
  listagg->merge(a.p(), b.p());
  EXPECT_EQ(value(*listagg, a.p()), "b-d");
  std::string bytes;
  listagg->serialize(a.p(), bytes);
  std::string_view in = bytes;
  listagg->deserialize(restored.p(), in);
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(value(*listagg, restored.p()), "b-d");
  // The pending retraction of x survived the restore: a later x is not cancelled by it
  // (Flink applies pending retractions only in merge), but a merge cancels it.
  feed2(*listagg, restored.p(), strings({"x"}), strings({"-", "-"}));
  EXPECT_EQ(value(*listagg, restored.p()), "b-d-x");
  Acc empty_other(*listagg), x(*listagg);
  feed2(*listagg, x.p(), strings({"y"}), strings({"+"}));
  listagg->merge(restored.p(), x.p());
  EXPECT_EQ(value(*listagg, restored.p()), "b+d+y");
  listagg->merge(restored.p(), empty_other.p());  // an empty accumulator changes nothing
  EXPECT_EQ(value(*listagg, restored.p()), "b+d+y");
}

// Insert-only LISTAGG is Flink's declarative ListAggFunction: CONCAT(acc, sep, value), so
// a NULL separator makes the accumulator NULL and the next value starts it again.
TEST(AggregateTest, ListAggOverInsertOnlyInputConcatenates) {
  auto listagg = agg("LISTAGG", {LogicalType::string(), LogicalType::string()});
  EXPECT_FALSE(listagg->supports_retraction());
  Acc a(*listagg), b(*listagg);
  feed2(*listagg, a.p(), strings({"x", Value::null(), "y"}), strings({";", ";", ";"}));
  EXPECT_EQ(value(*listagg, a.p()), "x;y");
  feed2(*listagg, b.p(), strings({"p", "q", "r"}), strings({"|", Value::null(), "|"}));
  EXPECT_EQ(value(*listagg, b.p()), "r");
  listagg->merge(a.p(), b.p());
  EXPECT_EQ(value(*listagg, a.p()), "x;y|r");
}

TEST(AggregateTest, ArrayAggRespectsNullsAndMergesRetractionsLikeFlink) {
  auto array_agg = agg("ARRAY_AGG", {LogicalType::int_type()}, {false, true});
  EXPECT_EQ(array_agg->result_type().to_string(), "ARRAY<INT>");
  Acc a(*array_agg), b(*array_agg);
  EXPECT_EQ(value(*array_agg, a.p()), "NULL");
  feed(*array_agg, a.p(), column_of(LogicalType::int_type(), {1, Value::null(), 2, 1}));
  feed(*array_agg, a.p(), column_of(LogicalType::int_type(), {1, 9}), true);
  EXPECT_EQ(value(*array_agg, a.p()), "[NULL, 2, 1]");
  feed(*array_agg, b.p(), column_of(LogicalType::int_type(), {9, Value::null()}));
  array_agg->merge(a.p(), b.p());  // the pending 9 cancels b's 9
  EXPECT_EQ(value(*array_agg, a.p()), "[NULL, 2, 1, NULL]");
  // A pending retraction meets a later equal value only in a merge, even with an empty
  // accumulator (ArrayAggFunction.merge does not skip it; LISTAGG's does).
  Acc c(*array_agg), empty(*array_agg);
  feed(*array_agg, c.p(), column_of(LogicalType::int_type(), {5}), true);
  feed(*array_agg, c.p(), column_of(LogicalType::int_type(), {5}));
  EXPECT_EQ(value(*array_agg, c.p()), "[5]");
  array_agg->merge(c.p(), empty.p());
  EXPECT_EQ(value(*array_agg, c.p()), "NULL");
}

// COLLECT is Flink's CollectAggFunction: counts per non-NULL value; a retraction of a
// value never seen records it at -1 and a later row raises it to 0, where it stays (only
// a retraction at count 1 removes a value); merge adds the counts; restore keeps them
// and their first-insertion order (the order entries sharing a printed bucket keep).
TEST(AggregateTest, CollectCountsRetractsAndRestoresLikeFlink) {
  auto collect = agg("COLLECT", {LogicalType::int_type()}, {false, true});
  EXPECT_EQ(collect->result_type().to_string(), "MULTISET<INT> NOT NULL");
  EXPECT_TRUE(is_multiset(collect->result_type()));
  EXPECT_EQ(parse_logical_type("MULTISET<INT> NOT NULL"), collect->result_type());
  EXPECT_EQ(parse_logical_type("STRING MULTISET"), multiset_type(LogicalType::string()));
  EXPECT_FALSE(parse_logical_type("MAP<INT, INT NOT NULL>") == multiset_type(LogicalType::int_type()));
  EXPECT_FALSE(supports_assignment_cast(multiset_type(LogicalType::int_type()),
                                        LogicalType::map(LogicalType::int_type(), LogicalType::int_type())));
  Acc a(*collect), b(*collect), restored(*collect);
  EXPECT_EQ(value(*collect, a.p()), "{}");
  feed(*collect, a.p(), column_of(LogicalType::int_type(), {3, Value::null(), 1, 3}));
  feed(*collect, a.p(), column_of(LogicalType::int_type(), {1, 7, Value::null()}), true);
  EXPECT_EQ(value(*collect, a.p()), "{3=2, 7=-1}");
  feed(*collect, a.p(), column_of(LogicalType::int_type(), {7}));
  EXPECT_EQ(value(*collect, a.p()), "{3=2, 7=0}");
  feed(*collect, b.p(), column_of(LogicalType::int_type(), {7, 2}));
  collect->merge(a.p(), b.p());
  EXPECT_EQ(value(*collect, a.p()), "{3=2, 7=1, 2=1}");
  std::string bytes;
  collect->serialize(a.p(), bytes);
  std::string_view in = bytes;
  collect->deserialize(restored.p(), in);
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(value(*collect, restored.p()), "{3=2, 7=1, 2=1}");
  feed(*collect, restored.p(), column_of(LogicalType::int_type(), {7, 2}), true);
  EXPECT_EQ(value(*collect, restored.p()), "{3=2}");
}

}  // namespace clink::test
