// `benchfleet-agent run`, the built program run as a child process: exit code 2 and nothing run
// for a bad spec, flag or configuration; a series whose every mode fails to start still writes
// (and streams) one FAILED record per mode and exits 1.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/record_validation.h"
#include "common/series_folder.h"
#include "tests/support/subprocess.h"
#include "tests/unit/agent/fake_gateway.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::benchfleet::testing::ProcessesNaming;

using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::FakeGateway;
using testing::ScopedTempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class RunCommandTest : public ::testing::Test {
 protected:
  // Runs the program to completion; its stdout and stderr are kept in out_ and err_.
  int Run(std::vector<std::string> args) {
    const pid_t pid = Spawn(std::move(args));
    int status = 0;
    ::waitpid(pid, &status, 0);
    return Reap(status);
  }

  // Starts the program; Reap(status) reads its output once it has exited.
  pid_t Spawn(std::vector<std::string> args) {
    args.insert(args.begin(), BENCHFLEET_AGENT_BINARY);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The agent must not pick up the host's settings (BENCHFLEET_COORDINATOR, ...).
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!std::string_view(*e).starts_with("BENCHFLEET_")) env.emplace_back(*e);
    }
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string out_path = tmp_.path() + "/stdout";
    const std::string err_path = tmp_.path() + "/stderr";
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(out);
    ::close(err);
    return pid;
  }

  int Reap(int status) {
    out_ = ReadAll(tmp_.path() + "/stdout");
    err_ = ReadAll(tmp_.path() + "/stderr");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // Waits (real time: another process) up to timeout for pid to exit; its exit code, or -1 on
  // timeout (it is then killed). *took is how long it took.
  int WaitExit(pid_t pid, absl::Duration timeout, absl::Duration* took) {
    const absl::Time start = absl::Now();
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (absl::Now() - start > timeout) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        *took = absl::Now() - start;
        Reap(status);
        return -1;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    *took = absl::Now() - start;
    return Reap(status);
  }

  // Polls (real time) until pred holds, up to 60 s.
  template <typename Pred>
  static bool PollFor(Pred pred) {
    for (int i = 0; i < 6000 && !pred(); ++i) absl::SleepFor(absl::Milliseconds(10));
    return pred();
  }

  // An agent.yaml allowing llama-server, a binary and the (empty) models folder.
  std::string Config(const std::string& backends = "[llama-server]") {
    const std::string path = tmp_.path() + "/agent.yaml";
    Write(path, absl::StrCat("allow:\n  backends: ", backends, "\n  executables: [", tmp_.path(),
                             "/bin/llama-server]\n  model_dirs: [", tmp_.path(), "/models]\n"));
    return path;
  }

  // A llama-server spec whose model does not exist: every mode fails to start.
  std::string Spec(const std::string& extra = "") {
    const std::string path = tmp_.path() + "/spec.yaml";
    Write(path, absl::StrCat("series: cli-series\ntask: cli-task\nbackend: llama-server\nllama-server:\n  binary: ",
                             tmp_.path(), "/bin/llama-server\n  model: ", tmp_.path(),
                             "/models/missing.gguf\n  modes:\n    gpu: [-ngl, 99]\n    cpu: [-ngl, 0]\n"
                             "  prompt: hello\nruns:\n  warm: 2\n",
                             extra));
    return path;
  }

  std::vector<std::string> Args(const std::string& spec, const std::string& config) {
    return {"run", spec, "--out", series_, "--config", config, "--state-dir", tmp_.path() + "/state"};
  }

  ScopedTempDir tmp_;
  std::string series_ = tmp_.path() + "/series";
  std::string out_;
  std::string err_;
};

TEST_F(RunCommandTest, ABadSpecIsExitCode2WithItsLineAndNothingRuns) {
  const std::string spec = Spec("  wram: 4\n");
  EXPECT_EQ(Run(Args(spec, Config())), 2);
  EXPECT_EQ(err_, absl::StrCat("benchfleet-agent run: error: ", spec,
                               ":13: unknown key 'runs.wram' (known keys: validation, cold, warm, repetitions, "
                               "pause_between_runs, throughput_drop_threshold)\n"));
  EXPECT_FALSE(Env::Default()->FileExists(series_));
}

TEST_F(RunCommandTest, ABackendTheAllowListDoesNotNameIsExitCode2) {
  EXPECT_EQ(Run(Args(Spec(), Config("[comfyui]"))), 2);
  EXPECT_THAT(err_, HasSubstr("benchfleet-agent run: error: "));
  EXPECT_THAT(err_, HasSubstr("llama-server"));
  EXPECT_THAT(err_, HasSubstr("allow.backends"));
  EXPECT_FALSE(Env::Default()->FileExists(series_));
}

TEST_F(RunCommandTest, AnUnknownBackendIsExitCode2) {
  const std::string spec = tmp_.path() + "/other.yaml";
  Write(spec, "series: s\ntask: t\nbackend: nosuch\n");
  EXPECT_EQ(Run(Args(spec, Config("[nosuch]"))), 2);
  EXPECT_THAT(err_, HasSubstr(absl::StrCat(spec, ": unknown backend \"nosuch\"; known backends: ")));
  EXPECT_THAT(err_, HasSubstr("llama-server"));
}

TEST_F(RunCommandTest, AFolderHoldingASeriesIsExitCode2) {
  ASSERT_TRUE(Env::Default()->CreateDirs(series_).ok());
  Write(series_ + "/runs.jsonl", "");
  EXPECT_EQ(Run(Args(Spec(), Config())), 2);
  EXPECT_EQ(err_, absl::StrCat("benchfleet-agent run: error: ", series_,
                               " already holds a series (runs.jsonl): give each series a folder of its own\n"));
}

TEST_F(RunCommandTest, MissingFlagsAreExitCode2) {
  EXPECT_EQ(Run({"run", Spec()}), 2);
  EXPECT_THAT(err_, HasSubstr("--out is required"));
}

TEST_F(RunCommandTest, EveryModeFailingToStartIsRecordedAndExitsOne) {
  const std::string spec = Spec();
  EXPECT_EQ(Run(Args(spec, Config())), 1) << err_;
  EXPECT_THAT(out_, HasSubstr("series cli-series (task cli-task, backend llama-server): 2 runs, 0 OK, 2 FAILED\n"));
  EXPECT_THAT(out_, HasSubstr("\ngpu cold  1: FAILED\ncpu cold  1: FAILED\n"));
  EXPECT_THAT(out_, HasSubstr("\n  gpu cold 1: could not open llama-server: "));
  EXPECT_THAT(out_, HasSubstr("no coordinator: send the records later with `benchfleet-agent import "));
  EXPECT_THAT(err_, HasSubstr("gpu cold 1/1: FAILED: could not open llama-server: "));
  auto records = ReadRecords(Env::Default(), series_);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].record.mode(), "gpu");
  EXPECT_EQ((*records)[1].record.mode(), "cpu");
  EXPECT_EQ((*records)[1].record.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(ReadAll(series_ + "/spec.yaml"), ReadAll(spec));
}

TEST_F(RunCommandTest, WithACoordinatorTheRecordsAreStreamed) {
  FakeGateway gateway;
  std::vector<std::string> args = Args(Spec(), Config());
  args.insert(args.end(), {"--coordinator", gateway.address(), "--timeout", "20"});
  EXPECT_EQ(Run(args), 1) << err_;
  EXPECT_EQ(gateway.stored().size(), 2u);
  EXPECT_THAT(out_, HasSubstr(absl::StrCat("sent to coordinator ", gateway.address(),
                                           ": 2 stored, 0 duplicates, 0 rejected\n")));
  EXPECT_THAT(out_, Not(HasSubstr("no coordinator")));
  auto records = ReadRecords(Env::Default(), series_);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(gateway.last_hello().conditions().fingerprint(), (*records)[0].record.conditions_fingerprint());
}

// A GPU-vs-CPU series against the llama-server simulator (tests/sim), which collapses the GPU's
// decode rate at its 4th and 5th requests (warm calls 3 and 4), streamed to a coordinator.
class RunCommandSimulatorTest : public RunCommandTest {
 protected:
  std::string SimConfig() {
    const std::string path = tmp_.path() + "/agent.yaml";
    Write(path, absl::StrCat("allow:\n  backends: [llama-server]\n  executables: [", LLAMA_SERVER_SIM_BINARY,
                             "]\n  model_dirs: [", tmp_.path(), "/models]\n"));
    EXPECT_TRUE(Env::Default()->CreateDirs(tmp_.path() + "/models").ok());
    Write(tmp_.path() + "/models/model.gguf", "");
    return path;
  }
  std::string SimSpec(const std::string& extra_modes = "") {
    const std::string path = tmp_.path() + "/spec.yaml";
    Write(path, absl::StrCat("series: sim-series\ntask: sim-task\nbackend: llama-server\nllama-server:\n  binary: ",
                             LLAMA_SERVER_SIM_BINARY, "\n  model: ", tmp_.path(), "/models/model.gguf\n",
                             "  args: [--sim-load-ms, 50]\n  modes:\n",
                             "    gpu: [-ngl, 99, --sim-throttle, \"4:0.57,5:0.53\"]\n",
                             "    cpu: [-ngl, 0, --sim-cpu-tps, 100]\n", extra_modes,
                             "  prompt: Write a short paragraph about the history of the bicycle.\n",
                             "  n_predict: 8\nruns:\n  warm: 4\n"));
    return path;
  }
};

TEST_F(RunCommandSimulatorTest, ACleanSeriesFlagsTheCollapseStreamsAndExitsZero) {
  FakeGateway gateway;
  std::vector<std::string> args = Args(SimSpec(), SimConfig());
  args.insert(args.end(), {"--coordinator", gateway.address(), "--timeout", "20"});
  ASSERT_EQ(Run(args), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("series sim-series (task sim-task, backend llama-server "));
  EXPECT_THAT(out_, HasSubstr("): 10 runs, 10 OK, 0 FAILED\nSIMULATED: "));
  // Every call's figure, the drops marked at warm calls 3 and 4 only.
  EXPECT_THAT(out_, ContainsRegex("\ngpu cold  1: [0-9.]+  SIMULATED\n"));
  EXPECT_THAT(out_, ContainsRegex("\ngpu warm  1: [0-9.]+  2: [0-9.]+  3: [0-9.]+ \\(THROUGHPUT_DROP -[0-9.]+%\\)  "
                                  "4: [0-9.]+ \\(THROUGHPUT_DROP -[0-9.]+%\\)  SIMULATED\n"));
  EXPECT_THAT(out_, ContainsRegex("\ncpu warm  1: [0-9.]+  2: [0-9.]+  3: [0-9.]+  4: [0-9.]+  SIMULATED\n"));
  // The change of level is named at warm call 3 (the simulator throttles generation requests 4
  // and 5: warm calls 3 and 4); four calls are never significant at 5% (p = 0.60 at most).
  EXPECT_THAT(out_, ContainsRegex("\nTHROUGHPUT_DROP: 2 warm call\\(s\\) fell more than 15% below the median of the "
                                  "first 3 warm calls of their combination: [^\n]+\ngpu warm: the level fell from "
                                  "[0-9.]+ to [0-9.]+ at warm call 3 \\(Pettitt p=0.6 over 4 warm calls, not "
                                  "significant at 5%\\)\n"));
  EXPECT_THAT(out_, HasSubstr(absl::StrCat("sent to coordinator ", gateway.address(),
                                           ": 10 stored, 0 duplicates, 0 rejected\n")));

  auto records = ReadRecords(Env::Default(), series_);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 10u);
  std::vector<std::string> flagged;
  for (const SourcedRecord& r : *records) {
    EXPECT_TRUE(r.record.simulated());
    EXPECT_EQ(r.record.status().code(), v1::RunStatus::CODE_OK);
    EXPECT_EQ(r.record.conditions_fingerprint(), gateway.last_hello().conditions().fingerprint());
    for (const v1::Flag& flag : r.record.flags()) {
      if (flag.code() == "THROUGHPUT_DROP") {
        flagged.push_back(absl::StrCat(r.record.mode(), " ", r.record.call_index()));
        EXPECT_THAT(flag.reason(), ::testing::ContainsRegex(
                                       "the median of warm calls 1-3 \\(threshold 15%\\); the level fell from [0-9.]+ "
                                       "to [0-9.]+ at warm call 3 \\(Pettitt p="));
      }
    }
  }
  EXPECT_THAT(flagged, ElementsAre("gpu 3", "gpu 4"));
  EXPECT_EQ(gateway.stored().size(), 10u);
  EXPECT_EQ(gateway.last_hello().conditions().backend_versions().count("llama-server"), 1u);
}

TEST_F(RunCommandSimulatorTest, AModeWhoseServerExitsWhileLoadingFailsAndTheOthersRun) {
  ASSERT_EQ(Run(Args(SimSpec("    broken: [--sim-fail, exit-during-load]\n"), SimConfig())), 1) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("): 11 runs, 10 OK, 1 FAILED\n"));
  EXPECT_THAT(out_, HasSubstr("\nbroken cold  1: FAILED\n"));
  EXPECT_THAT(out_, HasSubstr("\n  broken cold 1: could not open llama-server: "));
  EXPECT_THAT(out_, HasSubstr("\n  broken: stopped at cold 1, 4 of 5 planned runs not made: could not open "
                              "llama-server\n"));
  auto records = ReadRecords(Env::Default(), series_);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 11u);
  EXPECT_EQ(records->back().record.mode(), "broken");
  EXPECT_NE(records->back().record.status().log_tail(), "");
}

// OUTPUT_MISMATCH through a real series: the simulator answers its 3rd request (warm call 2) as
// another seed would; the runs before it gave the reference, the one after agrees with it again.
// With `outputs: {deterministic: false}` the same server flags nothing and every record says so.
TEST_F(RunCommandSimulatorTest, AServerWhoseOutputDriftsIsFlaggedOutputMismatch) {
  const std::string config = SimConfig();
  for (const bool expected : {true, false}) {
    const std::string spec = tmp_.path() + (expected ? "/drift.yaml" : "/drift-free.yaml");
    series_ = tmp_.path() + (expected ? "/drift-series" : "/drift-free-series");
    Write(spec, absl::StrCat("series: drift\ntask: sim-task\nbackend: llama-server\nllama-server:\n  binary: ",
                             LLAMA_SERVER_SIM_BINARY, "\n  model: ", tmp_.path(), "/models/model.gguf\n",
                             "  args: [--sim-load-ms, 50, --sim-gpu-tps, 400]\n",
                             "  modes: {gpu: [-ngl, 99, --sim-output-drift, \"3\"]}\n",
                             "  prompt: Write a short paragraph about the history of the bicycle.\n",
                             "  n_predict: 8\nruns:\n  warm: 3\n",
                             expected ? "" : "outputs: {deterministic: false}\n"));
    ASSERT_EQ(Run(Args(spec, config)), 0) << out_ << err_;
    auto records = ReadRecords(Env::Default(), series_);
    ASSERT_TRUE(records.ok()) << records.status();
    ASSERT_EQ(records->size(), 4u);
    std::vector<std::string> hashes, flagged;
    for (const SourcedRecord& r : *records) {
      ASSERT_EQ(r.record.outputs_size(), 1);
      hashes.push_back(r.record.outputs(0).sha256());
      EXPECT_EQ(r.record.params().at("inputs_sha256"), (*records)[0].record.params().at("inputs_sha256"));
      EXPECT_EQ(r.record.params().contains("outputs_deterministic"), !expected);
      for (const v1::Flag& flag : r.record.flags()) {
        if (flag.code() != "OUTPUT_MISMATCH") continue;
        flagged.push_back(absl::StrCat(PhaseName(r.record.phase()), " ", r.record.call_index()));
        EXPECT_EQ(flag.reason(),
                  absl::StrCat("output 1 of 1 (text content): sha256 ", r.record.outputs(0).sha256().substr(0, 12),
                               ", expected ", hashes[0].substr(0, 12), " as run ", (*records)[0].record.run_id(),
                               " (cold 1) gave for the same inputs (inputs_sha256 ",
                               r.record.params().at("inputs_sha256").substr(0, 12), ")"));
      }
    }
    EXPECT_EQ(hashes[1], hashes[0]);
    EXPECT_NE(hashes[2], hashes[0]);
    EXPECT_EQ(hashes[3], hashes[0]);
    if (expected) {
      EXPECT_THAT(flagged, ElementsAre("warm 2"));
      EXPECT_THAT(err_, ContainsRegex("gpu warm 2/3: generation tokens/s [0-9.]+ tokens/s OUTPUT_MISMATCH SIMULATED"));
      EXPECT_EQ((*records)[0].record.params().count("outputs_deterministic"), 0u);
    } else {
      EXPECT_THAT(flagged, ElementsAre());
      EXPECT_EQ((*records)[0].record.params().at("outputs_deterministic"), "false");
    }
  }
}

// Issue 19 case 6: SIGTERM during "pause_between_runs: 24h" (the most a spec allows) stops `run`
// at once: the pause ends, the server it measures is stopped, the run made is kept, exit code 1.
TEST_F(RunCommandSimulatorTest, ASigtermDuringALongPauseStopsAtOnceAndStopsTheServer) {
  const std::string config = SimConfig();
  const std::string spec = tmp_.path() + "/pause.yaml";
  const std::string model = tmp_.path() + "/models/model.gguf";
  Write(spec, absl::StrCat("series: pause-series\ntask: sim-task\nbackend: llama-server\nllama-server:\n  binary: ",
                           LLAMA_SERVER_SIM_BINARY, "\n  model: ", model,
                           "\n  args: [--sim-load-ms, 50]\n  modes: {gpu: [-ngl, 99]}\n  prompt: hello\n"
                           "  n_predict: 4\nruns:\n  cold: 1\n  warm: 2\n  pause_between_runs: 24h\n"));
  const pid_t agent = Spawn(Args(spec, config));
  ASSERT_TRUE(PollFor([&] { return ReadAll(tmp_.path() + "/stderr").find("gpu cold 1/1: ") != std::string::npos; }))
      << ReadAll(tmp_.path() + "/stderr");
  ASSERT_EQ(ProcessesNaming(model).size(), 1u);  // the simulator, loaded, waiting out the pause with the agent
  ::kill(agent, SIGTERM);
  absl::Duration took;
  EXPECT_EQ(WaitExit(agent, absl::Seconds(20), &took), 1) << err_;
  EXPECT_LT(took, absl::Seconds(2)) << err_;
  EXPECT_THAT(err_, HasSubstr("benchfleet-agent run: SIGTERM: stopping (a pause or a wait ends now"));
  // The signal lands in the pause, or (on a loaded machine) between the cold run's line and the
  // pause's start: the series stops before warm 1 either way.
  EXPECT_THAT(err_, ContainsRegex("\ngpu: stopped (during the pause )?before warm 1\n"));
  EXPECT_THAT(err_, HasSubstr("llama-server gpu stopped ("));
  EXPECT_THAT(out_, HasSubstr("interrupted: the series was stopped before its end\n"));
  EXPECT_THAT(ProcessesNaming(model), ::testing::IsEmpty());
  auto records = ReadRecords(Env::Default(), series_);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].record.phase(), v1::PHASE_COLD);
  EXPECT_EQ((*records)[0].record.status().code(), v1::RunStatus::CODE_OK);
}

// A second SIGTERM while the first waits for a slow end (a timed run in progress that never
// answers, request_timeout 10m) exits at once, exit code 1, the server dying with the agent; the
// run made before stays in the series folder.
TEST_F(RunCommandSimulatorTest, ASecondSigtermDuringASlowShutdownExitsAtOnce) {
  const std::string config = SimConfig();
  const std::string spec = tmp_.path() + "/hang.yaml";
  const std::string model = tmp_.path() + "/models/model.gguf";
  Write(spec, absl::StrCat("series: hang-series\ntask: sim-task\nbackend: llama-server\nllama-server:\n  binary: ",
                           LLAMA_SERVER_SIM_BINARY, "\n  model: ", model,
                           "\n  args: [--sim-load-ms, 50, --sim-fail, hang-on-request, '2']\n"
                           "  modes: {gpu: [-ngl, 99]}\n  prompt: hello\n  n_predict: 4\n"
                           "  request_timeout: 10m\nruns:\n  cold: 1\n  warm: 1\n"));
  const pid_t agent = Spawn(Args(spec, config));
  // The warm run's request reached the simulator (its second "init sampler" line), which holds it.
  const std::string server_log = series_ + "/llama-server-gpu.log";
  ASSERT_TRUE(PollFor([&] {
    const std::string log = ReadAll(server_log);
    size_t n = 0;
    for (size_t at = log.find("init sampler"); at != std::string::npos; at = log.find("init sampler", at + 1)) ++n;
    return n >= 2;
  })) << ReadAll(tmp_.path() + "/stderr");
  ::kill(agent, SIGTERM);
  ASSERT_TRUE(PollFor([&] { return ReadAll(tmp_.path() + "/stderr").find("SIGTERM: stopping") != std::string::npos; }));
  int status = 0;
  absl::SleepFor(absl::Milliseconds(300));  // the first signal does not end the timed run
  ASSERT_EQ(::waitpid(agent, &status, WNOHANG), 0) << "the agent left after one SIGTERM";
  ::kill(agent, SIGTERM);
  absl::Duration took;
  EXPECT_EQ(WaitExit(agent, absl::Seconds(20), &took), 1) << err_;
  EXPECT_LT(took, absl::Seconds(2)) << err_;
  EXPECT_THAT(err_, HasSubstr("benchfleet-agent run: second SIGTERM: exiting at once (exit code 1); the records of "
                              "the runs made so far are in the series folder\n"));
  EXPECT_TRUE(PollFor([&] { return ProcessesNaming(model).empty(); }));  // SIGKILLed by the kernel with the agent
  auto records = ReadRecords(Env::Default(), series_);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].record.phase(), v1::PHASE_COLD);
}

// Repeat until stable against the simulator: the steady mode stops as stable, the mode whose every
// other warm call runs at a quarter of the rate (--sim-throttle counts the cold call as request 1)
// stops at the maximum; the report and the last warm call's record say which. The simulator's
// figures are measured on this machine's clock, so the bound is wide (20%) and the steady mode's
// stopping call is read, not assumed.
TEST_F(RunCommandSimulatorTest, WarmCallsUntilStableStopWhenSteadyAndAtTheMaximumWhenNoisy) {
  const std::string path = tmp_.path() + "/until.yaml";
  Write(path, absl::StrCat("series: sim-until\ntask: sim-task\nbackend: llama-server\nllama-server:\n  binary: ",
                           LLAMA_SERVER_SIM_BINARY, "\n  model: ", tmp_.path(), "/models/model.gguf\n",
                           "  args: [--sim-load-ms, 50, --sim-cpu-tps, 100]\n  modes:\n",
                           "    steady: [-ngl, 0]\n",
                           "    noisy: [-ngl, 0, --sim-throttle, \"3:0.25,5:0.25,7:0.25,9:0.25\"]\n",
                           "  prompt: Write a short paragraph about the history of the bicycle.\n",
                           "  n_predict: 8\nruns:\n  warm: {until: {ci_halfwidth: 20%, max: 8}}\n"));
  ASSERT_EQ(Run(Args(path, SimConfig())), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("warm calls until stable (95% CI of the median of predicted_per_second, half-width <= "
                              "20% of it, tested from 5 accepted calls, at most 8):\n"));
  EXPECT_THAT(out_, ContainsRegex("\n  steady: stopped: stable, CI half-width [0-9.]+% <= 20% after [5-8] warm "
                                  "calls  SIMULATED\n  noisy: stopped: max 8 warm calls, CI half-width [0-9.]+% > "
                                  "20%  SIMULATED\n"));
  auto records = ReadRecords(Env::Default(), series_);
  ASSERT_TRUE(records.ok()) << records.status();
  std::vector<std::string> stops;
  for (const SourcedRecord& r : *records) {
    if (!r.record.has_warm_stop()) continue;
    stops.push_back(absl::StrCat(r.record.mode(), " ", v1::WarmStop::Reason_Name(r.record.warm_stop().reason()),
                                 r.record.call_index() == r.record.warm_stop().warm_calls() ? "" : " MISPLACED"));
    EXPECT_TRUE(r.record.simulated());
  }
  EXPECT_THAT(stops, ElementsAre("steady REASON_STABLE", "noisy REASON_MAX"));
  EXPECT_EQ(records->back().record.call_index(), 8u);
  EXPECT_EQ(records->back().record.mode(), "noisy");
}

// A spec duration above its bound is refused before anything runs, with its file and line.
TEST_F(RunCommandTest, ADurationAboveItsBoundIsExitCode2WithItsLine) {
  const std::string spec = Spec("  pause_between_runs: 100000000h\n");
  EXPECT_EQ(Run(Args(spec, Config())), 2);
  EXPECT_EQ(err_, absl::StrCat("benchfleet-agent run: error: ", spec,
                               ":13: runs.pause_between_runs must be at most 24h, got 100000000h\n"));
  EXPECT_FALSE(Env::Default()->FileExists(series_));
}

}  // namespace
}  // namespace benchfleet::agent
