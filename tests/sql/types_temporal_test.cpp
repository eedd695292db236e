#include <gtest/gtest.h>

#include "clink/sql/common/temporal.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/sql/function/date_format.hpp"

namespace clink::test {

using namespace clink::sql;

TEST(TemporalTest, CivilCalendarRoundTrips) {
  EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(days_from_civil(2020, 4, 15), 18367);
  EXPECT_EQ(days_from_civil(1969, 12, 31), -1);
  EXPECT_EQ(civil_from_days(18367), (CivilDate{2020, 4, 15}));
  EXPECT_EQ(civil_from_days(-719468), (CivilDate{0, 3, 1}));
  for (std::int64_t d = -800000; d < 800000; d += 997) EXPECT_EQ(d, days_from_civil(civil_from_days(d).year, civil_from_days(d).month, civil_from_days(d).day));
  EXPECT_EQ(iso_day_of_week(0), 4);      // Thursday
  EXPECT_EQ(iso_day_of_week(18367), 3);  // 2020-04-15 was a Wednesday
  EXPECT_FALSE(is_valid_civil(2021, 2, 29));
  EXPECT_TRUE(is_valid_civil(2000, 2, 29));
}

TEST(TemporalTest, FormatsLikeFlinkCastToString) {
  EXPECT_EQ(format_date(18367), "2020-04-15");
  EXPECT_EQ(format_date(-1), "1969-12-31");
  EXPECT_EQ(format_time(8 * 3600000 + 5 * 60000 + 7, 0), "08:05:00");
  EXPECT_EQ(format_time(8 * 3600000 + 5 * 60000 + 7, 3), "08:05:00.007");
  std::int64_t ts = (18367 * 86400LL + 8 * 3600 + 5 * 60) * 1000000 + 123456;
  EXPECT_EQ(format_timestamp(ts, 3), "2020-04-15 08:05:00.123");
  EXPECT_EQ(format_timestamp(ts, 0), "2020-04-15 08:05:00");
  EXPECT_EQ(format_timestamp(ts, 6), "2020-04-15 08:05:00.123456");
  EXPECT_EQ(format_timestamp(ts, 9), "2020-04-15 08:05:00.123456000");
  EXPECT_EQ(format_timestamp(-1, 6), "1969-12-31 23:59:59.999999");
}

TEST(TemporalTest, ParsesDatesTimesAndTimestamps) {
  EXPECT_EQ(parse_date("2020-04-15"), 18367);
  EXPECT_EQ(parse_date(" 2020-4-5 "), days_from_civil(2020, 4, 5));
  EXPECT_EQ(parse_date("2021-02-29"), std::nullopt);
  EXPECT_EQ(parse_date("2020-04-15x"), std::nullopt);
  EXPECT_EQ(parse_time("08:05:00.5"), 8 * 3600000 + 5 * 60000 + 500);
  EXPECT_EQ(parse_time("8:05"), 8 * 3600000 + 5 * 60000);
  EXPECT_EQ(parse_time("24:00:00"), std::nullopt);
  std::int64_t base = (18367 * 86400LL + 8 * 3600 + 5 * 60) * 1000000;
  EXPECT_EQ(parse_timestamp("2020-04-15 08:05:00"), base);
  EXPECT_EQ(parse_timestamp("2020-04-15T08:05:00.123456789"), base + 123456);
  EXPECT_EQ(parse_timestamp("2020-04-15"), 18367 * 86400LL * 1000000);
  EXPECT_EQ(parse_timestamp("2020-04-15 08:05:00Z"), std::nullopt);  // a zone is not a TIMESTAMP
  auto z = parse_timestamp_with_offset("2020-04-15T08:05:00+02:00");
  ASSERT_TRUE(z);
  EXPECT_TRUE(z->has_offset);
  EXPECT_EQ(z->micros, base - 2 * 3600 * 1000000LL);
  EXPECT_EQ(parse_timestamp_with_offset("2020-04-15T08:05:00Z")->micros, base);
  EXPECT_EQ(parse_timestamp("2020-13-01 00:00:00"), std::nullopt);
  EXPECT_EQ(parse_timestamp("2020-04-15 08:05:00.1234567890"), std::nullopt);
}

TEST(TimeZoneTest, ReadsIanaZonesWithDstAndRules) {
  auto berlin = TimeZone::of("Europe/Berlin");
  // 2021-03-28 01:00 UTC: CET -> CEST.
  std::int64_t switch_utc = days_from_civil(2021, 3, 28) * 86400 + 3600;
  EXPECT_EQ(berlin->offset_at_utc(switch_utc - 1), 3600);
  EXPECT_EQ(berlin->offset_at_utc(switch_utc), 7200);
  // Local 02:30 on that day is in the gap: moves forward to 03:30 CEST (01:30 UTC).
  EXPECT_EQ(berlin->local_to_utc(days_from_civil(2021, 3, 28) * 86400 + 2 * 3600 + 1800), switch_utc + 1800);
  // Local 02:30 on 2021-10-31 happens twice: the earlier instant (CEST, 00:30 UTC).
  EXPECT_EQ(berlin->local_to_utc(days_from_civil(2021, 10, 31) * 86400 + 2 * 3600 + 1800),
            days_from_civil(2021, 10, 31) * 86400 + 1800);
  // Past the table's last transition the POSIX footer rule applies (2100-07-01 is summer).
  EXPECT_EQ(berlin->offset_at_utc(days_from_civil(2100, 7, 1) * 86400), 7200);
  EXPECT_EQ(berlin->offset_at_utc(days_from_civil(2100, 1, 1) * 86400), 3600);
  auto shanghai = TimeZone::of("Asia/Shanghai");
  EXPECT_EQ(shanghai->offset_at_utc(days_from_civil(2020, 4, 15) * 86400), 8 * 3600);
  auto ny = TimeZone::of("America/New_York");
  EXPECT_EQ(ny->offset_at_utc(days_from_civil(2060, 7, 1) * 86400), -4 * 3600);
  EXPECT_EQ(ny->offset_at_utc(days_from_civil(2060, 12, 1) * 86400), -5 * 3600);
}

TEST(TimeZoneTest, FixedOffsetsAndErrors) {
  EXPECT_EQ(TimeZone::of("UTC")->offset_at_utc(123), 0);
  EXPECT_EQ(TimeZone::of("+08:00")->offset_at_utc(0), 8 * 3600);
  EXPECT_EQ(TimeZone::of("GMT-03:30")->offset_at_utc(0), -(3 * 3600 + 1800));
  EXPECT_EQ(TimeZone::of("UTC+8")->offset_at_utc(0), 8 * 3600);
  EXPECT_EQ(TimeZone::of("+08:00")->local_micros_to_utc(8 * 3600 * 1000000LL), 0);
  EXPECT_EQ(TimeZone::of("+08:00")->utc_micros_to_local(0), 8 * 3600 * 1000000LL);
  try {
    TimeZone::of("Mars/Olympus");
    FAIL();
  } catch (const clink::ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown time zone 'Mars/Olympus'"), std::string::npos);
  }
  EXPECT_THROW(TimeZone::of("../etc/passwd"), clink::ClinkError);
  EXPECT_THROW(TimeZone::of("+25:00"), clink::ClinkError);
}

TEST(DateFormatTest, JavaTimePatternLetters) {
  std::int64_t ts = (days_from_civil(2020, 4, 5) * 86400LL + 20 * 3600 + 5 * 60 + 9) * 1000000 + 123456;
  EXPECT_EQ(DateFormatter("yyyy-MM-dd HH:mm:ss").format(ts), "2020-04-05 20:05:09");
  EXPECT_EQ(DateFormatter("yy/M/d h:mm a").format(ts), "20/4/5 8:05 PM");
  EXPECT_EQ(DateFormatter("EEE, MMM d yyyy").format(ts), "Sun, Apr 5 2020");
  EXPECT_EQ(DateFormatter("EEEE MMMM dd").format(ts), "Sunday April 05");
  EXPECT_EQ(DateFormatter("HH:mm:ss.SSS").format(ts), "20:05:09.123");
  EXPECT_EQ(DateFormatter("ss.SSSSSS").format(ts), "09.123456");
  EXPECT_EQ(DateFormatter("D Q 'at' k 'o''clock'").format(ts), "96 2 at 20 o'clock");
  EXPECT_EQ(DateFormatter("yyyyMMdd").format(ts), "20200405");
  try {
    DateFormatter("yyyy-MM-dd Z");
    FAIL();
  } catch (const SqlTypeError& e) {
    EXPECT_STREQ(e.what(), "date format 'yyyy-MM-dd Z': pattern letter 'Z' at position 12 is not supported");
  }
  EXPECT_THROW(DateFormatter("'abc"), SqlTypeError);
}

}  // namespace clink::test
