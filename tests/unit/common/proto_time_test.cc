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

}  // namespace
}  // namespace benchfleet
