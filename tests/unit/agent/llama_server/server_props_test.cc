#include "agent/backends/llama_server/server_props.h"

#include <gtest/gtest.h>

#include "tests/unit/agent/llama_server/replay_server.h"

namespace benchfleet::agent::llama_server {
namespace {

using ::benchfleet::agent::testing::Fixture;
using ::benchfleet::agent::testing::ReplyFromCapture;

TEST(ServerPropsTest, ParsesTheCapturedProps) {
  absl::StatusOr<ServerProps> props = ParseServerProps(ReplyFromCapture(Fixture("props.txt")).body);
  ASSERT_TRUE(props.ok()) << props.status();
  EXPECT_EQ(props->build_info, "b10587-3f545becc");
  EXPECT_EQ(props->model_path, "tiny.gguf");
  EXPECT_EQ(props->n_ctx, 256);
  EXPECT_EQ(props->total_slots, 4);
}

TEST(ServerPropsTest, RejectsWhatIsNotProps) {
  EXPECT_EQ(ParseServerProps("<html>").status().message(), "the /props answer is not a JSON object");
  absl::StatusOr<ServerProps> old = ParseServerProps(R"({"total_slots":1})");
  EXPECT_EQ(old.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(old.status().message(), "the /props answer has no build_info");
  absl::StatusOr<ServerProps> bare = ParseServerProps(R"({"build_info":"b1-SIMULATED"})");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->n_ctx, std::nullopt);
  EXPECT_EQ(bare->total_slots, std::nullopt);
}

}  // namespace
}  // namespace benchfleet::agent::llama_server
