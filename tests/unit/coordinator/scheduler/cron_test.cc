// CronExpression: parsing (errors name the field) and NextAfter / LatestIn at exact UTC times,
// including lists, ranges, steps, names, 7 as Sunday and Vixie cron's day-of-month OR day-of-week.
#include "coordinator/scheduler/cron.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet::coordinator {
namespace {

absl::Time At(const char* rfc3339) {
  absl::Time t;
  std::string err;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, rfc3339, &t, &err)) << err;
  return t;
}

std::string Next(const char* cron, const char* after) {
  absl::StatusOr<CronExpression> c = CronExpression::Parse(cron);
  EXPECT_TRUE(c.ok()) << c.status();
  if (!c.ok()) return "";
  std::optional<absl::Time> next = c->NextAfter(At(after));
  if (!next.has_value()) return "none";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", *next, absl::UTCTimeZone());
}

std::string Error(const char* cron) {
  absl::StatusOr<CronExpression> c = CronExpression::Parse(cron);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

TEST(CronTest, DailyAtThree) {
  EXPECT_EQ(Next("0 3 * * *", "2026-01-01T00:00:00Z"), "2026-01-01T03:00:00Z");
  EXPECT_EQ(Next("0 3 * * *", "2026-01-01T03:00:00Z"), "2026-01-02T03:00:00Z");  // strictly after
  EXPECT_EQ(Next("0 3 * * *", "2026-12-31T03:00:30Z"), "2027-01-01T03:00:00Z");
}

TEST(CronTest, EveryMinuteSkipsSecondsToTheNextWholeMinute) {
  EXPECT_EQ(Next("* * * * *", "2026-01-01T00:00:59Z"), "2026-01-01T00:01:00Z");
}

TEST(CronTest, ListsRangesAndSteps) {
  EXPECT_EQ(Next("*/15 * * * *", "2026-01-01T10:16:00Z"), "2026-01-01T10:30:00Z");
  EXPECT_EQ(Next("5,35 8-18/2 * * *", "2026-01-01T18:36:00Z"), "2026-01-02T08:05:00Z");
  EXPECT_EQ(Next("5,35 8-18/2 * * *", "2026-01-01T09:00:00Z"), "2026-01-01T10:05:00Z");
  EXPECT_EQ(Next("10/20 * * * *", "2026-01-01T00:31:00Z"), "2026-01-01T00:50:00Z");
}

TEST(CronTest, MonthAndDayNamesAndSevenIsSunday) {
  // 2026-01-01 is a Thursday; the first Monday is 2026-01-05.
  EXPECT_EQ(Next("0 9 * * mon", "2026-01-01T00:00:00Z"), "2026-01-05T09:00:00Z");
  EXPECT_EQ(Next("0 9 * * 7", "2026-01-01T00:00:00Z"), "2026-01-04T09:00:00Z");
  EXPECT_EQ(Next("0 9 * * 0", "2026-01-01T00:00:00Z"), "2026-01-04T09:00:00Z");
  EXPECT_EQ(Next("0 0 1 mar *", "2026-01-01T00:00:00Z"), "2026-03-01T00:00:00Z");
  EXPECT_EQ(Next("0 0 * * mon-fri", "2026-01-02T12:00:00Z"), "2026-01-05T00:00:00Z");
}

TEST(CronTest, BothDayFieldsRestrictedMatchEither) {
  // Vixie cron: the 13th OR any Friday. 2026-02-06 is a Friday, before the 13th.
  EXPECT_EQ(Next("0 0 13 * fri", "2026-02-01T00:00:00Z"), "2026-02-06T00:00:00Z");
  EXPECT_EQ(Next("0 0 13 * fri", "2026-02-06T00:00:00Z"), "2026-02-13T00:00:00Z");  // 13th, also Friday
  EXPECT_EQ(Next("0 0 13 * fri", "2026-02-13T00:00:00Z"), "2026-02-20T00:00:00Z");
  // Only one restricted: it alone decides.
  EXPECT_EQ(Next("0 0 13 * *", "2026-02-01T00:00:00Z"), "2026-02-13T00:00:00Z");
}

TEST(CronTest, LeapDayAndImpossibleDates) {
  EXPECT_EQ(Next("0 0 29 2 *", "2026-01-01T00:00:00Z"), "2028-02-29T00:00:00Z");
  EXPECT_EQ(Next("0 0 30 2 *", "2026-01-01T00:00:00Z"), "none");
}

TEST(CronTest, LatestInTakesOnlyTheLastSlot) {
  absl::StatusOr<CronExpression> c = CronExpression::Parse("0 * * * *");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->LatestIn(At("2026-01-01T00:00:00Z"), At("2026-01-01T03:30:00Z")), At("2026-01-01T03:00:00Z"));
  EXPECT_EQ(c->LatestIn(At("2026-01-01T00:00:00Z"), At("2026-01-01T01:00:00Z")), At("2026-01-01T01:00:00Z"));
  EXPECT_EQ(c->LatestIn(At("2026-01-01T00:00:00Z"), At("2026-01-01T00:59:00Z")), std::nullopt);
}

TEST(CronTest, ErrorsNameTheField) {
  EXPECT_EQ(Error("0 3 * *"),
            "cron '0 3 * *': expected 5 fields (minute hour day-of-month month day-of-week, UTC), got 4");
  EXPECT_EQ(Error("60 3 * * *"), "cron '60 3 * * *': minute field '60': '60' is not a value from 0 to 59");
  EXPECT_EQ(Error("0 24 * * *"), "cron '0 24 * * *': hour field '24': '24' is not a value from 0 to 23");
  EXPECT_EQ(Error("0 0 0 * *"), "cron '0 0 0 * *': day-of-month field '0': '0' is not a value from 1 to 31");
  EXPECT_EQ(Error("0 0 * 13 *"), "cron '0 0 * 13 *': month field '13': '13' is not a value from 1 to 12");
  EXPECT_EQ(Error("0 0 * * 8"), "cron '0 0 * * 8': day-of-week field '8': '8' is not a value from 0 to 7");
  EXPECT_EQ(Error("*/0 * * * *"),
            "cron '*/0 * * * *': minute field '*/0': step '0' must be a whole number of at least 1");
  EXPECT_EQ(Error("0 5-2 * * *"), "cron '0 5-2 * * *': hour field '5-2': range '5-2' goes backwards");
  EXPECT_EQ(Error("0 1,,2 * * *"), "cron '0 1,,2 * * *': hour field '1,,2': an empty list item");
}

}  // namespace
}  // namespace benchfleet::coordinator
