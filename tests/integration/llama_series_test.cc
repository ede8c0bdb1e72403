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

  // Writes a llama-server spec with these modes (YAML flow lists) and returns its path; `section`
  // adds lines to the llama-server section.
  std::string WriteSpec(const std::string& name,
                        const std::vector<std::pair<std::string, std::string>>& modes,
                        int warm = 4, const std::string& health_timeout = "10s", const std::string& section = "") {
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
         << section
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
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE mode = 'gpu' AND memory @> "
                          "'[{\"kind\":\"MEMORY_KIND_DEVICE_BUFFER\",\"scope\":\"CUDA0 model\"}]'"),
            "5");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE memory @> "
                          "'[{\"kind\":\"MEMORY_KIND_PROCESS_PEAK_RSS\"}]'"),
            "10");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE memory @> "
                          "'[{\"kind\":\"MEMORY_KIND_DEVICE_USED\"}]'"),
            "0");
  ASSERT_GT(db.FillRecordJson(), 0);  // the JSON of the stored records, for SQL
  // Temperature 0 and a fixed seed: the same output on every call of a mode.
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT record->'outputs'->0->>'sha256') FROM runs"), "1");
  // The CLI's end-of-series table shows each call, the drops marked.
  const std::string out = ReadAll(work_ + "/run-gpu-vs-cpu.log");
  EXPECT_NE(out.find("THROUGHPUT_DROP"), std::string::npos) << out;
  EXPECT_NE(out.find("SIMULATED"), std::string::npos) << out;
  EXPECT_TRUE(ProcessesWith(model_).empty());
}

// The case: a gpu/cpu series against a server without a usable GPU never yields a figure
// labelled gpu. The gpu mode fails with the server's own words; the cpu mode runs; the devices the
// server reported are in the series' conditions, and the guide says what each mode ran on.
TEST_F(LlamaSeriesTest, AGpuModeAgainstAServerWithoutAGpuFailsWithTheServersWords) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  CoordinatorProcess coordinator(db.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  const std::string spec = WriteSpec("no-gpu", {{"gpu", "[-ngl, '99', --sim-gpu-device, none]"},
                                                {"cpu", "[-ngl, '0', --sim-gpu-device, none]"}});
  auto run = Run("no-gpu", spec, coordinator.address());
  WaitFor(*run, kSeriesTimeout);
  const std::string out = ReadAll(work_ + "/run-no-gpu.log");

  EXPECT_EQ(db.QueryValue("SELECT string_agg(mode || ':' || phase || ':' || status, ',' "
                          "ORDER BY mode DESC, phase, call_index) FROM runs"),
            "gpu:cold:failed,cpu:cold:ok,cpu:warm:ok,cpu:warm:ok,cpu:warm:ok,cpu:warm:ok")
      << out;
  ASSERT_GT(db.FillRecordJson(), 0);  // the JSON of the stored records, for SQL
  EXPECT_EQ(db.QueryValue("SELECT record->'status'->>'message' FROM runs WHERE mode = 'gpu'"),
            "could not open llama-server: mode gpu asks llama-server to offload layers to a GPU (-ngl 99), but the "
            "server offloaded none: \"warning: no usable GPU found, --gpu-layers option will be ignored\" (its log, "
            "line 1). Its runs would measure the CPU under the name gpu; list the mode in "
            "llama-server.allow_no_offload to run it anyway (flagged NO_OFFLOAD)");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE mode = 'gpu' AND metrics ? 'predicted_per_second'"), "0");
  EXPECT_EQ(db.QueryValue("SELECT DISTINCT record -> 'params' ->> 'offloaded_layers' FROM runs WHERE mode = 'cpu'"), "0/0");
  // No buffer of the CPU-only server is device memory.
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM runs WHERE memory @> "
                          "'[{\"kind\":\"MEMORY_KIND_DEVICE_BUFFER\"}]'"),
            "0");
  // The devices the server found are in the conditions and their fingerprint.
  const std::string conditions = ReadAll(work_ + "/series-no-gpu/conditions.json");
  EXPECT_NE(conditions.find("\"llama-server.devices\": \"none (warning: no usable GPU found, --gpu-layers option "
                            "will be ignored)\""),
            std::string::npos)
      << conditions;
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT conditions_fingerprint) FROM runs WHERE mode = 'cpu'"), "1");

  // The guide from the series folder: what each mode ran on, from the records.
  const std::string guide = work_ + "/guide-no-gpu";
  Subprocess g({BinaryPath("benchfleet"), "guide", "--files", work_ + "/series-no-gpu", "--out", guide, "--lang", "en"},
               {}, work_ + "/guide-no-gpu.log");
  ASSERT_EQ(g.Wait(), 0) << ReadAll(work_ + "/guide-no-gpu.log");
  const std::string md = ReadAll(guide + "/guide.en.md");
  EXPECT_NE(md.find("- What each mode ran on, as the server reported it: `cpu`: `none (warning: no usable GPU found, "
                    "--gpu-layers option will be ignored)`, offloaded layers `0/0`"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("`llama-server.devices` `none (warning: no usable GPU found"), std::string::npos) << md;
}

TEST_F(LlamaSeriesTest, NoOffloadWhenAllowedAndPartialOffloadAreFlaggedAndKeptOut) {
  const std::string path = WriteSpec("offload",
                                     {{"gpu", "[-ngl, '99', --sim-gpu-device, none]"},
                                      {"fit", "[--sim-fit-gpu-layers, '1']"},
                                      {"fit_ok", "[--sim-fit-gpu-layers, '2']"}},
                                     /*warm=*/2, "10s",
                                     "  allow_no_offload: [gpu]\n  allow_partial_offload: [fit_ok]\n");
  auto run = Run("offload", path);
  ASSERT_EQ(WaitFor(*run, kSeriesTimeout), 0) << ReadAll(work_ + "/run-offload.log");
  const std::string runs = ReadAll(work_ + "/series-offload/runs.jsonl");
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = runs.find(needle); at != std::string::npos; at = runs.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("\"code\":\"NO_OFFLOAD\""), 3u) << runs;        // gpu: cold + 2 warm
  EXPECT_EQ(count("\"code\":\"PARTIAL_OFFLOAD\""), 3u) << runs;   // fit: cold + 2 warm
  EXPECT_EQ(count("llama-server offloaded 1/3 layers to GPU"), 3u) << runs;
  EXPECT_EQ(count("\"offloaded_layers\":\"2/3\""), 3u) << runs;   // fit_ok, accepted: no flag
  // The live progress names the flag on the call where it happens.
  const std::string out = ReadAll(work_ + "/run-offload.log");
  EXPECT_NE(out.find(" PARTIAL_OFFLOAD"), std::string::npos) << out;
  EXPECT_NE(out.find(" NO_OFFLOAD"), std::string::npos) << out;
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
