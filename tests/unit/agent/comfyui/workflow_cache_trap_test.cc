#include <optional>

#include "agent/backends/comfyui/cache_trap.h"
#include "agent/backends/comfyui/comfyui_protocol.h"
#include "agent/backends/comfyui/graph.h"
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
Graph CapturedGraph() {
  const nlohmann::json body = testing::Capture("post_prompt_ok_run1_first.json");
  absl::StatusOr<Graph> w = Graph::Parse(body["request"]["body"]["prompt"].dump());
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

const std::vector<SetTarget> kSeed = {{"seed", "2", "seed"}};

TEST(WorkflowTest, ParsesNodesAndLinks) {
  const Graph w = CapturedGraph();
  EXPECT_THAT(w.node_ids(), ElementsAre("1", "2", "3", "4", "5"));
  EXPECT_EQ(w.nodes().at("2").class_type, "ImageAddNoise");
  EXPECT_THAT(w.nodes().at("2").upstream, ElementsAre("1"));
  EXPECT_THAT(w.nodes().at("4").inputs, ElementsAre("filename_prefix", "images"));
  EXPECT_THAT(w.Dependents({"2"}), ElementsAre("2", "3", "4", "5"));
  EXPECT_THAT(w.Dependents({"4"}), ElementsAre("4"));
}

TEST(WorkflowTest, RefusesWhatIsNotAnApiGraph) {
  EXPECT_EQ(Graph::Parse("{").status(), absl::InvalidArgumentError("the workflow is not JSON"));
  EXPECT_EQ(Graph::Parse(R"({"nodes": [], "links": []})").status(),
            absl::InvalidArgumentError(
                "the workflow is in ComfyUI's UI format (nodes and links lists); export it with \"Save (API)\""));
  EXPECT_EQ(Graph::Parse(R"({"1": {"inputs": {}}})").status(),
            absl::InvalidArgumentError("the workflow's node 1 has no class_type"));
  EXPECT_EQ(Graph::Parse(R"({"1": {"class_type": "A", "inputs": {"x": ["9", 0]}}})").status(),
            absl::InvalidArgumentError("the workflow's node 1 links to node 9, which is not in the graph"));
}

TEST(WorkflowTest, SubstitutesValues) {
  const Graph w = CapturedGraph();
  absl::StatusOr<std::string> graph =
      w.Substitute({{"seed", "2", "seed"}, {"prompt", "4", "filename_prefix"}}, {{"seed", "43"}, {"prompt", "\"x\""}});
  ASSERT_TRUE(graph.ok()) << graph.status();
  const nlohmann::json json = nlohmann::json::parse(*graph);
  EXPECT_EQ(json["2"]["inputs"]["seed"], 43);
  EXPECT_EQ(json["4"]["inputs"]["filename_prefix"], "x");
  EXPECT_EQ(json["3"]["inputs"]["width"], 2048);
  EXPECT_EQ(w.Substitute(kSeed, {}).status(), absl::InvalidArgumentError("no value for seed"));
}

// The SD 1.5 example graph, abridged from examples/series/sd15-txt2img.workflow.json (not a
// capture): 4 CheckpointLoaderSimple, 5 EmptyLatentImage, 6/7 CLIPTextEncode, 3 KSampler, 8
// VAEDecode, 9 SaveImage.
Graph Sd15Graph() {
  absl::StatusOr<Graph> w = Graph::Parse(R"({
    "3": {"class_type": "KSampler", "inputs": {"seed": 42, "model": ["4", 0], "positive": ["6", 0],
          "negative": ["7", 0], "latent_image": ["5", 0]}},
    "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "v1-5-pruned-emaonly.safetensors"}},
    "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}},
    "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
    "7": {"class_type": "CLIPTextEncode", "inputs": {"text": "blurry", "clip": ["4", 1]}},
    "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
    "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "benchfleet", "images": ["8", 0]}}})");
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

// ComfyUI's report of captured run i (1-based), from the websocket messages as the server sent them.
CacheReport CapturedRun(int i) {
  const std::string id = testing::CapturedPromptIds().at(i - 1);
  ExecutionTracker tracker(id);
  for (const std::string& m : testing::CapturedWsMessages()) EXPECT_TRUE(tracker.Feed(m).ok());
  const Execution& e = tracker.execution();
  EXPECT_TRUE(e.cached_seen) << i;
  CacheReport report;
  report.cached = e.cached;
  report.executed = e.executed;
  for (const ImageRef& image : e.images) report.image_nodes.push_back(image.node);
  return report;
}

const std::vector<SetTarget> kNoTargets;
const std::vector<SetTarget> kPrefix = {{"seed", "4", "filename_prefix"}};

TEST(CacheTrapTest, OutputNodesOfTheGraphs) {
  EXPECT_THAT(OutputNodes(CapturedGraph(), {}), ElementsAre("4"));
  EXPECT_THAT(OutputNodes(Sd15Graph(), {}), ElementsAre("9"));
  EXPECT_TRUE(IsKnownOutputClass("PreviewImage"));
  EXPECT_FALSE(IsKnownOutputClass("KSampler"));
  // A custom output node the agent does not know: nothing links to it, so it is one.
  absl::StatusOr<Graph> custom = Graph::Parse(R"({
    "1": {"class_type": "EmptyImage", "inputs": {"width": 8}},
    "2": {"class_type": "MyUploader", "inputs": {"image": ["1", 0]}}})");
  ASSERT_TRUE(custom.ok());
  EXPECT_THAT(OutputNodes(*custom, {}), ElementsAre("2"));
  // A node that gave images is one even when something links to it.
  EXPECT_THAT(OutputNodes(CapturedGraph(), {"5"}), ElementsAre("4", "5"));
  EXPECT_EQ(NameNodes(CapturedGraph(), {"2", "9"}), "2 (ImageAddNoise), 9");
}

TEST(CacheTrapTest, NodesDependingOnPerRunValues) {
  const Graph w = CapturedGraph();
  EXPECT_THAT(CachedMeasuredNodes(w, kSeed, {"1", "2", "3", "5", "4"}), ElementsAre("2", "3", "5", "4"));
  EXPECT_THAT(CachedMeasuredNodes(w, kSeed, {"1"}), IsEmpty());
  EXPECT_THAT(CachedMeasuredNodes(w, kNoTargets, {"1", "2"}), IsEmpty());
}

// Captured runs 1 (first), 3 (new seed), 5 (back to run 1's inputs, re-run): only EmptyImage, which
// no per-run value reaches, came from the cache, or nothing did. Not a cache hit, with or without
// a `set` section, whatever the phase.
TEST(CacheTrapTest, CapturedRunsThatExecutedTheirWork) {
  const Graph w = CapturedGraph();
  for (int run : {1, 3, 5, 6, 7}) {
    const CacheReport report = CapturedRun(run);
    EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, kSeed, report), "") << run;
    EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, kNoTargets, report), "") << run;
  }
  EXPECT_THAT(CapturedRun(1).cached, IsEmpty());
  EXPECT_THAT(CapturedRun(3).cached, ElementsAre("1"));
  // run6 came after POST /free: nothing cached, a clean cold run.
  EXPECT_THAT(CapturedRun(6).cached, IsEmpty());
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_COLD, w, kSeed, CapturedRun(6)), "");
}

// Captured run 2, identical to run 1: ComfyUI executed no node. A cache hit even without a `set`
// section (the bug: a spec without one never used the report).
TEST(CacheTrapTest, CapturedRunWithNoNodeExecuted) {
  const Graph w = CapturedGraph();
  const CacheReport run2 = CapturedRun(2);
  EXPECT_THAT(run2.executed, IsEmpty());
  const std::string expected =
      "ComfyUI executed no node: execution_cached lists every node of the run, 1 (EmptyImage), 2 (ImageAddNoise), "
      "3 (ImageScale), 5 (ImageScale), 4 (SaveImage): nothing was measured";
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, kNoTargets, run2), expected);
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, kSeed, run2), expected);
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_VALIDATION, w, kPrefix, run2), expected);
}

// Captured run 4: only SaveImage's filename_prefix changed, so ComfyUI ran node 4 alone and took
// the rest from its cache.
TEST(CacheTrapTest, CapturedPrefixOnlyChange) {
  const Graph w = CapturedGraph();
  const CacheReport run4 = CapturedRun(4);
  EXPECT_THAT(run4.cached, ElementsAre("1", "2", "3", "5"));
  EXPECT_THAT(run4.executed, ElementsAre("4"));
  // The seed target: the seeded nodes were cached.
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, kSeed, run4),
            "execution_cached lists node(s) 2 (ImageAddNoise), 3 (ImageScale), 5 (ImageScale) that depend on values "
            "the spec sets per run (seed): the work being measured was skipped");
  const std::string only_output =
      "only output node(s) 4 (SaveImage) executed; execution_cached lists the work upstream of them, 1 (EmptyImage), "
      "2 (ImageAddNoise), 3 (ImageScale), 5 (ImageScale): the work being measured was skipped";
  // No `set` section, or a per-run value that reaches the output node only: the same verdict.
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, kNoTargets, run4), only_output);
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, kPrefix, run4), only_output);
}

// The same verdicts from /history's status messages (a run followed by polling).
TEST(CacheTrapTest, CapturedHistoryReports) {
  const Graph w = CapturedGraph();
  for (const char* name : {"get_history_run1_first.json", "get_history_run2_identical.json"}) {
    const nlohmann::json capture = testing::Capture(name);
    const std::string id = capture["body_json"].begin().key();
    absl::StatusOr<std::optional<Execution>> e = ParseHistory(capture["body_json"].dump(), id, w.node_ids());
    ASSERT_TRUE(e.ok() && e->has_value()) << name;
    ASSERT_TRUE((*e)->cached_seen) << name;
    CacheReport report{(*e)->cached, (*e)->executed, {}};
    const std::string reason = ReportedCacheHitReason(v1::PHASE_WARM, w, kNoTargets, report);
    if (std::string(name) == "get_history_run1_first.json") {
      EXPECT_EQ(reason, "");
    } else {
      EXPECT_EQ(reason,
                "ComfyUI executed no node: execution_cached lists every node of the run, 1 (EmptyImage), 2 "
                "(ImageAddNoise), 3 (ImageScale), 5 (ImageScale), 4 (SaveImage): nothing was measured");
    }
  }
}

// A server started with --cache-none reports execution_cached with no node for every prompt
// (comfy_execution/caching.py NullCache.get returns None; execution.py's execute_async lists the
// nodes whose cached output is not None). Such a report is never a cache hit, however fast the run.
// The report below is written from ComfyUI's source, not captured.
TEST(CacheTrapTest, NothingCachedIsNeverACacheHit) {
  const Graph w = CapturedGraph();
  const CacheReport none{{}, {"1", "2", "3", "5", "4"}, {"4"}};
  for (v1::Phase phase : {v1::PHASE_VALIDATION, v1::PHASE_COLD, v1::PHASE_WARM}) {
    EXPECT_EQ(ReportedCacheHitReason(phase, w, kSeed, none), "");
    EXPECT_EQ(ReportedCacheHitReason(phase, w, kNoTargets, none), "");
  }
  // Even a report with no node executed and none cached (it cannot happen) does not flag.
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, kNoTargets, CacheReport{}), "");
}

TEST(CacheTrapTest, ColdRunWithCachedNodes) {
  const Graph w = CapturedGraph();
  // Captured run 3's report, as a cold run's: the prompt right after /free still found node 1.
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_COLD, w, kSeed, CapturedRun(3)),
            "cold run: execution_cached lists 1 node(s) after POST /free, 1 (EmptyImage): a cold state could not be "
            "established");
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_COLD, w, kNoTargets, CapturedRun(2)),
            "cold run: execution_cached lists 5 node(s) after POST /free, 1 (EmptyImage), 2 (ImageAddNoise), 3 "
            "(ImageScale), 5 (ImageScale), 4 (SaveImage): a cold state could not be established");
}

TEST(CacheTrapTest, Sd15PartialCacheIsTheWarmState) {
  const Graph w = Sd15Graph();
  const std::vector<SetTarget> seed = {{"seed", "3", "seed"}};
  // A new seed: the loader, the encoders and the empty latent come from the cache, as they should.
  const CacheReport new_seed{{"4", "5", "6", "7"}, {"3", "8", "9"}, {"9"}};
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, seed, new_seed), "");
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, kNoTargets, new_seed), "");
  // Only the prefix changed: the sampler came from the cache.
  const CacheReport prefix{{"3", "4", "5", "6", "7", "8"}, {"9"}, {"9"}};
  EXPECT_EQ(ReportedCacheHitReason(v1::PHASE_WARM, w, {{"seed", "9", "filename_prefix"}}, prefix),
            "only output node(s) 9 (SaveImage) executed; execution_cached lists the work upstream of them, 3 "
            "(KSampler), 4 (CheckpointLoaderSimple), 5 (EmptyLatentImage), 6 (CLIPTextEncode), 7 (CLIPTextEncode), "
            "8 (VAEDecode): the work being measured was skipped");
}

// Without ComfyUI's report only timing is left, and the reason says so.
TEST(CacheTrapTest, SameImagesOfSameInputsUnderThresholdIsInferredFromTiming) {
  OutputHistory history;
  history.Remember("graphA", {"h1"});
  EXPECT_EQ(history.Check("graphA", {"h1"}, absl::Milliseconds(3), absl::Milliseconds(100)),
            "served from a cache, inferred from timing: ComfyUI reported no execution_cached message, and the images "
            "equal an earlier run's of the same inputs while the run took 3ms (under cache_hit_threshold 100ms)");
  EXPECT_EQ(history.Check("graphA", {"h1"}, absl::Milliseconds(150), absl::Milliseconds(100)), "");
  EXPECT_EQ(history.Check("graphA", {"h2"}, absl::Milliseconds(3), absl::Milliseconds(100)), "");
  EXPECT_EQ(history.Check("graphB", {"h1"}, absl::Milliseconds(3), absl::Milliseconds(100)), "");
}

}  // namespace
}  // namespace benchfleet::agent::comfyui
