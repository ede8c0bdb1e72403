#include "common/proto_time.h"

#include "gtest/gtest.h"

namespace benchfleet {
namespace {

TEST(ProtoTimeTest, TimestampsAndDurationsKeepTheNanosecond) {
  google::protobuf::Timestamp ts;
  SetTimestamp(absl::FromUnixNanos(1767225600123456789), &ts);
  EXPECT_EQ(ts.seconds(), 1767225600);
  EXPECT_EQ(ts.nanos(), 123456789);
  SetTimestamp(absl::FromUnixNanos(-1), &ts);  // before 1970: nanos stay positive
  EXPECT_EQ(ts.seconds(), -1);
  EXPECT_EQ(ts.nanos(), 999999999);
  google::protobuf::Duration d;
  SetDuration(absl::Milliseconds(2418), &d);
  EXPECT_EQ(d.seconds(), 2);
  EXPECT_EQ(d.nanos(), 418000000);
  SetDuration(-absl::Milliseconds(1500), &d);  // same sign for both parts
  EXPECT_EQ(d.seconds(), -1);
  EXPECT_EQ(d.nanos(), -500000000);
}

TEST(ProtoTimeTest, BackToAbseilBothWaysAndAsSeconds) {
  for (const int64_t nanos : {int64_t{1767225600123456789}, int64_t{-1}, int64_t{0}}) {
    google::protobuf::Timestamp ts;
    SetTimestamp(absl::FromUnixNanos(nanos), &ts);
    EXPECT_EQ(ToTime(ts), absl::FromUnixNanos(nanos));
  }
  for (const absl::Duration d : {absl::Milliseconds(2418), -absl::Milliseconds(1500), absl::ZeroDuration()}) {
    google::protobuf::Duration proto;
    SetDuration(d, &proto);
    EXPECT_EQ(ToDuration(proto), d);
  }
  google::protobuf::Duration wall;
  SetDuration(absl::Milliseconds(2418), &wall);
  EXPECT_EQ(ToSeconds(wall), 2.418);
}

TEST(ProtoTimeTest, UtcTextToTheSecondOrExact) {
  const absl::Time t = absl::FromUnixMillis(1772359200250);  // 2026-03-01T10:00:00.25Z
  EXPECT_EQ(FormatUtcSeconds(t), "2026-03-01T10:00:00Z");
  EXPECT_EQ(FormatUtc(t), "2026-03-01T10:00:00.25Z");
  EXPECT_EQ(FormatUtc(absl::FromUnixSeconds(1772359200)), "2026-03-01T10:00:00Z");
}

}  // namespace
}  // namespace benchfleet
