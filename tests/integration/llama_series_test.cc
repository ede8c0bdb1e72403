// A llama-server series end to end: benchfleet-agent runs the spec against the llama-server
// simulator (tests/sim), GPU mode then CPU mode, streams the records to a coordinator process
// and PostgreSQL. Also the error cases of the issue, one mode each, and no orphan server after
// the agent is SIGKILLed.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// Returns the pids of the processes whose command line contains needle.
std::vector<int> ProcessesWith(const std::string& needle) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* e = ::readdir(proc)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::string cmdline = ReadAll(absl::StrCat("/proc/", pid, "/cmdline"));
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    if (cmdline.find(needle) != std::string::npos) {
      // A zombie has an empty cmdline, so whatever matched is alive.
      pids.push_back(pid);
    }
  }
  ::closedir(proc);
  return pids;
}

class LlamaSeriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = MakeTempDir("llama");
    model_ = work_ + "/models/qwen2.5-3b-instruct-q4_k_m.gguf";
    ::mkdir((work_ + "/models").c_str(), 0755);
    std::ofstream(model_) << "GGUF simulated model file";
    config_ = work_ + "/agent.yaml";
    std::ofstream(config_) << "state_dir: " << work_ << "/state\n"
                           << "labels:\n  class: sim-gpu\n"
                           << "allow:\n  backends: [llama-server]\n"
                           << "  executables: [" << BinaryPath("llama-server-sim") << "]\n"
                           << "  model_dirs: [" << work_ << "/models]\n";
  }

  // Writes a llama-server spec with these modes (YAML flow lists) and returns its path.
  std::string WriteSpec(const std::string& name,
                        const std::vector<std::pair<std::string, std::string>>& modes,
                        int warm = 4, const std::string& health_timeout = "10s") {
    const std::string path = work_ + "/" + name + ".yaml";
    std::ofstream spec(path);
    spec << "series: " << name << "\n"
         << "task: llama-qwen2.5-3b-q4km\n"
         << "backend: llama-server\n"
         << "llama-server:\n"
         << "  binary: " << BinaryPath("llama-server-sim") << "\n"
         << "  model: " << model_ << "\n"
         << "  args: [-c, '256', --sim-load-ms, '150']\n"
         << "  modes:\n";
    for (const auto& [mode, args] : modes) spec << "    " << mode << ": " << args << "\n";
    spec << "  prompt: Explain in one sentence what a GPU is.\n"
         << "  n_predict: 8\n"
         << "  seed: 42\n"
         << "  health_timeout: " << health_timeout << "\n"
         << "  request_timeout: 5s\n"
         << "  stop_grace: 2s\n"
         << "runs:\n  cold: 1\n  warm: " << warm << "\n";
    return path;
  }

  std::unique_ptr<Subprocess> Run(const std::string& name, const std::string& spec,
                                  const std::string& coordinator = "") {
    std::vector<std::string> args = {"run", spec, "--config", config_, "--out",
                                     work_ + "/series-" + name};
    if (!coordinator.empty()) args.insert(args.end(), {"--coordinator", coordinator});
    return StartAgent(work_, "run-" + name, args);
  }

  std::string work_;
  std::string model_;
  std::string config_;
};

TEST_F(LlamaSeriesTest, GpuAgainstCpuThroughTheCoordinatorFlagsTheCollapseAtTheRightCall) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  CoordinatorProcess coordinator(db.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  // Generation requests are counted from the server's start: 1 is the cold run, 4 and 5 are
  // the third and fourth warm calls.
  const std::string spec = WriteSpec(
      "gpu-vs-cpu", {{"gpu", "[-ngl, '99', --sim-throttle, '4:0.57,5:0.53']"}, {"cpu", "[-ngl, '0']"}});
  auto run = Run("gpu-vs-cpu", spec, coordinator.address());
  ASSERT_EQ(WaitFor(*run, kSeriesTimeout), 0) << ReadAll(work_ + "/run-gpu-vs-cpu.log");

  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs"), "10");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE simulated AND status = 'ok'"), "10");
  EXPECT_EQ(db.QueryValue("SELECT string_agg(mode || ':' || phase || ':' || call_index, ',' "
                          "ORDER BY mode DESC, phase, call_index) FROM runs"),
            "gpu:cold:1,gpu:warm:1,gpu:warm:2,gpu:warm:3,gpu:warm:4,"
            "cpu:cold:1,cpu:warm:1,cpu:warm:2,cpu:warm:3,cpu:warm:4");
  EXPECT_EQ(db.QueryValue("SELECT string_agg(mode || ':' || call_index, ',' ORDER BY mode, call_index) "
                          "FROM runs WHERE 'THROUGHPUT_DROP' = ANY(flags)"),
            "gpu:3,gpu:4");
  // Every figure of timings is a metric; the GPU mode's buffers are on the device.
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE metrics ? 'predicted_per_second' "
                          "AND metrics ? 'prompt_per_second' AND metrics ? 'cache_n'"),
            "10");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE mode = 'gpu' AND record->'memory' @> "
                          "'[{\"kind\":\"MEMORY_KIND_DEVICE_BUFFER\",\"scope\":\"CUDA0 model\"}]'"),
            "5");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE record->'memory' @> "
                          "'[{\"kind\":\"MEMORY_KIND_PROCESS_PEAK_RSS\"}]'"),
            "10");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE record->'memory' @> "
                          "'[{\"kind\":\"MEMORY_KIND_DEVICE_USED\"}]'"),
            "0");
  // Temperature 0 and a fixed seed: the same output on every call of a mode.
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT record->'outputs'->0->>'sha256') FROM runs"), "1");
  // The CLI's end-of-series table shows each call, the drops marked.
  const std::string out = ReadAll(work_ + "/run-gpu-vs-cpu.log");
  EXPECT_NE(out.find("THROUGHPUT_DROP"), std::string::npos) << out;
  EXPECT_NE(out.find("SIMULATED"), std::string::npos) << out;
  EXPECT_TRUE(ProcessesWith(model_).empty());
}

TEST_F(LlamaSeriesTest, EachErrorEndsItsRunOrModeFailedAndTheSeriesGoesOn) {
  const std::string spec = WriteSpec(
      "errors",
      {{"exit_during_load", "[-ngl, '0', --sim-fail, exit-during-load]"},
       {"never_ready", "[-ngl, '0', --sim-fail, never-ready]"},
       {"http500", "[-ngl, '0', --sim-fail, http500-on-request, '2']"},
       {"garbage", "[-ngl, '0', --sim-fail, garbage-on-request, '2']"},
       {"truncated", "[-ngl, '0', --sim-fail, truncated-on-request, '2']"},
       {"dies", "[-ngl, '0', --sim-fail, die-on-request, '2']"},
       {"hangs", "[-ngl, '0', --sim-fail, hang-on-request, '2']"},
       {"too_long", "[-ngl, '0', -c, '4']"},
       {"fine", "[-ngl, '0']"}},
      /*warm=*/1, /*health_timeout=*/"2s");
  auto run = Run("errors", spec);
  const int rc = WaitFor(*run, kSeriesTimeout);
  const std::string out = ReadAll(work_ + "/run-errors.log");
  EXPECT_EQ(rc, 1) << out;
  const std::string runs = ReadAll(work_ + "/series-errors/runs.csv");
  // The last mode still ran both of its runs cleanly.
  EXPECT_NE(runs.find(",fine,cold,1,"), std::string::npos) << runs;
  EXPECT_NE(runs.find(",fine,warm,1,"), std::string::npos) << runs;
  for (const char* mode : {"exit_during_load", "never_ready", "http500", "garbage", "truncated",
                           "dies", "hangs", "too_long"}) {
    EXPECT_NE(runs.find(absl::StrCat(",", mode, ",")), std::string::npos) << mode << "\n" << runs;
  }
  EXPECT_TRUE(ProcessesWith(model_).empty()) << "a server outlived its mode";
}

TEST_F(LlamaSeriesTest, NoServerOutlivesAnAgentKilledWithSigkill) {
  const std::string spec =
      WriteSpec("killed", {{"gpu", "[-ngl, '99', --sim-fail, hang-on-request, '2']"}}, 1);
  auto run = Run("killed", spec);
  ASSERT_TRUE(PollUntil([&] { return !ProcessesWith(model_).empty(); }, absl::Seconds(30)))
      << ReadAll(work_ + "/run-killed.log");
  absl::SleepFor(absl::Milliseconds(500));  // into the hanging request
  run->Signal(SIGKILL);
  run->Wait();
  EXPECT_TRUE(PollUntil([&] { return ProcessesWith(model_).empty(); }, absl::Seconds(10)))
      << "orphaned: " << absl::StrJoin(ProcessesWith(model_), ",");
}

}  // namespace
}  // namespace benchfleet::testing
