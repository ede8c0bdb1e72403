// A ComfyUI txt2img series end to end: benchfleet-agent runs the SD 1.5 example workflow against
// the ComfyUI simulator (tests/sim/comfyui) and streams every run to a coordinator process and
// PostgreSQL; the execution-cache trap is flagged on the run where it happens, from ComfyUI's own
// report (execution_cached): a spec without a `set` section, a prefix-only change, and a fast
// graph on a server started with --cache-none (never flagged). Only the first test needs
// PostgreSQL; the others read the series folder.
#include <signal.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::testing {
namespace {

constexpr absl::Duration kSeriesTimeout = absl::Seconds(240);

int WaitFor(Subprocess& p, absl::Duration timeout) {
  if (!PollUntil([&] { return !p.running(); }, timeout)) p.Signal(SIGKILL);
  return p.Wait();
}

std::string SourceDir() {
  const char* dir = std::getenv("BENCHFLEET_SOURCE_DIR");
  return dir == nullptr ? "." : dir;
}

class ComfyUiSeriesTest : public ::testing::Test {
 protected:
  // Sampling takes 4 steps x 40 ms: longer than the spec's cache_hit_threshold (100 ms, the
  // default), as a real SD 1.5 run is, so only a run served from the cache is faster.
  virtual std::vector<std::string> SimArgs() const { return {"--sim-step-ms", "40", "--sim-node-ms", "2"}; }

  void SetUp() override {
    work_ = MakeTempDir("comfyui");
    port_ = FreePort();
    url_ = "http://127.0.0.1:" + std::to_string(port_);
    std::vector<std::string> argv = {BinaryPath("comfyui-sim"), "--listen", "127.0.0.1", "--port",
                                     std::to_string(port_)};
    for (const std::string& a : SimArgs()) argv.push_back(a);
    sim_ = std::make_unique<Subprocess>(argv, std::map<std::string, std::string>{}, work_ + "/comfyui-sim.log");
    ASSERT_TRUE(PollUntil([&] { return ReadAll(work_ + "/comfyui-sim.log").find("To see the GUI") !=
                                           std::string::npos ||
                                       ReadAll(work_ + "/comfyui-sim.log").find("Starting server") !=
                                           std::string::npos; },
                          absl::Seconds(20)))
        << ReadAll(work_ + "/comfyui-sim.log");
    config_ = work_ + "/agent.yaml";
    std::ofstream(config_) << "state_dir: " << work_ << "/state\n"
                           << "labels:\n  class: sim-comfyui\n"
                           << "allow:\n  backends: [comfyui]\n  urls: [" << url_ << "]\n";
  }

  std::string WriteSpec(const std::string& name, const std::string& seeds, int validation, int warm,
                        const std::string& url = "") {
    const std::string path = work_ + "/" + name + ".yaml";
    std::ofstream(path) << "series: " << name << "\ntask: sd15-txt2img-512\nbackend: comfyui\n"
                        << "comfyui:\n  url: " << (url.empty() ? url_ : url) << "\n"
                        << "  workflow: " << SourceDir() << "/examples/series/sd15-txt2img.workflow.json\n"
                        << "  set:\n    seed: {node: \"3\", input: seed}\n    steps: {node: \"3\", input: steps}\n"
                        << "    prompt: {node: \"6\", input: text}\n"
                        << "  seeds: " << seeds << "\n  steps: 4\n"
                        << "  prompt: a photo of a red bicycle leaning against a brick wall\n"
                        << "  free_settle: 300ms\n  run_timeout: 30s\n  request_timeout: 5s\n"
                        << "runs:\n  validation: " << validation << "\n  cold: 1\n  warm: " << warm << "\n";
    return path;
  }

  // A spec of `comfyui` (the lines under `comfyui:` after url, indented two spaces) and runs.
  std::string WriteSpecWith(const std::string& name, const std::string& comfyui, int validation, int warm) {
    const std::string path = work_ + "/" + name + ".yaml";
    std::ofstream(path) << "series: " << name << "\ntask: comfyui-cache\nbackend: comfyui\n"
                        << "comfyui:\n  url: " << url_ << "\n" << comfyui
                        << "  free_settle: 300ms\n  run_timeout: 30s\n  request_timeout: 5s\n"
                        << "runs:\n  validation: " << validation << "\n  cold: 1\n  warm: " << warm << "\n";
    return path;
  }

  std::string Sd15Workflow() const { return SourceDir() + "/examples/series/sd15-txt2img.workflow.json"; }

  // Runs a series without a coordinator; returns the agent's output.
  std::string RunToFolder(const std::string& name, const std::string& spec) {
    auto run = Run(name, spec);
    const int rc = WaitFor(*run, kSeriesTimeout);
    const std::string out = ReadAll(work_ + "/run-" + name + ".log");
    EXPECT_EQ(rc, 0) << out;
    return out;
  }

  // The series' records (runs.jsonl), one JSON object a line.
  std::string Records(const std::string& name) { return ReadAll(work_ + "/series-" + name + "/runs.jsonl"); }

  static int Count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
  }

  std::unique_ptr<Subprocess> Run(const std::string& name, const std::string& spec,
                                  const std::string& coordinator = "") {
    std::vector<std::string> args = {"run", spec, "--config", config_, "--out", work_ + "/series-" + name};
    if (!coordinator.empty()) args.insert(args.end(), {"--coordinator", coordinator});
    return StartAgent(work_, "run-" + name, args);
  }

  std::string work_;
  int port_ = 0;
  std::string url_;
  std::string config_;
  std::unique_ptr<Subprocess> sim_;
};

TEST_F(ComfyUiSeriesTest, ThreeSeedsValidationColdAndWarmThroughTheCoordinator) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  CoordinatorProcess coordinator(db.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  auto run = Run("full", WriteSpec("full", "[404, 505, 606]", 3, 3), coordinator.address());
  ASSERT_EQ(WaitFor(*run, kSeriesTimeout), 0) << ReadAll(work_ + "/run-full.log");

  ASSERT_GT(db.FillRecordJson(), 0);  // the JSON of the stored records, for SQL
  EXPECT_EQ(db.QueryValue("SELECT string_agg(phase || ':' || call_index || ':' || "
                          "(record->'params'->>'set.seed'), ',' ORDER BY start_time) FROM runs"),
            "validation:1:404,validation:2:505,validation:3:606,cold:1:404,warm:1:505,warm:2:606,"
            "warm:3:404");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE simulated AND status = 'ok'"), "7");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE 'CACHE_HIT' = ANY(flags)"), "0");
  // The cold run came after /free: ComfyUI ran every node.
  EXPECT_EQ(db.QueryValue("SELECT metrics->>'cached_nodes' FROM runs WHERE phase = 'cold'"), "0");
  // Each seed's validation image is the reference: a later run of the same inputs gives it again.
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT record->'outputs'->0->>'sha256') FROM runs"), "3");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs v JOIN runs w ON "
                          "v.record->'params'->>'set.seed' = w.record->'params'->>'set.seed' "
                          "WHERE v.phase = 'validation' AND w.phase <> 'validation' AND "
                          "v.record->'outputs'->0->>'sha256' = w.record->'outputs'->0->>'sha256'"),
            "4");
}

TEST_F(ComfyUiSeriesTest, AnIdenticalResubmissionIsFlaggedCacheHitAndExcluded) {
  auto run = Run("repeat", WriteSpec("repeat", "[404]", 0, 2));
  const int rc = WaitFor(*run, kSeriesTimeout);
  const std::string out = ReadAll(work_ + "/run-repeat.log");
  EXPECT_EQ(rc, 0) << out;
  const std::string csv = ReadAll(work_ + "/series-repeat/runs.csv");
  EXPECT_NE(csv.find(",cold,1,"), std::string::npos) << csv;
  // The two warm calls repeat the cold run's inputs: ComfyUI served them from its cache.
  EXPECT_NE(out.find("2 run(s) flagged CACHE_HIT: published, excluded from every aggregate"),
            std::string::npos)
      << out;
}

TEST_F(ComfyUiSeriesTest, ComfyUiDownFailsTheSeriesWithAClearReason) {
  const std::string closed = "http://127.0.0.1:" + std::to_string(FreePort());
  std::ofstream(config_) << "state_dir: " << work_ << "/state\nallow:\n  backends: [comfyui]\n"
                         << "  urls: [" << closed << "]\n";
  auto run = Run("down", WriteSpec("down", "[404]", 0, 1, closed));
  EXPECT_EQ(WaitFor(*run, kSeriesTimeout), 1) << ReadAll(work_ + "/run-down.log");
  const std::string csv = ReadAll(work_ + "/series-down/runs.csv");
  EXPECT_NE(csv.find(",failed,"), std::string::npos) << csv;
}

// A spec with no `set` section: every run sends the same graph, so every warm run is served whole
// from ComfyUI's cache. Before, such a spec never used ComfyUI's report and published these runs.
TEST_F(ComfyUiSeriesTest, WithoutASetSectionEveryFullyCachedRunIsFlagged) {
  const std::string out = RunToFolder("noset", WriteSpecWith("noset", "  workflow: " + Sd15Workflow() + "\n", 0, 2));
  EXPECT_NE(out.find("2 run(s) flagged CACHE_HIT: published, excluded from every aggregate"), std::string::npos)
      << out;
  const std::string records = Records("noset");
  EXPECT_EQ(Count(records, "\"reason\":\"ComfyUI executed no node: execution_cached lists every node of the run, "
                           "5 (EmptyLatentImage), 4 (CheckpointLoaderSimple), 7 (CLIPTextEncode), 6 (CLIPTextEncode), "
                           "3 (KSampler), 8 (VAEDecode), 9 (SaveImage): nothing was measured\""),
            2)
      << records;
  EXPECT_EQ(Count(records, "\"cache_report\":\"execution_cached\""), 3) << records;
  // What /system_stats says the server runs on is in the conditions (and their fingerprint).
  const std::string conditions = ReadAll(work_ + "/series-noset/conditions.json");
  EXPECT_NE(conditions.find("\"comfyui.pytorch_version\": \"1.13.0a0\""), std::string::npos) << conditions;
  EXPECT_NE(conditions.find("\"comfyui.devices\": \"cpu (cpu)\""), std::string::npos) << conditions;
  EXPECT_NE(conditions.find("\"comfyui.python_version\": \"3.11.2"), std::string::npos) << conditions;
}

// Only SaveImage's filename_prefix changes from run to run (the spec's seed goes there): ComfyUI
// re-executes the output node alone and takes the sampler from its cache.
TEST_F(ComfyUiSeriesTest, APrefixOnlyChangeIsFlaggedNamingTheCachedNodes) {
  const std::string spec = WriteSpecWith(
      "prefix", "  workflow: " + Sd15Workflow() + "\n  set:\n    seed: {node: \"9\", input: filename_prefix}\n" +
                    "  seeds: [404, 505]\n",
      0, 2);
  const std::string out = RunToFolder("prefix", spec);
  EXPECT_NE(out.find("2 run(s) flagged CACHE_HIT: published, excluded from every aggregate"), std::string::npos)
      << out;
  const std::string records = Records("prefix");
  EXPECT_EQ(Count(records, "\"reason\":\"only output node(s) 9 (SaveImage) executed; execution_cached lists the work "
                           "upstream of them, 5 (EmptyLatentImage), 4 (CheckpointLoaderSimple), 7 (CLIPTextEncode), 6 "
                           "(CLIPTextEncode), 3 (KSampler), 8 (VAEDecode): the work being measured was skipped\""),
            2)
      << records;
  // Each warm run saved its own file, under its own prefix.
  EXPECT_NE(records.find("\"name\":\"505_00001_.png\""), std::string::npos) << records;
  EXPECT_NE(records.find("\"name\":\"404_00002_.png\""), std::string::npos) << records;
}

// A server started with --cache-none, and a small graph (the captures' image graph, about 15 ms a
// run here): ComfyUI reports no node cached, so no run is a cache hit, although every run gives
// the same image from the same inputs well under cache_hit_threshold (10 s here, so that a loaded
// machine cannot make a run slower than it). Before, every run, the cold one included, was
// flagged "served from a cache" and left the aggregates.
class ComfyUiNoCacheSeriesTest : public ComfyUiSeriesTest {
 protected:
  std::vector<std::string> SimArgs() const override { return {"--cache-none", "--sim-node-ms", "1"}; }
};

TEST_F(ComfyUiNoCacheSeriesTest, AFastGraphIsNeverFlaggedWhenNothingWasCached) {
  // The captures' graph (tests/fixtures/comfyui/README.md), as post_prompt_ok_run1_first.json sent it.
  const std::string workflow = work_ + "/heldout.workflow.json";
  std::ofstream(workflow)
      << R"({"1": {"class_type": "EmptyImage", "inputs": {"width": 512, "height": 512, "batch_size": 1, "color": 3368652}},)"
      << R"( "2": {"class_type": "ImageAddNoise", "inputs": {"image": ["1", 0], "seed": 42, "strength": 0.5}},)"
      << R"( "3": {"class_type": "ImageScale", "inputs": {"image": ["2", 0], "upscale_method": "bicubic", "width": 2048,)"
      << R"( "height": 2048, "crop": "disabled"}},)"
      << R"( "5": {"class_type": "ImageScale", "inputs": {"image": ["3", 0], "upscale_method": "area", "width": 128,)"
      << R"( "height": 128, "crop": "disabled"}},)"
      << R"( "4": {"class_type": "SaveImage", "inputs": {"images": ["5", 0], "filename_prefix": "heldout"}}})";
  const std::string spec = WriteSpecWith(
      "nocache", "  workflow: " + workflow + "\n  set:\n    seed: {node: \"2\", input: seed}\n  seeds: [404]\n" +
                     "  cache_hit_threshold: 10s\n",
      1, 4);
  const std::string out = RunToFolder("nocache", spec);
  EXPECT_EQ(out.find("flagged CACHE_HIT"), std::string::npos) << out;
  const std::string records = Records("nocache");
  EXPECT_EQ(Count(records, "\"CACHE_HIT\""), 0) << records;
  EXPECT_EQ(Count(records, "\"cached_nodes\":\"\""), 6) << records;
  // Every node executed: in execution order from the websocket, or in the graph's order from
  // /history when the websocket joined after execution_cached (a loaded host; comfyui_backend.cc).
  EXPECT_EQ(Count(records, "\"executed_nodes\":\"1,2,3,5,4\"") + Count(records, "\"executed_nodes\":\"1,2,3,4,5\""), 6)
      << records;
  EXPECT_EQ(Count(records, "\"code\":\"CODE_OK\""), 6) << records;
  // Every run gave the same image (the first record's, the validation run's): the same inputs.
  const std::string key = "\"kind\":\"image\",\"sha256\":\"";
  const size_t at = records.find(key);
  ASSERT_NE(at, std::string::npos) << records;
  EXPECT_EQ(Count(records, records.substr(at, key.size() + 64)), 6) << records;
  const std::string csv = ReadAll(work_ + "/series-nocache/runs.csv");
  EXPECT_EQ(Count(csv, ",warm,"), 4) << csv;
}

}  // namespace
}  // namespace benchfleet::testing
