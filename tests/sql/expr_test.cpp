#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

TEST(ExprArithmeticTest, IntegersKeepFlinkTypesAndWrapAsFlink) {
  // Flink's semantics (the operators' own names): overflow wraps, a zero divisor fails.
  EXPECT_EQ(call("+", {i32(2), i32(3)})->type.to_string(), "INT NOT NULL");
  EXPECT_EQ(call("+", {i32(2147483647), i32(1)})->type.to_string(), "INT NOT NULL");
  EXPECT_EQ(eval_call("+", {i32(2), i32(3)}), "5");
  EXPECT_EQ(eval_call("+", {i32(2147483647), i32(1)}), "-2147483648");
  EXPECT_EQ(eval_call("+", {i32(2147483647), i64(1)}), "2147483648");
  EXPECT_EQ(eval_call("-", {i64(INT64_MIN), i64(1)}), "9223372036854775807");
  EXPECT_EQ(eval_call("*", {i64(INT64_MAX / 2 + 1), i64(2)}), "-9223372036854775808");
  EXPECT_EQ(eval_call("*", {i64(-3), i64(4)}), "-12");
  EXPECT_EQ(eval_call("/", {i32(7), i32(2)}), "3");
  EXPECT_EQ(eval_call("/", {i32(-7), i32(2)}), "-3");
  EXPECT_THROW(eval_call("/", {i32(7), i32(0)}), SqlRuntimeError);
  EXPECT_EQ(eval_call("/", {i64(INT64_MIN), i64(-1)}), "-9223372036854775808");
  EXPECT_EQ(eval_call("%", {i32(-7), i32(3)}), "-1");
  EXPECT_THROW(eval_call("MOD", {i32(7), i32(0)}), SqlRuntimeError);
  EXPECT_EQ(call("MOD", {i64(7), i32(3)})->type.to_string(), "INT NOT NULL");
  EXPECT_EQ(eval_call("MOD", {i64(10000000000), i32(7)}), "4");
  EXPECT_EQ(eval_call("-", {i32(-2147483647 - 1)}), "-2147483648");
  EXPECT_EQ(eval_call("-", {i32(5)}), "-5");
  EXPECT_EQ(eval_call("ABS", {i64(-9)}), "9");
  EXPECT_EQ(eval_call("ABS", {i64(INT64_MIN)}), "-9223372036854775808");
  EXPECT_EQ(eval_call("+", {i32(1), null_of(LogicalType::int_type())}), "NULL");
  EXPECT_EQ(eval_call("+", {i32(1), null_of()}), "NULL");
}

TEST(ExprArithmeticTest, NullOnErrorVariantsGiveNull) {
  // The seed's semantics ('clink.sql.arithmetic' = 'null': the binder calls $+ ...).
  // Over constants the value is known: NOT NULL when it is not NULL, nullable when the
  // call overflows.
  EXPECT_EQ(call("$+", {i32(2), i32(3)})->type.to_string(), "INT NOT NULL");
  EXPECT_EQ(call("$+", {i32(2147483647), i32(1)})->type.to_string(), "INT");
  EXPECT_EQ(eval_call("$+", {i32(2147483647), i32(1)}), "NULL");
  EXPECT_EQ(eval_call("$-", {i64(INT64_MIN), i64(1)}), "NULL");
  EXPECT_EQ(eval_call("$*", {i64(INT64_MAX / 2 + 1), i64(2)}), "NULL");
  EXPECT_EQ(eval_call("$/", {i32(7), i32(0)}), "NULL");
  EXPECT_EQ(eval_call("$/", {i64(INT64_MIN), i64(-1)}), "NULL");
  EXPECT_EQ(eval_call("$MOD", {i32(7), i32(0)}), "NULL");
  EXPECT_EQ(call("$MOD", {i64(7), i32(0)})->type.to_string(), "INT");
  EXPECT_EQ(eval_call("$-", {i32(-2147483647 - 1)}), "NULL");
  EXPECT_EQ(eval_call("$ABS", {i64(INT64_MIN)}), "NULL");
  EXPECT_EQ(eval_call("$/", {dec("1", 10, 2), i32(0)}), "NULL");
}

TEST(ExprArithmeticTest, DecimalAndFloatingPoint) {
  auto sum = call("+", {dec("1.25", 10, 2), dec("0.125", 5, 3)});
  EXPECT_EQ(sum->type.to_string(), "DECIMAL(12, 3) NOT NULL");  // a constant known not to be NULL
  EXPECT_EQ(eval(sum), "1.375");
  auto quotient = call("/", {dec("1", 10, 2), i32(3)});
  EXPECT_EQ(quotient->type.to_string(), "DECIMAL(21, 13) NOT NULL");
  EXPECT_EQ(eval(quotient), "0.3333333333333");
  EXPECT_THROW(eval_call("/", {dec("1", 10, 2), i32(0)}), SqlRuntimeError);
  EXPECT_EQ(eval_call("*", {dec("1.5", 2, 1), dec("-2.25", 3, 2)}), "-3.375");
  EXPECT_EQ(eval_call("%", {dec("7.5", 3, 1), i32(2)}), "1.5");
  EXPECT_EQ(eval_call("+", {dec("99999999999999999999999999999999999999", 38, 0), i32(1)}), "NULL");
  EXPECT_EQ(eval_call("*", {dec("1.5", 2, 1), f64(2)}), "3.0");
  EXPECT_EQ(eval_call("/", {f64(1), f64(0)}), "Infinity");
  EXPECT_EQ(eval_call("/", {f64(1), i32(3)}), "0.3333333333333333");
  EXPECT_EQ(eval_call("-", {dec("1.10", 3, 2)}), "-1.10");
}

TEST(ExprLogicTest, ThreeValuedLogic) {
  auto t = boolean(true), f = boolean(false), n = null_of(LogicalType::boolean());
  EXPECT_EQ(eval(expr::and_({t, n})), "NULL");
  EXPECT_EQ(eval(expr::and_({f, n})), "FALSE");
  EXPECT_EQ(eval(expr::and_({n, f})), "FALSE");
  EXPECT_EQ(eval(expr::and_({t, t, t})), "TRUE");
  EXPECT_EQ(eval(expr::or_({t, n})), "TRUE");
  EXPECT_EQ(eval(expr::or_({n, f})), "NULL");
  EXPECT_EQ(eval(expr::or_({f, f})), "FALSE");
  EXPECT_EQ(eval_call("NOT", {n}), "NULL");
  EXPECT_EQ(eval_call("NOT", {f}), "TRUE");
  EXPECT_EQ(eval_call("IS NULL", {n}), "TRUE");
  EXPECT_EQ(eval_call("IS NOT NULL", {n}), "FALSE");
  EXPECT_EQ(eval_call("IS TRUE", {n}), "FALSE");
  EXPECT_EQ(eval_call("IS NOT TRUE", {n}), "TRUE");
  EXPECT_EQ(eval_call("IS FALSE", {f}), "TRUE");
  EXPECT_EQ(eval_call("IS NOT FALSE", {t}), "TRUE");
  EXPECT_EQ(eval_call("IS DISTINCT FROM", {i32(1), null_of(LogicalType::int_type())}), "TRUE");
  EXPECT_EQ(eval_call("IS DISTINCT FROM", {null_of(LogicalType::int_type()), null_of(LogicalType::int_type())}), "FALSE");
  EXPECT_EQ(eval_call("IS NOT DISTINCT FROM", {i32(1), i64(1)}), "TRUE");
  EXPECT_THROW(expr::and_({i32(1), t}), SqlTypeError);
}

TEST(ExprLogicTest, ComparisonsBetweenInAndCase) {
  EXPECT_EQ(eval_call("=", {i32(1), i64(1)}), "TRUE");
  EXPECT_EQ(eval_call("<", {dec("1.5", 2, 1), i32(2)}), "TRUE");
  EXPECT_EQ(eval_call(">=", {str("abc"), str("abd")}), "FALSE");
  EXPECT_EQ(eval_call("<>", {str("a"), null_of(LogicalType::string())}), "NULL");
  EXPECT_EQ(eval_call("<", {str("Z"), str("a")}), "TRUE");
  EXPECT_THROW(call("=", {str("1"), i32(1)}), SqlTypeError);
  EXPECT_EQ(eval_call("BETWEEN", {i32(5), i32(1), i32(5)}), "TRUE");
  EXPECT_EQ(eval_call("NOT BETWEEN", {i32(5), i32(1), i32(4)}), "TRUE");
  EXPECT_EQ(eval(expr::in_list(i32(3), {i32(1), i32(3)})), "TRUE");
  EXPECT_EQ(eval(expr::in_list(i32(2), {i32(1), null_of(LogicalType::int_type())})), "NULL");
  EXPECT_EQ(eval(expr::in_list(i32(1), {i32(1), null_of(LogicalType::int_type())})), "TRUE");
  EXPECT_EQ(eval(expr::in_list(i32(2), {i32(1), i32(3)}, true)), "TRUE");
  EXPECT_EQ(eval(expr::in_list(str("b"), {str("a"), str("b")})), "TRUE");
  EXPECT_EQ(eval(expr::in_list(str("c"), {str("a"), null_of(LogicalType::string())}, true)), "NULL");
  auto c = expr::case_when({{call(">", {i32(1), i32(2)}), str("x")}, {call("<", {i32(1), i32(2)}), str("y")}}, str("z"));
  EXPECT_EQ(eval(c), "y");
  EXPECT_EQ(eval(expr::case_when({{boolean(false), i32(1)}}, nullptr)), "NULL");
  EXPECT_EQ(expr::case_when({{boolean(false), i32(1)}}, i64(2))->type.to_string(), "BIGINT NOT NULL");
  EXPECT_EQ(eval_call("IF", {null_of(LogicalType::boolean()), i32(1), i32(2)}), "2");
  EXPECT_EQ(eval_call("COALESCE", {null_of(LogicalType::int_type()), i32(7), i32(8)}), "7");
  EXPECT_EQ(eval_call("IFNULL", {null_of(LogicalType::string()), str("d")}), "d");
  EXPECT_EQ(eval_call("NULLIF", {i32(3), i32(3)}), "NULL");
  EXPECT_EQ(eval_call("NULLIF", {str("a"), str("b")}), "a");
  EXPECT_EQ(eval_call("GREATEST", {i32(3), i64(9), i32(-1)}), "9");
  EXPECT_EQ(eval_call("LEAST", {str("b"), str("a")}), "a");
  EXPECT_EQ(eval_call("GREATEST", {i32(3), null_of(LogicalType::int_type())}), "NULL");
}

TEST(ExprLogicTest, GuardedOperandsOnlyRunWhereReached) {
  // CASE WHEN s <> 'x' THEN CAST(s AS INT) ELSE -1 END: the CAST never sees 'x'.
  auto schema = make_schema({{"s", LogicalType::string()}});
  ColumnBatch b(schema);
  for (const char* v : {"1", "x", "3"}) b.append_row({v});
  b.append_row({Value::null()});
  auto s = expr::column(0, LogicalType::string(), "s");
  auto guarded = expr::case_when({{call("<>", {s, str("x")}), expr::cast(s, LogicalType::int_type())}}, i32(-1));
  EXPECT_EQ(eval_rows(guarded, b), (std::vector<std::string>{"1", "-1", "3", "-1"}));
  auto anded = expr::and_({call("<>", {s, str("x")}), call(">", {expr::cast(s, LogicalType::int_type()), i32(1)})});
  EXPECT_EQ(eval_rows(anded, b), (std::vector<std::string>{"FALSE", "FALSE", "TRUE", "NULL"}));
  auto coalesced = expr::coalesce({expr::try_cast(s, LogicalType::int_type()), i32(0)});
  EXPECT_EQ(eval_rows(coalesced, b), (std::vector<std::string>{"1", "0", "3", "0"}));
  EXPECT_THROW(eval_rows(expr::cast(s, LogicalType::int_type()), b), SqlRuntimeError);
}

TEST(ExprCompilerTest, PredicateAndProjectionOverABatch) {
  auto schema = make_schema({{"a", LogicalType::bigint()}, {"b", LogicalType::int_type()}, {"s", LogicalType::string()}});
  ColumnBatch in(schema);
  in.append_row({11, 1, "x"}, RowKind::kInsert, 100);
  in.append_row({5, 1, "y"}, RowKind::kUpdateAfter, 200);
  in.append_row({20, 9, "z"}, RowKind::kInsert, 300);
  in.append_row({Value::null(), 1, Value::null()}, RowKind::kDelete, 400);
  in.append_row({30, Value::null(), "w"}, RowKind::kDelete, 500);
  auto a = expr::column(0, LogicalType::bigint(), "a");
  auto b = expr::column(1, LogicalType::int_type(), "b");
  auto s = expr::column(2, LogicalType::string(), "s");
  auto pred = expr::and_({call(">", {a, i32(10)}), call("<", {b, i32(5)})});
  EXPECT_EQ(pred->to_string(), "AND(>(a, CAST(10 AS BIGINT)), <(b, 5))");
  CompiledPredicate p(pred);
  std::vector<std::uint32_t> sel;
  EXPECT_EQ(p.select(in, sel), 1u);
  EXPECT_EQ(sel, (std::vector<std::uint32_t>{0}));
  auto kept = p.filter(in);
  EXPECT_EQ(format_rows(kept), (std::vector<std::string>{"+I[11, 1, x]"}));
  CompiledProjection proj({call("+", {call("*", {a, i32(2)}), b}), call("UPPER", {s}), i32(7)}, {"x", "u", "k"});
  EXPECT_EQ(proj.output_schema()->to_string(), "(`x` BIGINT, `u` STRING, `k` INT NOT NULL)");
  auto out = proj.project(in);
  EXPECT_EQ(format_rows(out), (std::vector<std::string>{"+I[23, X, 7]", "+U[11, Y, 7]", "+I[49, Z, 7]", "-D[null, null, 7]",
                                                        "-D[null, W, 7]"}));
  EXPECT_EQ(out.event_times(), in.event_times());
  // Reusing the compiled program on the next batch gives fresh results.
  auto out2 = proj.project(kept);
  EXPECT_EQ(format_rows(out2), (std::vector<std::string>{"+I[23, X, 7]"}));
  EXPECT_THROW(CompiledPredicate{a}, SqlTypeError);
}

TEST(ExprCompilerTest, ConstantsFoldAndScalarsBroadcast) {
  auto folded = call("+", {i32(1), i32(2)});
  auto schema = make_schema({{"x", LogicalType::int_type()}});
  ColumnBatch b(schema);
  for (int i = 0; i < 130; ++i) b.append_row({i});
  auto e = call("-", {folded, expr::column(0, LogicalType::int_type(), "x")});
  auto rows = eval_rows(e, b);
  ASSERT_EQ(rows.size(), 130u);
  EXPECT_EQ(rows[0], "3");
  EXPECT_EQ(rows[129], "-126");
  auto up = call("CONCAT", {str("k"), expr::cast(expr::column(0, LogicalType::int_type(), "x"), LogicalType::string())});
  auto rows2 = eval_rows(up, b);
  EXPECT_EQ(rows2[0], "k0");
  EXPECT_EQ(rows2[129], "k129");
}

TEST(ExprBuilderTest, ErrorsNameTheProblem) {
  try {
    call("NO_SUCH_FN", {i32(1)});
    FAIL();
  } catch (const SqlTypeError& e) {
    EXPECT_STREQ(e.what(), "No such function: NO_SUCH_FN");
  }
  try {
    call("UPPER", {i32(1)});
    FAIL();
  } catch (const SqlTypeError& e) {
    EXPECT_STREQ(e.what(), "Cannot apply UPPER to arguments of type UPPER(INT NOT NULL). Supported signatures:\n  UPPER(STRING)");
  }
  EXPECT_THROW(expr::cast(expr::literal(Value(std::int64_t{1}), LogicalType::date()), LogicalType::int_type()), SqlTypeError);
  EXPECT_THROW(expr::coalesce({i32(1), str("a")}), SqlTypeError);
  EXPECT_THROW(call("IF", {boolean(true), i32(1)}), SqlTypeError);
}

TEST(ExprArithmeticTest, TemporalPlusMinusInterval) {
  auto ts = expr::cast(str("2020-01-31 23:30:00"), LogicalType::timestamp(3));
  auto hour = expr::literal(Value(std::int64_t{3600000}), LogicalType::interval_day_time(IntervalUnit::kHour, 2, 0));
  auto month = expr::literal(Value(std::int64_t{1}), LogicalType::interval_year_month(IntervalUnit::kMonth));
  EXPECT_EQ(eval_call("+", {ts, hour}), "2020-02-01 00:30:00.000");
  EXPECT_EQ(eval_call("+", {hour, ts}), "2020-02-01 00:30:00.000");
  EXPECT_EQ(eval_call("-", {ts, hour}), "2020-01-31 22:30:00.000");
  EXPECT_EQ(eval_call("+", {ts, month}), "2020-02-29 23:30:00.000");  // the day clamps
  auto date = expr::cast(str("2021-03-31"), LogicalType::date());
  EXPECT_EQ(eval_call("-", {date, month}), "2021-02-28");
  auto day = expr::literal(Value(std::int64_t{86400000}), LogicalType::interval_day_time(IntervalUnit::kDay, 2, 0));
  EXPECT_EQ(eval_call("+", {date, day}), "2021-04-01");
  auto time = expr::cast(str("23:30:00"), LogicalType::time(0));
  EXPECT_EQ(eval_call("+", {time, hour}), "00:30:00");
  EXPECT_EQ(eval_call("+", {hour, day}), "+1 01:00:00.000");
  EXPECT_EQ(eval_call("+", {ts, null_of(hour->type.with_nullable(true))}), "NULL");
  EXPECT_THROW(call("-", {hour, ts}), SqlTypeError);
  EXPECT_THROW(call("+", {time, month}), SqlTypeError);
}

}  // namespace clink::test
