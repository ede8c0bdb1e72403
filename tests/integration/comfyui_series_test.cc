// A ComfyUI txt2img series end to end: benchfleet-agent runs the SD 1.5 example workflow against
// the ComfyUI simulator (tests/sim/comfyui) and streams every run to a coordinator process and
// PostgreSQL; the execution-cache trap is flagged on the run where it happens.
#include <signal.h>

#include <fstream>
#include <string>

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
  void SetUp() override {
    work_ = MakeTempDir("comfyui");
    port_ = FreePort();
    url_ = "http://127.0.0.1:" + std::to_string(port_);
    sim_ = std::make_unique<Subprocess>(
        std::vector<std::string>{BinaryPath("comfyui-sim"), "--listen", "127.0.0.1", "--port",
                                 std::to_string(port_), "--sim-step-ms", "40", "--sim-node-ms", "2"},
        std::map<std::string, std::string>{}, work_ + "/comfyui-sim.log");
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

}  // namespace
}  // namespace benchfleet::testing
