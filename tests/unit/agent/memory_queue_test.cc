#include "agent/outbox/memory_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

v1::RunRecord Record(const std::string& run_id) {
  v1::RunRecord record;
  record.set_run_id(run_id);
  return record;
}

TEST(MemoryRecordQueueTest, AckAndRejectDropRecords) {
  MemoryRecordQueue queue;
  int wakeups = 0;
  queue.SetAppendListener([&] { ++wakeups; });
  queue.Add(Record("a"));
  queue.Add(Record("b"));
  queue.Add(Record("c"));
  EXPECT_EQ(wakeups, 3);
  EXPECT_EQ(queue.depth(), 3u);

  auto pending = queue.Pending(2, SIZE_MAX, 0);
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].run_id, "a");
  EXPECT_EQ(queue.Pending(10, SIZE_MAX, pending[1].seq).at(0).run_id, "c");

  ASSERT_TRUE(queue.Ack({"a"}).ok());
  ASSERT_TRUE(queue.Reject("b", "too large").ok());
  EXPECT_EQ(queue.Reject("zz", "x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(queue.depth(), 1u);
  EXPECT_THAT(queue.rejections(), ElementsAre(Pair("b", "too large")));
}

}  // namespace
}  // namespace benchfleet::agent
