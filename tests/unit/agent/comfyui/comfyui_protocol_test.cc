#include "agent/backends/comfyui/comfyui_protocol.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/comfyui/comfyui_fixtures.h"

namespace benchfleet::agent::comfyui {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::CapturedBody;
using testing::CapturedPromptIds;
using testing::CapturedWsMessages;

const std::vector<std::string> kGraphNodes = {"1", "2", "3", "4", "5"};

TEST(ComfyUiProtocolTest, SystemStats) {
  absl::StatusOr<SystemStats> stats = ParseSystemStats(CapturedBody("get_system_stats.json"));
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->comfyui_version, "0.3.64");
  EXPECT_EQ(stats->pytorch_version, "1.13.0a0");
  EXPECT_EQ(stats->python_version, "3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]");
  EXPECT_EQ(stats->os, "posix");
  EXPECT_FALSE(stats->simulated);
  ASSERT_EQ(stats->devices.size(), 1u);
  EXPECT_EQ(stats->devices[0].name, "cpu");
  EXPECT_EQ(stats->devices[0].type, "cpu");
  EXPECT_EQ(stats->devices[0].vram_total, 25276059648u);
  EXPECT_EQ(stats->devices[0].vram_free, 23374323712u);
  EXPECT_EQ(stats->devices[0].torch_vram_total, 25276059648u);
  EXPECT_EQ(stats->devices[0].torch_vram_free, 23374323712u);
}

TEST(ComfyUiProtocolTest, SystemStatsOfTheSimulatorAndGarbage) {
  absl::StatusOr<SystemStats> sim =
      ParseSystemStats(R"({"system": {"comfyui_version": "0.3.64-SIMULATED"}, "devices": []})");
  ASSERT_TRUE(sim.ok());
  EXPECT_TRUE(sim->simulated);
  EXPECT_EQ(ParseSystemStats("<html>").status(),
            absl::InvalidArgumentError("/system_stats is not ComfyUI's (no system and devices): <html>"));
}

// Found by the comfyui_system_stats fuzz target: a size beyond uint64_t was converted (undefined
// behaviour). It reads as 0, as a negative one does.
TEST(ComfyUiProtocolTest, SystemStatsSizesOutOfRangeAreZero) {
  absl::StatusOr<SystemStats> stats = ParseSystemStats(
      R"({"system": {}, "devices": [{"name": "cpu", "vram_total": 2.3e42, "vram_free": -1, "torch_vram_total": 1e19}]})");
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->devices.size(), 1u);
  EXPECT_EQ(stats->devices[0].vram_total, 0u);
  EXPECT_EQ(stats->devices[0].vram_free, 0u);
  EXPECT_EQ(stats->devices[0].torch_vram_total, 10000000000000000000u);
}

TEST(ComfyUiProtocolTest, PromptAccepted) {
  EXPECT_EQ(*ParsePromptAnswer(200, CapturedBody("post_prompt_ok_run1_first.json")),
            "1284e0ae-2e09-49a7-9c02-9f6e6b78cde6");
}

TEST(ComfyUiProtocolTest, PromptRejectedWithNodeErrors) {
  const std::string body = CapturedBody("post_prompt_invalid_multiple_input_errors.json");
  EXPECT_EQ(ParsePromptAnswer(400, body).status(),
            absl::InvalidArgumentError(
                "ComfyUI rejected the workflow: Prompt outputs failed validation; "
                "node 3 (KSampler) input steps: Value 0 smaller than min of 1 (steps); "
                "node 3 (KSampler) input sampler_name: Value not in list (sampler_name: 'nope' not in (list of length 42)); "
                "node 4 (CheckpointLoaderSimple) input ckpt_name: Value not in list (ckpt_name: "
                "'v1-5-pruned-emaonly.safetensors' not in []); "
                "node 5 (EmptyLatentImage) input width: Required input is missing (width)"));
  std::vector<NodeError> errors = ParseNodeErrors(body);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0].node, "3");
  EXPECT_EQ(errors[0].class_type, "KSampler");
  EXPECT_EQ(errors[0].input, "steps");
  EXPECT_EQ(errors[0].message, "Value 0 smaller than min of 1 (steps)");
}

TEST(ComfyUiProtocolTest, PromptRejectedWithoutNodeErrors) {
  EXPECT_EQ(ParsePromptAnswer(400, CapturedBody("post_prompt_invalid_no_outputs.json")).status(),
            absl::InvalidArgumentError("ComfyUI rejected the workflow: Prompt has no outputs"));
  EXPECT_EQ(ParsePromptAnswer(400, CapturedBody("post_prompt_invalid_unknown_class.json")).status(),
            absl::InvalidArgumentError("ComfyUI rejected the workflow: Cannot execute because node DoesNotExist does "
                                       "not exist. (Node ID '#1')"));
}

TEST(ComfyUiProtocolTest, PromptAnswerThatIsNotJson) {
  EXPECT_EQ(ParsePromptAnswer(502, "Bad Gateway").status(),
            absl::InternalError("POST /prompt answered 502 with a body that is not JSON: Bad Gateway"));
  EXPECT_EQ(ParsePromptAnswer(500, R"({"x": 1})").status(),
            absl::UnavailableError(R"(POST /prompt answered 500: {"x": 1})"));
}

TEST(ComfyUiProtocolTest, HistoryOfAFinishedRun) {
  absl::StatusOr<std::optional<Execution>> run1 = ParseHistory(
      CapturedBody("get_history_run1_first.json"), "1284e0ae-2e09-49a7-9c02-9f6e6b78cde6", kGraphNodes);
  ASSERT_TRUE(run1.ok()) << run1.status();
  ASSERT_TRUE(run1->has_value());
  const Execution& e = **run1;
  EXPECT_TRUE(e.finished);
  EXPECT_TRUE(e.success);
  EXPECT_EQ(*e.start_ms, 1795996575839);
  EXPECT_EQ(*e.end_ms, 1795996575972);
  EXPECT_TRUE(e.cached_seen);
  EXPECT_THAT(e.cached, IsEmpty());
  EXPECT_THAT(e.executed, ElementsAre("1", "2", "3", "4", "5"));
  ASSERT_EQ(e.images.size(), 1u);
  EXPECT_EQ(e.images[0].node, "4");
  EXPECT_EQ(e.images[0].filename, "heldout_00001_.png");
  EXPECT_EQ(e.images[0].subfolder, "");
  EXPECT_EQ(e.images[0].type, "output");
}

TEST(ComfyUiProtocolTest, HistoryOfACachedRun) {
  const std::string id = testing::Capture("get_history_run2_identical.json")["body_json"].begin().key();
  absl::StatusOr<std::optional<Execution>> run2 =
      ParseHistory(CapturedBody("get_history_run2_identical.json"), id, kGraphNodes);
  ASSERT_TRUE(run2.ok() && run2->has_value());
  EXPECT_THAT((*run2)->cached, ElementsAre("1", "2", "3", "5", "4"));
  EXPECT_THAT((*run2)->executed, IsEmpty());
  EXPECT_EQ(*(*run2)->end_ms - *(*run2)->start_ms, 0);
  EXPECT_EQ((*run2)->images[0].filename, "heldout_00001_.png");
}

TEST(ComfyUiProtocolTest, HistoryOfAFailedRun) {
  absl::StatusOr<std::optional<Execution>> run8 = ParseHistory(
      CapturedBody("get_history_run8_runtime_error.json"), "76d48706-1bbf-4e16-9861-5f05f01a80ab", kGraphNodes);
  ASSERT_TRUE(run8.ok() && run8->has_value());
  const Execution& e = **run8;
  EXPECT_TRUE(e.finished);
  EXPECT_FALSE(e.success);
  EXPECT_THAT(e.executed, ElementsAre("1", "2"));
  EXPECT_EQ(e.ErrorText(),
            "node 2 (ImageBlur) raised RuntimeError: Argument #4: Padding size should be less than the "
            "corresponding input dimension, but got: padding (10, 10) at dimension 3 of input 4");
}

TEST(ComfyUiProtocolTest, HistoryOfAnUnknownOrUnfinishedPrompt) {
  absl::StatusOr<std::optional<Execution>> unknown =
      ParseHistory(CapturedBody("get_history_unknown_id.json"), "nope", kGraphNodes);
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->has_value());
  absl::StatusOr<std::optional<Execution>> running =
      ParseHistory(R"({"p": {"prompt": [], "outputs": {}}})", "p", kGraphNodes);
  ASSERT_TRUE(running.ok());
  EXPECT_FALSE(running->has_value());
  EXPECT_EQ(ParseHistory("[1]", "p", kGraphNodes).status(),
            absl::InvalidArgumentError("/history answered a body that is not a JSON object: [1]"));
}

// Runs 1-8 of the captures, message by message, as the backend sees them.
TEST(ComfyUiProtocolTest, WebsocketMessagesOfRuns1To8) {
  const std::vector<std::string> ids = CapturedPromptIds();
  ASSERT_EQ(ids.size(), 8u);
  std::vector<Execution> runs;
  for (const std::string& id : ids) {
    ExecutionTracker tracker(id);
    for (const std::string& message : CapturedWsMessages()) {
      ASSERT_TRUE(tracker.Feed(message).ok()) << message;
    }
    EXPECT_TRUE(tracker.execution().finished) << id;
    runs.push_back(tracker.execution());
  }
  // run1: everything ran.
  EXPECT_THAT(runs[0].cached, IsEmpty());
  EXPECT_THAT(runs[0].executed, ElementsAre("1", "2", "3", "5", "4"));
  EXPECT_EQ(*runs[0].end_ms - *runs[0].start_ms, 133);
  ASSERT_EQ(runs[0].images.size(), 1u);
  EXPECT_EQ(runs[0].images[0].filename, "heldout_00001_.png");
  // run2: identical, all cached, 0 ms.
  EXPECT_THAT(runs[1].cached, ElementsAre("1", "2", "3", "5", "4"));
  EXPECT_THAT(runs[1].executed, IsEmpty());
  EXPECT_EQ(*runs[1].end_ms - *runs[1].start_ms, 0);
  EXPECT_EQ(runs[1].images[0].filename, "heldout_00001_.png");
  // run3: new seed, only EmptyImage cached.
  EXPECT_THAT(runs[2].cached, ElementsAre("1"));
  EXPECT_THAT(runs[2].executed, ElementsAre("2", "3", "5", "4"));
  // run4: only the prefix changed, only SaveImage ran.
  EXPECT_THAT(runs[3].cached, ElementsAre("1", "2", "3", "5"));
  EXPECT_THAT(runs[3].executed, ElementsAre("4"));
  // run5: back to run1's inputs; the classic cache keeps only the last prompt.
  EXPECT_THAT(runs[4].cached, ElementsAre("1"));
  // run6: after /free, nothing cached.
  EXPECT_THAT(runs[5].cached, IsEmpty());
  EXPECT_THAT(runs[5].executed, ElementsAre("1", "2", "3", "5", "4"));
  // run7: client-chosen prompt id.
  EXPECT_EQ(ids[6], "11111111-2222-3333-4444-555555555555");
  EXPECT_TRUE(runs[6].success);
  // run8: execution_error.
  EXPECT_FALSE(runs[7].success);
  EXPECT_THAT(runs[7].executed, ElementsAre("1", "2"));
  EXPECT_EQ(runs[7].error_node_type, "ImageBlur");
  EXPECT_EQ(runs[7].error_exception_type, "RuntimeError");
  EXPECT_THAT(runs[7].images, IsEmpty());
}

TEST(ComfyUiProtocolTest, WebsocketProgressAndGarbage) {
  ExecutionTracker tracker("p");
  absl::StatusOr<std::optional<Progress>> progress =
      tracker.Feed(R"({"type": "progress", "data": {"value": 3, "max": 20, "prompt_id": "p", "node": "3"}})");
  ASSERT_TRUE(progress.ok() && progress->has_value());
  EXPECT_EQ((*progress)->node, "3");
  EXPECT_EQ((*progress)->value, 3);
  EXPECT_EQ((*progress)->max, 20);
  absl::StatusOr<std::optional<Progress>> other =
      tracker.Feed(R"({"type": "progress", "data": {"value": 3, "max": 20, "prompt_id": "q", "node": "3"}})");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
  EXPECT_EQ(tracker.Feed("not json").status(),
            absl::InvalidArgumentError("a websocket message that is not ComfyUI's: not json"));
}

// Found by the comfyui_ws fuzz target: a timestamp beyond int64_t was converted (undefined
// behaviour). It reads as no timestamp.
TEST(ComfyUiProtocolTest, WebsocketTimestampOutOfRangeIsNone) {
  ExecutionTracker tracker("p");
  ASSERT_TRUE(tracker.Feed(R"({"type": "execution_start", "data": {"prompt_id": "p", "timestamp": 1.8e81}})").ok());
  EXPECT_FALSE(tracker.execution().start_ms.has_value());
  ASSERT_TRUE(tracker.Feed(R"({"type": "execution_start", "data": {"prompt_id": "p", "timestamp": 1795996576083.0}})").ok());
  EXPECT_EQ(tracker.execution().start_ms, 1795996576083);
}

}  // namespace
}  // namespace benchfleet::agent::comfyui
