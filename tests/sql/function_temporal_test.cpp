#include <gtest/gtest.h>

#include "clink/sql/common/temporal.hpp"
#include "expr_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

ExprPtr ts(const char* text, int precision = 3) {
  return expr::literal(Value(*parse_timestamp(text)), LogicalType::timestamp(precision).not_null());
}
ExprPtr date(const char* text) { return expr::literal(Value(std::int64_t{*parse_date(text)}), LogicalType::date().not_null()); }
ExprPtr time_of(const char* text) { return expr::literal(Value(std::int64_t{*parse_time(text)}), LogicalType::time(0).not_null()); }
// A TIMESTAMP_LTZ literal of the instant given as UTC text.
ExprPtr ltz(const char* utc_text) {
  return expr::literal(Value(*parse_timestamp(utc_text)), LogicalType::timestamp_ltz(3).not_null());
}
SessionContext zone(const char* id) {
  SessionContext s;
  s.time_zone = TimeZone::of(id);
  return s;
}
std::string extract(const char* unit, ExprPtr x) { return eval_call("EXTRACT", {str(unit), std::move(x)}); }

}  // namespace

TEST(TemporalFunctionTest, ExtractFromTimestampAndDate) {
  auto t = ts("2024-02-29 13:45:30.123");
  EXPECT_EQ(extract("YEAR", t), "2024");
  EXPECT_EQ(extract("QUARTER", t), "1");
  EXPECT_EQ(extract("MONTH", t), "2");
  EXPECT_EQ(extract("DAY", t), "29");
  EXPECT_EQ(extract("DOY", t), "60");
  EXPECT_EQ(extract("DOW", t), "5");  // Thursday, Sunday = 1
  EXPECT_EQ(extract("ISODOW", t), "4");
  EXPECT_EQ(extract("WEEK", t), "9");
  EXPECT_EQ(extract("HOUR", t), "13");
  EXPECT_EQ(extract("MINUTE", t), "45");
  EXPECT_EQ(extract("SECOND", t), "30");
  EXPECT_EQ(extract("MILLISECOND", t), "123");
  EXPECT_EQ(extract("MICROSECOND", t), "123000");
  EXPECT_EQ(extract("EPOCH", t), "1709214330");
  EXPECT_EQ(extract("DECADE", t), "202");
  EXPECT_EQ(extract("CENTURY", t), "21");
  EXPECT_EQ(extract("MILLENNIUM", t), "3");
  EXPECT_EQ(extract("day", date("2006-06-05")), "5");  // Flink doc: EXTRACT(DAY FROM DATE '2006-06-05')
  EXPECT_EQ(extract("ISOYEAR", date("2021-01-01")), "2020");
  EXPECT_EQ(extract("WEEK", date("2021-01-01")), "53");
  EXPECT_EQ(extract("EPOCH", date("1970-01-02")), "86400");
  EXPECT_EQ(extract("HOUR", time_of("12:44:31")), "12");
  EXPECT_EQ(extract("SECOND", time_of("12:44:31")), "31");
  EXPECT_EQ(eval_call("EXTRACT", {str("YEAR"), null_of(LogicalType::date())}), "NULL");
  EXPECT_EQ(call("EXTRACT", {str("YEAR"), date("2006-06-05")})->type.to_string(), "BIGINT NOT NULL");
  EXPECT_THROW(extract("HOUR", date("2006-06-05")), SqlTypeError);
  EXPECT_THROW(extract("FORTNIGHT", date("2006-06-05")), SqlTypeError);
}

TEST(TemporalFunctionTest, ExtractBefore1970AndFromIntervals) {
  auto t = ts("1969-12-31 23:00:00.250");
  EXPECT_EQ(extract("YEAR", t), "1969");
  EXPECT_EQ(extract("DAY", t), "31");
  EXPECT_EQ(extract("HOUR", t), "23");
  EXPECT_EQ(extract("MILLISECOND", t), "250");
  EXPECT_EQ(extract("EPOCH", t), "-3600");
  EXPECT_EQ(extract("DOW", date("1969-12-31")), "4");  // Wednesday
  auto ym = expr::literal(Value(std::int64_t{27}), LogicalType::interval_year_month().not_null());
  EXPECT_EQ(extract("YEAR", ym), "2");
  EXPECT_EQ(extract("MONTH", ym), "3");
  auto dt = expr::literal(Value(std::int64_t{(2 * 86400 + 3 * 3600 + 4 * 60 + 5) * 1000LL + 6}),
                          LogicalType::interval_day_time().not_null());
  EXPECT_EQ(extract("DAY", dt), "2");
  EXPECT_EQ(extract("HOUR", dt), "3");
  EXPECT_EQ(extract("MINUTE", dt), "4");
  EXPECT_EQ(extract("SECOND", dt), "5");
  EXPECT_EQ(extract("MILLISECOND", dt), "6");
}

TEST(TemporalFunctionTest, ShorthandsFlinkDocExamples) {
  auto d = date("1994-09-27");
  EXPECT_EQ(eval_call("YEAR", {d}), "1994");
  EXPECT_EQ(eval_call("QUARTER", {d}), "3");
  EXPECT_EQ(eval_call("MONTH", {d}), "9");
  EXPECT_EQ(eval_call("WEEK", {d}), "39");
  EXPECT_EQ(eval_call("DAYOFYEAR", {d}), "270");
  EXPECT_EQ(eval_call("DAYOFMONTH", {d}), "27");
  EXPECT_EQ(eval_call("DAYOFWEEK", {d}), "3");
  auto t = ts("1994-09-27 13:14:15");
  EXPECT_EQ(eval_call("HOUR", {t}), "13");
  EXPECT_EQ(eval_call("MINUTE", {t}), "14");
  EXPECT_EQ(eval_call("SECOND", {t}), "15");
  EXPECT_EQ(eval_call("YEAR", {null_of(LogicalType::timestamp(3))}), "NULL");
  EXPECT_THROW(call("HOUR", {d}), SqlTypeError);
}

TEST(TemporalFunctionTest, ExtractFromLtzUsesTheSessionZone) {
  auto i = ltz("2024-03-31 00:30:00");  // 01:30 CET; the clocks jump at 02:00 to 03:00
  EXPECT_EQ(eval(call("HOUR", {i}), zone("Europe/Berlin")), "1");
  auto j = ltz("2024-03-31 01:30:00");  // 03:30 CEST
  EXPECT_EQ(eval(call("HOUR", {j}), zone("Europe/Berlin")), "3");
  EXPECT_EQ(eval(call("DAYOFMONTH", {ltz("2024-03-30 16:00:00")}), zone("Asia/Shanghai")), "31");
  EXPECT_EQ(eval(call("DAYOFMONTH", {ltz("2024-03-30 16:00:00")})), "30");
}

TEST(TemporalFunctionTest, TimestampAddAndDiff) {
  EXPECT_EQ(eval_call("TIMESTAMPADD", {str("WEEK"), i32(1), date("2003-01-02")}), "2003-01-09");  // Flink doc
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("DAY"), ts("2003-01-02 10:00:00"), ts("2003-01-03 10:00:00")}), "1");  // Flink doc
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("DAY"), ts("2003-01-03 10:00:00"), ts("2003-01-02 10:00:01")}), "0");
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("HOUR"), ts("2003-01-03 10:00:00"), ts("2003-01-02 10:00:00")}), "-24");
  EXPECT_EQ(eval_call("TIMESTAMPADD", {str("YEAR"), i32(1), date("2024-02-29")}), "2025-02-28");
  EXPECT_EQ(eval_call("TIMESTAMPADD", {str("MONTH"), i32(1), date("2024-01-31")}), "2024-02-29");
  EXPECT_EQ(eval_call("TIMESTAMPADD", {str("QUARTER"), i32(-1), ts("2024-05-31 08:00:00")}), "2024-02-29 08:00:00.000");
  EXPECT_EQ(eval_call("TIMESTAMPADD", {str("MINUTE"), i32(-90), ts("1970-01-01 00:30:00")}), "1969-12-31 23:00:00.000");
  EXPECT_EQ(eval_call("TIMESTAMPADD", {str("SECOND"), i64(61), time_of("23:59:30")}), "00:00:31");
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("MONTH"), date("2024-01-31"), date("2024-02-29")}), "1");
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("MONTH"), ts("2024-01-31 10:00:00"), ts("2024-02-29 09:00:00")}), "0");
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("YEAR"), date("2000-02-29"), date("2024-02-28")}), "23");
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("YEAR"), date("2024-02-28"), date("2000-02-29")}), "-23");
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("QUARTER"), date("2024-01-01"), date("2024-12-31")}), "3");
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("SECOND"), ts("1969-12-31 23:59:59"), ts("1970-01-01 00:00:01")}), "2");
  EXPECT_EQ(eval_call("TIMESTAMPDIFF", {str("DAY"), null_of(LogicalType::timestamp(3)), ts("2003-01-03 10:00:00")}), "NULL");
  EXPECT_EQ(call("TIMESTAMPDIFF", {str("DAY"), ts("2003-01-02 10:00:00"), ts("2003-01-03 10:00:00")})->type.to_string(),
            "INT NOT NULL");
  EXPECT_THROW(eval_call("TIMESTAMPADD", {str("HOUR"), i32(1), date("2003-01-02")}), SqlTypeError);
  EXPECT_THROW(eval_call("TIMESTAMPADD", {str("MONTH"), i32(1), time_of("10:00:00")}), SqlTypeError);
  EXPECT_EQ(eval_call("TIMESTAMPADD", {str("SECOND"), i64(INT64_MAX / 2), ts("2003-01-02 00:00:00")}), "NULL");  // out of range
  EXPECT_EQ(eval_call("TIMESTAMPADD", {str("DAY"), i64(INT64_MAX / 2), date("2003-01-02")}), "NULL");
  EXPECT_THROW(call("TIMESTAMPDIFF", {str("DAY"), ltz("2003-01-02 10:00:00"), ts("2003-01-03 10:00:00")}), SqlTypeError);
}

TEST(TemporalFunctionTest, TimestampAddOnLtzAcrossDst) {
  auto berlin = zone("Europe/Berlin");
  // 2024-03-30 12:00 CET + 1 day = 2024-03-31 12:00 CEST (23 hours later).
  EXPECT_EQ(eval(call("TIMESTAMPADD", {str("DAY"), i32(1), ltz("2024-03-30 11:00:00")}), berlin), "2024-03-31 12:00:00.000");
  // 01:30 CET + 1 hour = 03:30 CEST.
  EXPECT_EQ(eval(call("TIMESTAMPADD", {str("HOUR"), i32(1), ltz("2024-03-31 00:30:00")}), berlin), "2024-03-31 03:30:00.000");
  EXPECT_EQ(eval(call("TIMESTAMPDIFF", {str("HOUR"), ltz("2024-03-30 11:00:00"), ltz("2024-03-31 10:00:00")}), berlin), "23");
}

TEST(TemporalFunctionTest, FloorAndCeilToUnit) {
  EXPECT_EQ(eval_call("FLOOR", {time_of("12:44:31"), str("MINUTE")}), "12:44:00");  // Flink doc
  EXPECT_EQ(eval_call("CEIL", {time_of("12:44:31"), str("MINUTE")}), "12:45:00");   // Flink doc
  auto t = ts("2024-05-15 10:20:30.456");
  EXPECT_EQ(eval_call("FLOOR", {t, str("YEAR")}), "2024-01-01 00:00:00.000");
  EXPECT_EQ(eval_call("FLOOR", {t, str("QUARTER")}), "2024-04-01 00:00:00.000");
  EXPECT_EQ(eval_call("FLOOR", {t, str("MONTH")}), "2024-05-01 00:00:00.000");
  EXPECT_EQ(eval_call("FLOOR", {t, str("WEEK")}), "2024-05-12 00:00:00.000");  // Sunday
  EXPECT_EQ(eval_call("FLOOR", {t, str("DAY")}), "2024-05-15 00:00:00.000");
  EXPECT_EQ(eval_call("FLOOR", {t, str("SECOND")}), "2024-05-15 10:20:30.000");
  EXPECT_EQ(eval_call("CEIL", {t, str("HOUR")}), "2024-05-15 11:00:00.000");
  EXPECT_EQ(eval_call("CEIL", {t, str("MONTH")}), "2024-06-01 00:00:00.000");
  EXPECT_EQ(eval_call("CEIL", {t, str("YEAR")}), "2025-01-01 00:00:00.000");
  EXPECT_EQ(eval_call("CEIL", {ts("2024-01-01 00:00:00"), str("YEAR")}), "2024-01-01 00:00:00.000");
  EXPECT_EQ(eval_call("FLOOR", {ts("1969-12-31 23:59:59.999"), str("DAY")}), "1969-12-31 00:00:00.000");
  EXPECT_EQ(eval_call("CEIL", {date("2024-02-10"), str("MONTH")}), "2024-03-01");
  EXPECT_EQ(eval_call("FLOOR", {null_of(LogicalType::date()), str("MONTH")}), "NULL");
  EXPECT_EQ(eval_call("FLOOR", {f64(2.5)}), "2.0");  // the numeric FLOOR still resolves
  auto shanghai = zone("Asia/Shanghai");
  EXPECT_EQ(eval(call("FLOOR", {ltz("2024-03-30 17:00:00"), str("DAY")}), shanghai), "2024-03-31 00:00:00.000");
}

TEST(TemporalFunctionTest, DateFormat) {
  EXPECT_EQ(eval_call("DATE_FORMAT", {ts("2020-04-15 08:05:09.123"), str("yyyy/MM/dd HH:mm:ss.SSS")}), "2020/04/15 08:05:09.123");
  EXPECT_EQ(eval_call("DATE_FORMAT", {str("2020-04-15 08:05:09"), str("yyyyMMdd")}), "20200415");
  EXPECT_EQ(eval_call("DATE_FORMAT", {str("not a time"), str("yyyyMMdd")}), "NULL");
  // The string form parses as SimpleDateFormat('yyyy-MM-dd HH:mm:ss'): a fraction is ignored,
  // a date alone does not parse.
  EXPECT_EQ(eval_call("DATE_FORMAT", {str("2020-04-15 08:05:09.123"), str("HH:mm:ss.SSS")}), "08:05:09.000");
  EXPECT_EQ(eval_call("DATE_FORMAT", {str("2020-04-15"), str("yyyyMMdd")}), "NULL");
  EXPECT_EQ(eval_call("DATE_FORMAT", {date("2020-04-15"), str("EEEE, MMM d")}), "Wednesday, Apr 15");
  EXPECT_EQ(eval_call("DATE_FORMAT", {null_of(LogicalType::timestamp(3)), str("yyyy")}), "NULL");
  EXPECT_EQ(eval(call("DATE_FORMAT", {ltz("2020-04-15 23:30:00"), str("yyyy-MM-dd HH:mm")}), zone("Asia/Shanghai")),
            "2020-04-16 07:30");
  EXPECT_THROW(eval_call("DATE_FORMAT", {ts("2020-04-15 08:05:09"), str("yyyy-ww")}), SqlTypeError);
}

TEST(TemporalFunctionTest, ParsingFunctions) {
  EXPECT_EQ(eval_call("TO_TIMESTAMP", {str("2017-09-15 00:00:00")}), "2017-09-15 00:00:00.000");
  EXPECT_EQ(eval_call("TO_TIMESTAMP", {str("2017-09-15 00:00:00.12345")}), "2017-09-15 00:00:00.123");
  EXPECT_EQ(eval_call("TO_TIMESTAMP", {str("15/09/2017 13:01"), str("dd/MM/yyyy HH:mm")}), "2017-09-15 13:01:00.000");
  EXPECT_EQ(eval_call("TO_TIMESTAMP", {str("20170915 01:02:03 PM"), str("yyyyMMdd hh:mm:ss a")}), "2017-09-15 13:02:03.000");
  EXPECT_EQ(eval_call("TO_TIMESTAMP", {str("2017-13-15 00:00:00")}), "NULL");
  EXPECT_EQ(eval_call("TO_TIMESTAMP", {str("garbage")}), "NULL");
  EXPECT_EQ(eval_call("TO_TIMESTAMP", {null_of(LogicalType::string())}), "NULL");
  EXPECT_EQ(call("TO_TIMESTAMP", {str("x")})->type.to_string(), "TIMESTAMP(3)");
  EXPECT_EQ(eval_call("TO_DATE", {str("2024-02-29")}), "2024-02-29");
  EXPECT_EQ(eval_call("TO_DATE", {str("2023-02-29")}), "NULL");
  EXPECT_EQ(eval_call("TO_DATE", {str("29.02.2024"), str("dd.MM.yyyy")}), "2024-02-29");
  EXPECT_EQ(eval_call("TO_DATE", {str("1969-12-31 23:59"), str("yyyy-MM-dd HH:mm")}), "1969-12-31");
  EXPECT_EQ(eval_call("UNIX_TIMESTAMP", {str("2017-09-15 00:00:00")}), "1505433600");
  EXPECT_EQ(eval_call("UNIX_TIMESTAMP", {str("1969-12-31 23:59:59")}), "-1");
  EXPECT_EQ(eval_call("UNIX_TIMESTAMP", {str("2017/09/15"), str("yyyy/MM/dd")}), "1505433600");
  EXPECT_EQ(eval_call("UNIX_TIMESTAMP", {str("nope")}), "-9223372036854775808");  // Long.MIN_VALUE as Flink
  EXPECT_EQ(eval(call("UNIX_TIMESTAMP", {str("2017-09-15 00:00:00")}), zone("Asia/Shanghai")), "1505404800");
  EXPECT_EQ(eval(call("UNIX_TIMESTAMP", {str("2024-10-27 02:30:00")}), zone("Europe/Berlin")), "1729989000");  // overlap: the earlier (CEST)
  EXPECT_THROW(eval_call("TO_TIMESTAMP", {str("x"), str("yyyy-ww")}), SqlTypeError);
  // Flink doc (table.local-time-zone = Europe/Berlin): an X offset in the text wins over the
  // session zone; SimpleDateFormat ignores text after the pattern; a missing offset fails.
  auto berlin = zone("Europe/Berlin");
  EXPECT_EQ(eval(call("UNIX_TIMESTAMP", {str("1970-01-01 08:00:01.001"), str("yyyy-MM-dd HH:mm:ss.SSS")}), berlin), "25201");
  EXPECT_EQ(eval(call("UNIX_TIMESTAMP", {str("1970-01-01 08:00:01.001 +0800"), str("yyyy-MM-dd HH:mm:ss.SSS X")}), berlin), "1");
  EXPECT_EQ(eval(call("UNIX_TIMESTAMP", {str("1970-01-01 08:00:01.001 +0800"), str("yyyy-MM-dd HH:mm:ss.SSS")}), berlin), "25201");
  EXPECT_EQ(eval(call("UNIX_TIMESTAMP", {str("1970-01-01 08:00:01.001"), str("yyyy-MM-dd HH:mm:ss.SSS X")}), berlin),
            "-9223372036854775808");
  EXPECT_EQ(eval_call("TO_TIMESTAMP", {str("2017-09-15 08:00:00 +08:00"), str("yyyy-MM-dd HH:mm:ss X")}), "2017-09-15 00:00:00.000");
  EXPECT_EQ(eval_call("TO_TIMESTAMP", {str("2017-09-15 08:00:00 tail"), str("yyyy-MM-dd HH:mm:ss")}), "NULL");
  EXPECT_EQ(eval_call("TO_DATE", {str("2017-09-15 tail"), str("yyyy-MM-dd")}), "2017-09-15");
}

TEST(TemporalFunctionTest, FromUnixtimeConvertTzAndToTimestampLtz) {
  EXPECT_EQ(eval_call("FROM_UNIXTIME", {i64(44)}), "1970-01-01 00:00:44");  // Flink doc
  EXPECT_EQ(eval(call("FROM_UNIXTIME", {i64(44)}), zone("Asia/Tokyo")), "1970-01-01 09:00:44");  // Flink doc
  EXPECT_EQ(eval_call("FROM_UNIXTIME", {i64(-1)}), "1969-12-31 23:59:59");
  EXPECT_EQ(eval_call("FROM_UNIXTIME", {i64(1505404800), str("MMdd-yyyy")}), "0914-2017");
  EXPECT_EQ(eval_call("FROM_UNIXTIME", {null_of(LogicalType::bigint())}), "NULL");
  EXPECT_EQ(eval_call("CONVERT_TZ", {str("1970-01-01 00:00:00"), str("UTC"), str("America/Los_Angeles")}),
            "1969-12-31 16:00:00");  // Flink doc
  EXPECT_EQ(eval_call("CONVERT_TZ", {str("2024-03-31 01:30:00"), str("Europe/Berlin"), str("Asia/Shanghai")}),
            "2024-03-31 08:30:00");
  EXPECT_EQ(eval_call("CONVERT_TZ", {str("bad"), str("UTC"), str("Asia/Shanghai")}), "NULL");
  EXPECT_THROW(eval_call("CONVERT_TZ", {str("1970-01-01 00:00:00"), str("UTC"), str("Mars/Base")}), clink::ClinkError);
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {i64(1500000000), i32(0)}), "2017-07-14 02:40:00.000");
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {i64(1500000000123), i32(3)}), "2017-07-14 02:40:00.123");
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {i64(-1), i32(3)}), "1969-12-31 23:59:59.999");
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {f64(1.5), i32(0)}), "1970-01-01 00:00:01.500");
  EXPECT_EQ(eval(call("TO_TIMESTAMP_LTZ", {i64(0), i32(0)}), zone("Asia/Shanghai")), "1970-01-01 08:00:00.000");
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {null_of(LogicalType::bigint()), i32(0)}), "NULL");
  EXPECT_THROW(eval_call("TO_TIMESTAMP_LTZ", {i64(1), i32(6)}), SqlRuntimeError);
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {i64(1000)}), "1970-01-01 00:00:01.000");  // default precision 3
  // The string forms: default format 'yyyy-MM-dd HH:mm:ss.SSS' in UTC, or a zone.
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {str("2023-05-04 23:42:55.123")}), "2023-05-04 23:42:55.123");
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {str("2023-05-04 23:42:55")}), "NULL");
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {str("2023-05-04 23:42"), str("yyyy-MM-dd HH:mm"), str("Asia/Shanghai")}),
            "2023-05-04 15:42:00.000");
  EXPECT_EQ(eval(call("TO_TIMESTAMP_LTZ", {str("2024-03-31 02:30"), str("yyyy-MM-dd HH:mm"), str("Europe/Berlin")}),
                 zone("Europe/Berlin")),
            "2024-03-31 03:30:00.000");  // in the DST gap: moved forward, as java.time
  EXPECT_EQ(eval_call("TO_TIMESTAMP_LTZ", {str("x"), null_of(LogicalType::string())}), "NULL");
}

TEST(TemporalFunctionTest, ClockFunctionsReadTheBatchClock) {
  SessionContext s = zone("Europe/Berlin");
  auto bt = std::make_shared<BatchTimeContext>();
  bt->now_micros = *parse_timestamp("2024-03-31 00:59:59.999999");  // UTC; 01:59:59 CET
  s.batch_time = bt;
  EXPECT_EQ(eval(call("CURRENT_TIMESTAMP", {}), s), "2024-03-31 01:59:59.999");
  EXPECT_EQ(eval(call("NOW", {}), s), "2024-03-31 01:59:59.999");
  EXPECT_EQ(eval(call("PROCTIME", {}), s), "2024-03-31 01:59:59.999");
  EXPECT_EQ(eval(call("LOCALTIMESTAMP", {}), s), "2024-03-31 01:59:59.999");
  EXPECT_EQ(eval(call("CURRENT_DATE", {}), s), "2024-03-31");
  EXPECT_EQ(eval(call("CURRENT_TIME", {}), s), "01:59:59");
  EXPECT_EQ(eval(call("UNIX_TIMESTAMP", {}), s), "1711846799");
  EXPECT_EQ(call("CURRENT_TIMESTAMP", {})->type.to_string(), "TIMESTAMP_LTZ(3) NOT NULL");
  EXPECT_FALSE(call("NOW", {})->function->deterministic);
  // Without a fixed clock: the system clock, not folded at compile time.
  EXPECT_GT(std::stoll(eval(call("UNIX_TIMESTAMP", {}))), 1700000000);
}

TEST(TemporalFunctionTest, CurrentWatermark) {
  auto rowtime = expr::column(0, LogicalType::timestamp(3), "rt");
  auto schema = make_schema({{"rt", LogicalType::timestamp(3)}});
  ColumnBatch b(schema);
  b.column(0).append(std::int64_t{0});
  b.column(0).append(std::int64_t{1000});
  b.commit_rows(2);
  SessionContext s;
  auto bt = std::make_shared<BatchTimeContext>();
  s.batch_time = bt;
  CompiledExpr c(call("CURRENT_WATERMARK", {rowtime}), s);
  EXPECT_TRUE(c.evaluate(b).is_null(0));  // before the first watermark
  EXPECT_TRUE(c.evaluate(b).is_null(1));
  bt->current_watermark_millis = 1500;
  const Column& out = c.evaluate(b);
  EXPECT_EQ(cell(out, 0, *s.time_zone), "1970-01-01 00:00:01.500");
  EXPECT_EQ(cell(out, 1, *s.time_zone), "1970-01-01 00:00:01.500");
  EXPECT_EQ(call("CURRENT_WATERMARK", {rowtime})->type.to_string(), "TIMESTAMP(3)");
  // Flink: the rowtime's type with precision 3.
  EXPECT_EQ(call("CURRENT_WATERMARK", {expr::column(0, LogicalType::timestamp_ltz(9), "rt")})->type.to_string(),
            "TIMESTAMP_LTZ(3)");
  EXPECT_EQ(eval(call("CURRENT_WATERMARK", {ltz("2024-01-01 00:00:00")})), "NULL");
}

// Every NULL-propagating function of the temporal, hash and JSON groups: a NULL in any
// value position gives NULL (unit and clause positions are constants, not values).
TEST(TemporalFunctionTest, NullInAnyValuePositionGivesNull) {
  struct Case {
    const char* name;
    std::vector<ExprPtr> args;
    std::size_t first_value;  // positions before it are constant units
  };
  std::vector<Case> cases = {
      {"EXTRACT", {str("YEAR"), ts("2020-01-01 00:00:00")}, 1}, {"YEAR", {date("2020-01-01")}, 0},
      {"HOUR", {ts("2020-01-01 10:00:00")}, 0}, {"TIMESTAMPADD", {str("DAY"), i32(1), ts("2020-01-01 00:00:00")}, 1},
      {"TIMESTAMPDIFF", {str("DAY"), date("2020-01-01"), date("2020-01-02")}, 1},
      {"DATE_FORMAT", {ts("2020-01-01 00:00:00"), str("yyyy")}, 0}, {"TO_TIMESTAMP", {str("2020-01-01 00:00:00")}, 0},
      {"TO_TIMESTAMP", {str("2020"), str("yyyy")}, 0}, {"TO_DATE", {str("2020-01-01")}, 0},
      {"TO_DATE", {str("2020"), str("yyyy")}, 0}, {"UNIX_TIMESTAMP", {str("2020-01-01 00:00:00")}, 0},
      {"UNIX_TIMESTAMP", {str("2020"), str("yyyy")}, 0}, {"FROM_UNIXTIME", {i64(1)}, 0},
      {"FROM_UNIXTIME", {i64(1), str("yyyy")}, 0}, {"CONVERT_TZ", {str("2020-01-01 00:00:00"), str("UTC"), str("UTC")}, 0},
      {"TO_TIMESTAMP_LTZ", {i64(1), i32(3)}, 0}, {"TO_TIMESTAMP_LTZ", {str("2020-01-01 00:00:00.000")}, 0},
      {"MD5", {str("a")}, 0}, {"SHA1", {str("a")}, 0}, {"SHA512", {str("a")}, 0}, {"SHA2", {str("a"), i32(256)}, 0},
      {"JSON_VALUE", {str("{\"a\":1}"), str("$.a")}, 0}, {"JSON_QUERY", {str("{\"a\":[1]}"), str("$.a")}, 0},
      {"JSON_EXISTS", {str("{\"a\":1}"), str("$.a")}, 0}, {"JSON_STRING", {i32(1)}, 0},
  };
  for (const auto& c : cases) {
    std::string label = c.name + std::string("/") + std::to_string(c.args.size());
    EXPECT_NE(eval_call(c.name, c.args), "NULL") << label;
    for (std::size_t k = c.first_value; k < c.args.size(); ++k) {
      auto args = c.args;
      args[k] = null_of(c.args[k]->type.with_nullable(true));
      EXPECT_EQ(eval_call(c.name, args), "NULL") << label << " with NULL argument " << k;
      EXPECT_TRUE(call(c.name, args)->type.nullable()) << label << " with NULL argument " << k;
    }
  }
}

// Failing rows that a CASE does not select raise nothing (the kernels check active rows).
TEST(TemporalFunctionTest, ErrorsOnlyForActiveRows) {
  auto schema = make_schema(
      {{"bits", LogicalType::int_type()}, {"p", LogicalType::int_type()}, {"j", LogicalType::string()}});
  ColumnBatch b(schema);
  b.column(0).append(std::int32_t{256});
  b.column(0).append(std::int32_t{7});
  b.column(1).append(std::int32_t{0});
  b.column(1).append(std::int32_t{5});
  b.column(2).append_string(R"({"a": 1})");
  b.column(2).append_string("[1]");
  b.commit_rows(2);
  auto bits = expr::column(0, LogicalType::int_type(), "bits");
  auto p = expr::column(1, LogicalType::int_type(), "p");
  auto j = expr::column(2, LogicalType::string(), "j");
  auto ok_bits = call("=", {bits, i32(256)});
  auto sha = expr::case_when({{ok_bits, call("SHA2", {str(""), bits})}}, nullptr);
  EXPECT_EQ(eval_rows(sha, b), (std::vector<std::string>{
                                   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "NULL"}));
  EXPECT_THROW(eval_rows(call("SHA2", {str(""), bits}), b), SqlRuntimeError);
  auto ok_p = call("=", {p, i32(0)});
  auto ltz_expr = expr::case_when({{ok_p, call("TO_TIMESTAMP_LTZ", {i64(1), p})}}, nullptr);
  EXPECT_EQ(eval_rows(ltz_expr, b), (std::vector<std::string>{"1970-01-01 00:00:01.000", "NULL"}));
  auto nstr = null_of(LogicalType::string());
  auto strict_value = call("JSON_VALUE", {j, str("strict $.a"), str("NULL"), nstr, str("ERROR"), nstr});
  EXPECT_EQ(eval_rows(expr::case_when({{ok_p, strict_value}}, nullptr), b), (std::vector<std::string>{"1", "NULL"}));
  EXPECT_THROW(eval_rows(strict_value, b), SqlRuntimeError);
}

// The clock functions give every row of a batch the same value; a later batch reads the
// clock again.
TEST(TemporalFunctionTest, ClockIsReadOncePerBatch) {
  auto schema = make_schema({{"x", LogicalType::int_type()}});
  ColumnBatch b(schema);
  for (std::int32_t i = 0; i < 3; ++i) b.column(0).append(i);
  b.commit_rows(3);
  SessionContext s;
  auto bt = std::make_shared<BatchTimeContext>();
  bt->now_micros = 1500;
  s.batch_time = bt;
  CompiledExpr c(call("CURRENT_TIMESTAMP", {}), s);
  const Column& first = c.evaluate(b);
  for (std::size_t r = 0; r < 3; ++r) EXPECT_EQ(cell(first, r, *s.time_zone), "1970-01-01 00:00:00.001");
  bt->now_micros = 2'000'000;
  const Column& second = c.evaluate(b);
  for (std::size_t r = 0; r < 3; ++r) EXPECT_EQ(cell(second, r, *s.time_zone), "1970-01-01 00:00:02.000");
}

}  // namespace clink::test
