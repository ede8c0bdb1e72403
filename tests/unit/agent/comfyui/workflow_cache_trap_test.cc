#include "agent/backends/comfyui/cache_trap.h"
#include "agent/backends/comfyui/workflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/agent/comfyui/comfyui_fixtures.h"

namespace benchfleet::agent::comfyui {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The captures' graph: 1 EmptyImage -> 2 ImageAddNoise(seed) -> 3 ImageScale -> 5 ImageScale ->
// 4 SaveImage(filename_prefix).
Workflow CapturedGraph() {
  const nlohmann::json body = testing::Capture("post_prompt_ok_run1_first.json");
  absl::StatusOr<Workflow> w = Workflow::Parse(body["request"]["body"]["prompt"].dump());
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

const std::vector<SetTarget> kSeed = {{"seed", "2", "seed"}};

TEST(WorkflowTest, ParsesNodesAndLinks) {
  const Workflow w = CapturedGraph();
  EXPECT_THAT(w.node_ids(), ElementsAre("1", "2", "3", "4", "5"));
  EXPECT_EQ(w.nodes().at("2").class_type, "ImageAddNoise");
  EXPECT_THAT(w.nodes().at("2").upstream, ElementsAre("1"));
  EXPECT_THAT(w.nodes().at("4").inputs, ElementsAre("filename_prefix", "images"));
  EXPECT_THAT(w.Dependents({"2"}), ElementsAre("2", "3", "4", "5"));
  EXPECT_THAT(w.Dependents({"4"}), ElementsAre("4"));
}

TEST(WorkflowTest, RefusesWhatIsNotAnApiGraph) {
  EXPECT_EQ(Workflow::Parse("{").status(), absl::InvalidArgumentError("the workflow is not JSON"));
  EXPECT_EQ(Workflow::Parse(R"({"nodes": [], "links": []})").status(),
            absl::InvalidArgumentError(
                "the workflow is in ComfyUI's UI format (nodes and links lists); export it with \"Save (API)\""));
  EXPECT_EQ(Workflow::Parse(R"({"1": {"inputs": {}}})").status(),
            absl::InvalidArgumentError("the workflow's node 1 has no class_type"));
  EXPECT_EQ(Workflow::Parse(R"({"1": {"class_type": "A", "inputs": {"x": ["9", 0]}}})").status(),
            absl::InvalidArgumentError("the workflow's node 1 links to node 9, which is not in the graph"));
}

TEST(WorkflowTest, SubstitutesValues) {
  const Workflow w = CapturedGraph();
  absl::StatusOr<std::string> graph =
      w.Substitute({{"seed", "2", "seed"}, {"prompt", "4", "filename_prefix"}}, {{"seed", "43"}, {"prompt", "\"x\""}});
  ASSERT_TRUE(graph.ok()) << graph.status();
  const nlohmann::json json = nlohmann::json::parse(*graph);
  EXPECT_EQ(json["2"]["inputs"]["seed"], 43);
  EXPECT_EQ(json["4"]["inputs"]["filename_prefix"], "x");
  EXPECT_EQ(json["3"]["inputs"]["width"], 2048);
  EXPECT_EQ(w.Substitute(kSeed, {}).status(), absl::InvalidArgumentError("no value for seed"));
}

TEST(CacheTrapTest, NodesDependingOnPerRunValues) {
  const Workflow w = CapturedGraph();
  // run2 (identical inputs): everything cached, the seeded work included.
  EXPECT_THAT(CachedMeasuredNodes(w, kSeed, {"1", "2", "3", "5", "4"}), ElementsAre("2", "3", "5", "4"));
  // run3 (new seed): only EmptyImage, which no per-run value reaches.
  EXPECT_THAT(CachedMeasuredNodes(w, kSeed, {"1"}), IsEmpty());
  EXPECT_EQ(CachedNodesReason(v1::PHASE_WARM, w, kSeed, {"1"}), "");
}

TEST(CacheTrapTest, PrefixOnlyChangeIsFlaggedWhenTheSeedStayed) {
  const Workflow w = CapturedGraph();
  // run4: same seed as run3, only the filename prefix changed: the seeded nodes were cached.
  EXPECT_EQ(CachedNodesReason(v1::PHASE_WARM, w, kSeed, {"1", "2", "3", "5"}),
            "execution_cached lists node(s) 2, 3, 5 that depend on values the spec sets per run (seed): the work "
            "being measured was skipped");
  // With only the prefix set per run, nothing cached depends on it: not flagged.
  const std::vector<SetTarget> prefix = {{"prefix", "4", "filename_prefix"}};
  EXPECT_EQ(CachedNodesReason(v1::PHASE_WARM, w, prefix, {"1", "2", "3", "5"}), "");
}

TEST(CacheTrapTest, ColdRunWithCachedNodes) {
  const Workflow w = CapturedGraph();
  EXPECT_EQ(CachedNodesReason(v1::PHASE_COLD, w, kSeed, {"1"}),
            "cold run: execution_cached lists 1 node(s) (1) after POST /free: a cold state could not be established");
  EXPECT_EQ(CachedNodesReason(v1::PHASE_COLD, w, kSeed, {}), "");
}

TEST(CacheTrapTest, SameImagesOfSameInputsUnderThreshold) {
  OutputHistory history;
  history.Remember("graphA", {"h1"});
  EXPECT_EQ(history.Check("graphA", {"h1"}, absl::Milliseconds(3), absl::Milliseconds(100)),
            "the images equal an earlier run's of the same inputs and the run took 3ms (under cache_hit_threshold "
            "100ms): served from a cache");
  EXPECT_EQ(history.Check("graphA", {"h1"}, absl::Milliseconds(150), absl::Milliseconds(100)), "");
  EXPECT_EQ(history.Check("graphA", {"h2"}, absl::Milliseconds(3), absl::Milliseconds(100)), "");
  EXPECT_EQ(history.Check("graphB", {"h1"}, absl::Milliseconds(3), absl::Milliseconds(100)), "");
}

}  // namespace
}  // namespace benchfleet::agent::comfyui
