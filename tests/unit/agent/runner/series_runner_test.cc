// The series runner with a scripted fake backend: phases, call indices and repetitions, cold
// first after Open, open failures, dead sessions, THROUGHPUT_DROP, pacing on the injected clock,
// and where records go (series folder, outbox) and when (never inside a timed run).
#include "agent/runner/series_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <stop_token>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/runner/figures.h"
#include "common/figures.h"
#include "agent/runner/series_summary.h"
#include "common/conditions_fingerprint.h"
#include "common/hashing.h"
#include "common/record_validation.h"
#include "common/version.h"
#include "tests/support/clock_env.h"
#include "tests/unit/agent/runner/fake_backend.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;
using ::benchfleet::testing::ClockEnv;
using testing::FakeBackend;
using testing::FakeOpenFailure;
using testing::Dying;
using testing::Fail;
using testing::FakeRun;
using testing::CacheHit;
using testing::Ok;
using testing::StatusUnset;
using testing::ScopedTempDir;

constexpr char kAgentId[] = "1b4e28ba-2fa1-41d2-883f-0016d3cca427";
constexpr char kTaskId[] = "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f";
constexpr char kHead[] = "series: s1\ntask: t1\nbackend: fake\n";

// "gpu cold 1 r1 OK 48.1", "gpu warm 2 r1 FAILED", with " THROUGHPUT_DROP" when flagged.
std::string Brief(const v1::RunRecord& r) {
  std::string text = absl::StrCat(r.mode(), " ", PhaseName(r.phase()), " ", r.call_index(), " r", r.repetition(), " ",
                                  StatusName(r.status().code()) == "ok" ? "OK" : "FAILED");
  if (auto value = MetricValue(r, "predicted_per_second"); value.has_value()) {
    absl::StrAppend(&text, " ", FormatFigure(*value));
  }
  for (const v1::Flag& flag : r.flags()) absl::StrAppend(&text, " ", flag.code());
  return text;
}

std::vector<std::string> Briefs(const SeriesResult& result) {
  std::vector<std::string> out;
  for (const RunResult& run : result.runs) out.push_back(Brief(run.record));
  return out;
}

std::vector<FakeRun> Values(std::initializer_list<double> values) {
  std::vector<FakeRun> runs;
  for (double v : values) runs.push_back(Ok(v));
  return runs;
}

class SeriesRunnerTest : public ::testing::Test {
 protected:
  SeriesRunnerTest() : env_(&clock_), allow_(AllowConfig{{"fake"}, {}, {}, {}}, "agent.yaml"), backend_(&env_) {}

  RunnerOptions Options() {
    RunnerOptions options;
    options.env = &env_;
    options.allow = &allow_;
    options.agent_id = kAgentId;
    options.task_id = kTaskId;
    options.conditions.set_hostname("gpu-01");
    options.conditions.set_fingerprint(ConditionsFingerprint(options.conditions));
    options.out_dir = out_dir();
    options.progress = [this](std::string_view line) { progress_.emplace_back(line); };
    return options;
  }

  std::string out_dir() const { return tmp_.path() + "/series"; }

  absl::StatusOr<std::unique_ptr<SeriesRunner>> Runner(const std::string& yaml, RunnerOptions options) {
    auto spec = ParseSeriesSpec(yaml, "spec.yaml");
    if (!spec.ok()) return spec.status();
    return SeriesRunner::Create(*spec, &backend_, std::move(options));
  }

  SeriesResult RunSeries(const std::string& yaml, RunnerOptions options) {
    auto runner = Runner(yaml, std::move(options));
    EXPECT_TRUE(runner.ok()) << runner.status();
    if (!runner.ok()) return {};
    auto result = (*runner)->Run();
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? std::move(*result) : SeriesResult{};
  }
  SeriesResult RunSeries(const std::string& yaml) { return RunSeries(yaml, Options()); }

  ScopedTempDir tmp_;
  // SleepFor takes no real time: it moves the clock by exactly the sleep, and the test sees every
  // pause the runner took (sleeps()).
  SimulatedClock clock_{{.sleeps_advance = true}};
  ClockEnv env_;
  AllowList allow_;
  FakeBackend backend_;
  std::vector<std::string> progress_;
};

TEST_F(SeriesRunnerTest, NumbersPhasesCallsAndRepetitions) {
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  validation: 1\n  cold: 2\n  warm: 2\n  repetitions: 2\nmatrix:\n  mode: [gpu, cpu]\n"));
  std::vector<std::string> expected;
  for (const char* rep : {"r1", "r2"}) {
    for (const char* mode : {"gpu", "cpu"}) {
      for (const char* call : {"validation 1", "cold 1", "cold 2", "warm 1", "warm 2"}) {
        expected.push_back(absl::StrCat(mode, " ", call, " ", rep, " OK 50.0"));
      }
    }
  }
  EXPECT_THAT(Briefs(result), ElementsAreArray(expected));
  EXPECT_TRUE(result.clean());
  EXPECT_EQ(result.failed_runs, 0);
  EXPECT_THAT(result.notes, IsEmpty());
}

TEST_F(SeriesRunnerTest, EachColdRunIsTheFirstCallAfterOpen) {
  RunSeries(absl::StrCat(kHead, "runs:\n  validation: 2\n  cold: 2\n  warm: 2\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(backend_.events(), ElementsAre("open gpu",  //
                                             "run gpu validation 1 rep 1 input 0 #1 t=0",
                                             "run gpu validation 2 rep 1 input 1 #2 t=0",  //
                                             "close gpu",                                  //
                                             "open gpu",                                   //
                                             "run gpu cold 1 rep 1 input 0 #1 t=0",        //
                                             "close gpu",                                  //
                                             "open gpu",                                   //
                                             "run gpu cold 2 rep 1 input 0 #1 t=0",        //
                                             "run gpu warm 1 rep 1 input 0 #2 t=0",        //
                                             "run gpu warm 2 rep 1 input 0 #3 t=0",        //
                                             "close gpu"));
}

TEST_F(SeriesRunnerTest, FillsWhatTheRunnerOwnsInEveryRecord) {
  RunnerOptions options = Options();
  const std::string fingerprint_before = options.conditions.fingerprint();
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 1\nmatrix:\n  mode: [gpu]\n"), options);
  ASSERT_EQ(result.runs.size(), 2u);
  EXPECT_THAT(result.conditions.backend_versions(), UnorderedElementsAre(Pair("fake", "fake-1.0")));
  EXPECT_EQ(result.conditions.fingerprint(), ConditionsFingerprint(result.conditions));
  EXPECT_NE(result.conditions.fingerprint(), fingerprint_before);
  std::set<std::string> run_ids;
  for (const RunResult& run : result.runs) {
    const v1::RunRecord& r = run.record;
    EXPECT_TRUE(IsUuid(r.run_id())) << r.run_id();
    run_ids.insert(r.run_id());
    EXPECT_EQ(r.series_id(), "s1");
    EXPECT_EQ(r.task_id(), kTaskId);
    EXPECT_EQ(r.agent_id(), kAgentId);
    EXPECT_EQ(r.conditions_fingerprint(), result.conditions.fingerprint());
    EXPECT_EQ(r.backend(), "fake");
    EXPECT_EQ(r.task(), "t1");
    EXPECT_EQ(r.mode(), "gpu");
    EXPECT_THAT(r.matrix(), UnorderedElementsAre(Pair("mode", "gpu")));
    EXPECT_EQ(r.repetition(), 1u);
    EXPECT_EQ(r.provenance().kind(), v1::Provenance::KIND_LIVE);
    EXPECT_EQ(r.agent_version(), kVersion);
    EXPECT_FALSE(r.simulated());
    // The run's own params win over the session's ("seed").
    EXPECT_THAT(r.params(), UnorderedElementsAre(Pair("seed", "42"), Pair("n_ctx", "4096"),
                                                 Pair("pause_between_runs_seconds", "0")));
    EXPECT_TRUE(ValidateRecord(r).ok());
    EXPECT_EQ(run.label, "gpu");
  }
  EXPECT_EQ(run_ids.size(), 2u);
  EXPECT_EQ(result.runs[0].record.phase(), v1::PHASE_COLD);
  EXPECT_EQ(result.runs[1].record.phase(), v1::PHASE_WARM);
  EXPECT_EQ(result.task_id, kTaskId);
}

// The backend's declaration of its figures (common/figures.h) is stamped on every record, so the
// guide, the coordinator and the CLI read what a figure is without naming it.
TEST_F(SeriesRunnerTest, StampsTheBackendsDeclarationOnEveryRecord) {
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 1\nmatrix:\n  mode: [gpu]\n"));
  ASSERT_EQ(result.runs.size(), 2u);
  for (const RunResult& run : result.runs) {
    const v1::Metric* main = MainFigure(run.record);
    ASSERT_NE(main, nullptr) << run.record.ShortDebugString();
    EXPECT_EQ(main->name(), "predicted_per_second");
    EXPECT_EQ(main->headline(), 1u);
    EXPECT_EQ(main->better(), v1::BETTER_HIGHER);
  }
}

TEST_F(SeriesRunnerTest, AnEmptyTaskIdGetsANewUuid) {
  RunnerOptions options = Options();
  options.task_id = "";
  auto runner = Runner(kHead, options);
  ASSERT_TRUE(runner.ok());
  EXPECT_TRUE(IsUuid((*runner)->task_id()));
}

TEST_F(SeriesRunnerTest, OpenFailureIsOneFailedRecordAndTheNextCombinationRuns) {
  backend_.FailOpen("gpu", FakeOpenFailure{"server exited while loading (exit code 1)",
                                           "load_tensors: loading model\nCUDA error: out of memory\n"});
  // No matrix: the backend's default modes, gpu then cpu.
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 2\n"));
  EXPECT_THAT(Briefs(result), ElementsAre("gpu cold 1 r1 FAILED", "cpu cold 1 r1 OK 50.0", "cpu warm 1 r1 OK 50.0",
                                          "cpu warm 2 r1 OK 50.0"));
  const v1::RunRecord& failed = result.runs[0].record;
  EXPECT_EQ(failed.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(failed.status().message(), "could not open fake: server exited while loading (exit code 1)");
  EXPECT_EQ(failed.status().log_tail(), "load_tensors: loading model\nCUDA error: out of memory\n");
  EXPECT_EQ(failed.mode(), "gpu");
  EXPECT_TRUE(IsUuid(failed.run_id()));
  // Held until the cpu session gave the backend's version: the same conditions as the rest.
  EXPECT_EQ(failed.conditions_fingerprint(), result.conditions.fingerprint());
  EXPECT_EQ(result.conditions.backend_versions().at("fake"), "fake-1.0");
  EXPECT_THAT(backend_.events(),
              ElementsAre("open gpu", "open cpu", "run cpu cold 1 rep 1 input 0 #1 t=0",
                          "run cpu warm 1 rep 1 input 0 #2 t=0", "run cpu warm 2 rep 1 input 0 #3 t=0", "close cpu"));
  EXPECT_EQ(result.failed_runs, 1);
  EXPECT_EQ(result.stopped_early, 1);
  EXPECT_THAT(result.notes, ElementsAre("gpu: stopped at cold 1, 2 of 3 planned runs not made: could not open fake"));
  EXPECT_FALSE(result.clean());
  EXPECT_EQ(SeriesExitCode(result, absl::OkStatus()), kSeriesExitNotClean);
}

TEST_F(SeriesRunnerTest, ASeriesWhoseEveryOpenFailsStillWritesItsRecords) {
  backend_.FailOpen("gpu", FakeOpenFailure{"binary not found", ""});
  backend_.FailOpen("cpu", FakeOpenFailure{"binary not found", ""});
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 1\n"));
  EXPECT_THAT(Briefs(result), ElementsAre("gpu cold 1 r1 FAILED", "cpu cold 1 r1 FAILED"));
  EXPECT_TRUE(result.conditions.backend_versions().empty());
  auto records = ReadRecords(Env::Default(), out_dir());
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[1].record.status().message(), "could not open fake: binary not found");
}

TEST_F(SeriesRunnerTest, ADeadSessionEndsItsCombination) {
  backend_.Script("gpu", {Ok(48), Ok(52), Dying(Fail("server exited (signal 9)"))});
  backend_.Script("cpu", {Ok(9), Dying(Ok(10))});
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 4\n"));
  EXPECT_THAT(Briefs(result), ElementsAre("gpu cold 1 r1 OK 48.0", "gpu warm 1 r1 OK 52.0", "gpu warm 2 r1 FAILED",
                                          "cpu cold 1 r1 OK 9.0", "cpu warm 1 r1 OK 10.0"));
  EXPECT_THAT(result.notes,
              ElementsAre("gpu: stopped at warm 2, 2 of 5 planned runs not made: the fake session ended: server "
                          "exited (signal 9)",
                          "cpu: stopped at warm 1, 3 of 5 planned runs not made: the fake session ended"));
  EXPECT_EQ(result.stopped_early, 2);
  EXPECT_EQ(result.failed_runs, 1);
  EXPECT_EQ(backend_.events()[4], "close gpu");
  EXPECT_EQ(backend_.events().back(), "close cpu");
  EXPECT_EQ(SeriesExitCode(result, absl::OkStatus()), kSeriesExitNotClean);
}

TEST_F(SeriesRunnerTest, AFailedRunOnALiveSessionDoesNotStopTheCombination) {
  backend_.Script("gpu", {Ok(48), Fail("HTTP 500 from /completion"), Ok(51)});
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 2\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(Briefs(result), ElementsAre("gpu cold 1 r1 OK 48.0", "gpu warm 1 r1 FAILED", "gpu warm 2 r1 OK 51.0"));
  EXPECT_THAT(result.notes, IsEmpty());
  EXPECT_EQ(result.failed_runs, 1);
  EXPECT_FALSE(result.clean());
}

// The expected reasons and fractions: computed by a Python 3 re-implementation of the rule of
// throughput_drop.h (see throughput_drop_test.cc).
TEST_F(SeriesRunnerTest, ThroughputDropIsFlaggedAtExactlyTheCallsBelowTheThreshold) {
  backend_.Script("gpu", Values({48.1, 52.9, 52.6, 30.0, 28.2}));
  // The reference is the median of warm calls 1-3, 10.0: 8.4 is 16.0% below (flagged); 8.6 is 14%
  // below (not).
  backend_.Script("cpu", Values({9.8, 10.1, 10.0, 8.4, 8.6}));
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 4\n"));
  EXPECT_THAT(Briefs(result),
              ElementsAre("gpu cold 1 r1 OK 48.1", "gpu warm 1 r1 OK 52.9", "gpu warm 2 r1 OK 52.6",
                          "gpu warm 3 r1 OK 30.0 THROUGHPUT_DROP", "gpu warm 4 r1 OK 28.2 THROUGHPUT_DROP",
                          "cpu cold 1 r1 OK 9.8", "cpu warm 1 r1 OK 10.1", "cpu warm 2 r1 OK 10.0",
                          "cpu warm 3 r1 OK 8.4 THROUGHPUT_DROP", "cpu warm 4 r1 OK 8.6"));
  EXPECT_EQ(result.runs[3].record.flags(0).reason(),
            "predicted_per_second 30.0 is 43.0% below the reference 52.6, the median of warm calls 1-3 (threshold "
            "15%); the level fell from 52.8 to 30.0 at warm call 3 (Pettitt p=1 over 3 warm calls, not significant "
            "at 5%); unexplained: no device samples");
  EXPECT_EQ(result.runs[4].record.flags(0).reason(),
            "predicted_per_second 28.2 is 46.4% below the reference 52.6, the median of warm calls 1-3 (threshold "
            "15%); the level fell from 52.8 to 29.1 at warm call 3 (Pettitt p=0.6 over 4 warm calls, not significant "
            "at 5%); unexplained: no device samples");
  EXPECT_EQ(result.runs[8].record.flags(0).reason(),
            "predicted_per_second 8.4 is 16.0% below the reference 10.0, the median of warm calls 1-3 (threshold "
            "15%); the level fell from 10.1 to 8.4 at warm call 3 (Pettitt p=1 over 3 warm calls, not significant at "
            "5%); unexplained: no device samples");
  EXPECT_NEAR(*result.runs[3].throughput_drop, (52.6 - 30.0) / 52.6, 1e-12);
  EXPECT_FALSE(result.runs[9].throughput_drop.has_value());
  // A drop is an observation, not a failure.
  EXPECT_TRUE(result.clean());
}

TEST_F(SeriesRunnerTest, ThroughputDropExactlyAtTheThresholdIsNotFlagged) {
  // (100 - 85) / 100 is the threshold itself; 84.9 is 15.1% below.
  backend_.Script("gpu", Values({90, 100, 100, 100, 85, 84.9}));
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 5\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(Briefs(result), ElementsAre("gpu cold 1 r1 OK 90.0", "gpu warm 1 r1 OK 100.0", "gpu warm 2 r1 OK 100.0",
                                          "gpu warm 3 r1 OK 100.0", "gpu warm 4 r1 OK 85.0",
                                          "gpu warm 5 r1 OK 84.9 THROUGHPUT_DROP"));
}

TEST_F(SeriesRunnerTest, ThroughputDropReferenceIsTheMedianOfTheFirstWarmCallsThatSucceeded) {
  backend_.Script("gpu", {Ok(40), Ok(50), Fail("HTTP 400"), Ok(52), Ok(48), Ok(40)});
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 5\nmatrix:\n  mode: [gpu]\n"));
  ASSERT_EQ(result.runs.size(), 6u);
  ASSERT_EQ(result.runs[5].record.flags_size(), 1);
  EXPECT_EQ(result.runs[5].record.flags(0).reason(),
            "predicted_per_second 40.0 is 20.0% below the reference 50.0, the median of warm calls 1, 3, 4 (threshold "
            "15%); the level fell from 50.0 to 40.0 at warm call 5 (Pettitt p=0.6 over 4 warm calls, not significant "
            "at 5%); unexplained: no device samples");
}

TEST_F(SeriesRunnerTest, ThroughputDropIsPerRepetitionWithTheSpecsThreshold) {
  // Repetition 2 is slower throughout: its own first warm calls are its reference.
  backend_.Script("gpu", Values({50, 50, 50, 50, 30, 30, 30, 20}));
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  warm: 3\n  repetitions: 2\n  throughput_drop_threshold: 0.3\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(Briefs(result), ElementsAre("gpu cold 1 r1 OK 50.0", "gpu warm 1 r1 OK 50.0", "gpu warm 2 r1 OK 50.0",
                                          "gpu warm 3 r1 OK 50.0", "gpu cold 1 r2 OK 30.0", "gpu warm 1 r2 OK 30.0",
                                          "gpu warm 2 r2 OK 30.0", "gpu warm 3 r2 OK 20.0 THROUGHPUT_DROP"));
  EXPECT_EQ(result.runs[7].record.flags(0).reason(),
            "predicted_per_second 20.0 is 33.3% below the reference 30.0, the median of warm calls 1-3 (threshold "
            "30%); the level fell from 30.0 to 20.0 at warm call 3 (Pettitt p=1 over 3 warm calls, not significant at "
            "5%); unexplained: no device samples");
}

TEST_F(SeriesRunnerTest, PauseBetweenRunsIsTakenOnTheInjectedClock) {
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 2\n  pause_between_runs: 2s\n"));
  ASSERT_EQ(result.runs.size(), 6u);
  // Before every run but the first; none around Open or Close.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(absl::Seconds(2), absl::Seconds(2), absl::Seconds(2), absl::Seconds(2),
                                           absl::Seconds(2)));
  EXPECT_THAT(backend_.events(),
              ElementsAre("open gpu", "run gpu cold 1 rep 1 input 0 #1 t=0", "run gpu warm 1 rep 1 input 0 #2 t=2s",
                          "run gpu warm 2 rep 1 input 0 #3 t=4s", "close gpu", "open cpu",
                          "run cpu cold 1 rep 1 input 0 #1 t=6s", "run cpu warm 1 rep 1 input 0 #2 t=8s",
                          "run cpu warm 2 rep 1 input 0 #3 t=10s", "close cpu"));
  for (const RunResult& run : result.runs) {
    EXPECT_EQ(run.record.params().at("pause_between_runs_seconds"), "2");
  }
}

// The same with common/clock.h's SimulatedClock as it is: the runner blocks in SleepFor until
// the test moves the clock, and the next run starts only then.
TEST(SeriesRunnerPauseTest, TheNextRunWaitsForTheSimulatedClock) {
  ScopedTempDir tmp;
  SimulatedClock clock;
  ClockEnv env(&clock);
  AllowList allow(AllowConfig{{"fake"}, {}, {}, {}}, "agent.yaml");
  FakeBackend backend(&env);
  auto spec = ParseSeriesSpec(
      absl::StrCat(kHead, "runs:\n  warm: 1\n  pause_between_runs: 500ms\nmatrix:\n  mode: [gpu]\n"), "spec.yaml");
  ASSERT_TRUE(spec.ok());
  std::atomic<int> runs_started{0};
  RunnerOptions options;
  options.env = &env;
  options.allow = &allow;
  options.agent_id = kAgentId;
  options.out_dir = tmp.path() + "/series";
  options.on_timed_window = [&](bool timed) {
    if (timed) ++runs_started;
  };
  auto runner = SeriesRunner::Create(*spec, &backend, options);
  ASSERT_TRUE(runner.ok()) << runner.status();
  absl::StatusOr<SeriesResult> result;
  std::thread thread([&] { result = (*runner)->Run(); });

  auto wait_for_sleeper = [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (clock.sleepers() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return clock.sleepers() == 1;
  };
  ASSERT_TRUE(wait_for_sleeper());
  EXPECT_EQ(runs_started.load(), 1);
  clock.Advance(absl::Milliseconds(499));
  EXPECT_EQ(runs_started.load(), 1);
  clock.Advance(absl::Milliseconds(1));
  thread.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(runs_started.load(), 2);
  EXPECT_THAT(backend.events(), ElementsAre("open gpu", "run gpu cold 1 rep 1 input 0 #1 t=0",
                                            "run gpu warm 1 rep 1 input 0 #2 t=500ms", "close gpu"));
}

TEST_F(SeriesRunnerTest, RecordsLandInTheSeriesFolderAndTheOutboxBetweenRuns) {
  auto outbox = Outbox::Open(Env::Default(), tmp_.path() + "/outbox");
  ASSERT_TRUE(outbox.ok()) << outbox.status();
  RunnerOptions options = Options();
  options.outbox = outbox->get();
  // At each edge of a timed window: how many records the folder and the outbox hold.
  std::vector<std::string> windows;
  options.on_timed_window = [&](bool timed) {
    auto records = ReadRecords(Env::Default(), out_dir());
    windows.push_back(absl::StrCat(timed ? "start" : "end", " folder=", records.ok() ? records->size() : 0,
                                   " outbox=", (*outbox)->depth()));
  };
  const std::string yaml = absl::StrCat(kHead, "runs:\n  warm: 2\nmatrix:\n  mode: [gpu]\n");
  const SeriesResult result = RunSeries(yaml, options);
  ASSERT_EQ(result.runs.size(), 3u);
  // Each record is kept after its run's window closed and before the next one opened.
  EXPECT_THAT(windows, ElementsAre("start folder=0 outbox=0", "end folder=0 outbox=0", "start folder=1 outbox=1",
                                   "end folder=1 outbox=1", "start folder=2 outbox=2", "end folder=2 outbox=2"));

  auto records = ReadRecords(Env::Default(), out_dir());
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ((*records)[i].record.run_id(), result.runs[i].record.run_id());
  EXPECT_EQ((*outbox)->depth(), 3u);
  const std::vector<PendingRecord> pending = (*outbox)->Pending(10);
  ASSERT_EQ(pending.size(), 3u);
  EXPECT_EQ(pending[2].run_id, result.runs[2].record.run_id());

  auto spec_copy = Env::Default()->ReadFile(out_dir() + "/spec.yaml");
  ASSERT_TRUE(spec_copy.ok());
  EXPECT_EQ(*spec_copy, yaml);
  auto conditions = Env::Default()->ReadFile(out_dir() + "/conditions.json");
  ASSERT_TRUE(conditions.ok());
  EXPECT_NE(conditions->find(result.conditions.fingerprint()), std::string::npos);
  EXPECT_TRUE(Env::Default()->FileExists(out_dir() + "/runs.csv"));
  EXPECT_TRUE(result.delivery_status.ok());
}

TEST_F(SeriesRunnerTest, OnConditionsIsCalledOnceWithTheBackendsVersion) {
  RunnerOptions options = Options();
  std::vector<v1::MachineConditions> seen;
  options.on_conditions = [&](const v1::MachineConditions& c) {
    seen.push_back(c);
    return absl::UnavailableError("coordinator unreachable");
  };
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 1\n"), options);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].backend_versions().at("fake"), "fake-1.0");
  EXPECT_EQ(seen[0].fingerprint(), result.conditions.fingerprint());
  // The series goes on; the delivery problem is reported.
  EXPECT_EQ(result.runs.size(), 4u);
  EXPECT_EQ(result.delivery_status, absl::UnavailableError("coordinator unreachable"));
  EXPECT_TRUE(result.clean());
  EXPECT_EQ(SeriesExitCode(result, result.delivery_status), kSeriesExitNotClean);
}

TEST_F(SeriesRunnerTest, SimulatedSessionsMarkEveryRecord) {
  backend_.set_simulated(true);
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 1\n"));
  ASSERT_EQ(result.runs.size(), 4u);
  for (const RunResult& run : result.runs) EXPECT_TRUE(run.record.simulated());
  EXPECT_THAT(progress_, ::testing::Contains("gpu warm 1/1: predicted_per_second 50.0 tokens/s SIMULATED"));
}

TEST_F(SeriesRunnerTest, DeviceTemperatureIsReadBeforeEachRun) {
  RunnerOptions options = Options();
  double celsius = 60;
  options.device_temperature = [&]() -> std::optional<double> { return celsius += 1.5; };
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 1\nmatrix:\n  mode: [gpu]\n"), options);
  ASSERT_EQ(result.runs.size(), 2u);
  EXPECT_EQ(MetricValue(result.runs[0].record, kDeviceTemperatureMetric), 61.5);
  EXPECT_EQ(MetricUnit(result.runs[0].record, kDeviceTemperatureMetric), "celsius");
  EXPECT_EQ(MetricValue(result.runs[1].record, kDeviceTemperatureMetric), 63.0);
}

// Records what the runner asks of a RunWatcher, next to the backend's own events.
class FakeWatcher : public RunWatcher {
 public:
  explicit FakeWatcher(FakeBackend* backend) : backend_(backend) {}
  void BeginRun() override { events.push_back(absl::StrCat("begin after ", backend_->events().size(), " events")); }
  std::vector<std::string> EndRun(v1::RunRecord* record) override {
    events.push_back(absl::StrCat("end after ", backend_->events().size(), " events, ", record->metrics_size(),
                                  " metrics from the backend"));
    v1::Flag* flag = record->add_flags();
    flag->set_code("CONTENDED");
    flag->set_reason("other processes on the nvidia device(s) during the run: pid 4242 python3");
    return {"nvidia-smi did not finish within 10s (killed) (2 times)"};
  }
  std::vector<std::string> events;

 private:
  FakeBackend* backend_;
};

TEST_F(SeriesRunnerTest, TheRunWatcherBracketsEachTimedRunAndAnnotatesItsRecord) {
  FakeWatcher watcher(&backend_);
  RunnerOptions options = Options();
  options.run_watcher = &watcher;
  std::vector<std::string> windows;
  options.on_timed_window = [&](bool timed) {
    windows.push_back(absl::StrCat(timed ? "open" : "close", " with ", watcher.events.size(), " watcher events"));
  };
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 1\nmatrix:\n  mode: [gpu]\n"), options);
  ASSERT_EQ(result.runs.size(), 2u);
  // open gpu is event 1; each run adds one: the watcher starts after the open, ends after the run.
  EXPECT_THAT(watcher.events, ElementsAre("begin after 1 events", "end after 2 events, 1 metrics from the backend",
                                          "begin after 2 events", "end after 3 events, 1 metrics from the backend"));
  // Inside the timed window, both times.
  EXPECT_THAT(windows, ElementsAre("open with 0 watcher events", "close with 2 watcher events",
                                   "open with 2 watcher events", "close with 4 watcher events"));
  EXPECT_EQ(Brief(result.runs[0].record), "gpu cold 1 r1 OK 50.0 CONTENDED");
  EXPECT_EQ(Brief(result.runs[1].record), "gpu warm 1 r1 OK 50.0 CONTENDED");
  EXPECT_THAT(progress_, ::testing::Contains("gpu cold 1: device sampling: nvidia-smi did not finish within 10s "
                                             "(killed) (2 times)"));
}

TEST_F(SeriesRunnerTest, AStatusTheBackendLeftUnsetIsAFailure) {
  backend_.Script("gpu", {StatusUnset()});
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "matrix:\n  mode: [gpu]\n"));
  ASSERT_EQ(result.runs.size(), 1u);
  EXPECT_EQ(result.runs[0].record.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(result.runs[0].record.status().message(), "the fake backend left the run's status unset");
}

TEST_F(SeriesRunnerTest, AHugeLogTailIsCutToFitTheRecordLimit) {
  std::string log(2 << 20, 'x');
  log += "\nfatal: the real reason\n";
  backend_.FailOpen("gpu", FakeOpenFailure{"exited", log});
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "matrix:\n  mode: [gpu]\n"));
  ASSERT_EQ(result.runs.size(), 1u);
  const v1::RunRecord& r = result.runs[0].record;
  EXPECT_LE(r.ByteSizeLong(), kMaxRecordBytes);
  EXPECT_THAT(r.status().log_tail(), StartsWith("[... log cut to fit the record]\nxxx"));
  EXPECT_TRUE(absl::EndsWith(r.status().log_tail(), "\nfatal: the real reason\n"));
  EXPECT_TRUE(ValidateRecord(r).ok());
}

TEST_F(SeriesRunnerTest, TheStopFlagClosesTheSessionAndEndsTheSeries) {
  RunnerOptions options = Options();
  std::stop_source stop;
  int windows = 0;
  options.stop = stop.get_token();
  options.on_timed_window = [&](bool timed) {
    if (!timed && ++windows == 2) stop.request_stop();
  };
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 3\n"), options);
  EXPECT_THAT(Briefs(result), ElementsAre("gpu cold 1 r1 OK 50.0", "gpu warm 1 r1 OK 50.0"));
  EXPECT_TRUE(result.interrupted);
  EXPECT_EQ(backend_.events().back(), "close gpu");
  EXPECT_FALSE(result.clean());
  EXPECT_EQ(SeriesExitCode(result, absl::OkStatus()), kSeriesExitNotClean);
}

// Issue 19 case 6: a stop during the pause ends the series there (no sleep of the pause is taken
// after it), the session is closed and nothing more runs.
TEST_F(SeriesRunnerTest, AStopDuringThePauseEndsTheSeriesWithoutWaitingItOut) {
  RunnerOptions options = Options();
  std::stop_source stop;
  options.stop = stop.get_token();
  clock_.SetDuringWait([&] { stop.request_stop(); });
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 3\n  pause_between_runs: 24h\n"), options);
  EXPECT_THAT(Briefs(result), ElementsAre("gpu cold 1 r1 OK 50.0"));
  EXPECT_TRUE(result.interrupted);
  EXPECT_THAT(clock_.sleeps(), ::testing::IsEmpty());
  EXPECT_EQ(backend_.events().back(), "close gpu");
  EXPECT_THAT(progress_, ::testing::Contains("gpu: stopped during the pause before warm 1"));
}

// An Open that fails because the series is stopping (the backend's wait for its server ended) is
// no FAILED run: nothing is recorded for it.
TEST_F(SeriesRunnerTest, AnOpenEndedByAStopIsNotRecorded) {
  RunnerOptions options = Options();
  std::stop_source stop;
  options.stop = stop.get_token();
  options.progress = [&](std::string_view line) {
    progress_.emplace_back(line);
    if (line == "gpu: opening fake for cold 1") stop.request_stop();  // while the backend waits
  };
  backend_.FailOpen("gpu", FakeOpenFailure{"stopped while waiting for fake to be ready", ""});
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 2\n"), options);
  EXPECT_THAT(result.runs, ::testing::IsEmpty());
  EXPECT_EQ(result.failed_runs, 0);
  EXPECT_EQ(result.stopped_early, 0);
  EXPECT_TRUE(result.interrupted);
  EXPECT_THAT(progress_, ::testing::Contains("gpu: stopped while opening fake (stopped while waiting for fake to be "
                                             "ready)"));
}

TEST_F(SeriesRunnerTest, ProgressHasOneLinePerRun) {
  backend_.Script("gpu", Values({48.1, 52.9, 52.9, 30.0}));
  RunSeries(absl::StrCat(kHead, "runs:\n  warm: 3\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(progress_, ElementsAre(absl::StrCat("series s1 (task t1, task id ", kTaskId,
                                                  "): 1 combination(s) x 1 repetition(s), backend fake"),
                                     "gpu: opening fake for cold 1", "gpu: fake fake-1.0 ready",
                                     "gpu cold 1/1: predicted_per_second 48.1 tokens/s",
                                     "gpu warm 1/3: predicted_per_second 52.9 tokens/s",
                                     "gpu warm 2/3: predicted_per_second 52.9 tokens/s",
                                     "gpu warm 3/3: predicted_per_second 30.0 tokens/s (THROUGHPUT_DROP -43.3%)"));
}

TEST_F(SeriesRunnerTest, AnExcludingFlagIsOnTheProgressLineOfItsCall) {
  backend_.Script("gpu", {Ok(48.1), CacheHit(70.0, "ComfyUI executed no node")});
  RunSeries(absl::StrCat(kHead, "runs:\n  warm: 1\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(progress_, ::testing::Contains("gpu cold 1/1: predicted_per_second 48.1 tokens/s"));
  EXPECT_THAT(progress_, ::testing::Contains("gpu warm 1/1: predicted_per_second 70.0 tokens/s CACHE_HIT"));
}

TEST_F(SeriesRunnerTest, WhatTheServerReportsAboutItselfIsInTheConditionsAndTheirFingerprint) {
  backend_.set_conditions("gpu", {{"devices", "CUDA0 (NVIDIA A100-SXM4-80GB)"}});
  backend_.set_conditions("cpu", {{"devices", "none (no usable GPU found)"}});
  RunnerOptions options = Options();
  v1::MachineConditions without = options.conditions;
  (*without.mutable_backend_versions())["fake"] = "fake-1.0";
  const SeriesResult result = RunSeries(absl::StrCat(kHead, "runs:\n  warm: 1\n"), options);
  EXPECT_THAT(result.conditions.backend_attributes(),
              UnorderedElementsAre(Pair("fake.devices", "CUDA0 (NVIDIA A100-SXM4-80GB)")));
  EXPECT_EQ(result.conditions.fingerprint(), ConditionsFingerprint(result.conditions));
  EXPECT_NE(result.conditions.fingerprint(), ConditionsFingerprint(without));
  // The cpu session reported other devices: said in the notes, not silently mixed.
  EXPECT_THAT(result.notes, ElementsAre("cpu: fake reports devices none (no usable GPU found), not what the series' "
                                        "conditions hold (CUDA0 (NVIDIA A100-SXM4-80GB))"));
}

TEST_F(SeriesRunnerTest, CreateRefusesWhatCannotRun) {
  {
    const absl::Status s = Runner(absl::StrCat(kHead, "matrix:\n  batch: [1]\n"), Options()).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(),
              "spec.yaml:5: matrix axis 'batch' is not one the fake backend understands (its axes: mode, n_predict)");
  }
  {
    const absl::Status s = Runner(absl::StrCat(kHead, "matrix:\n  mode: [tpu]\n"), Options()).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(),
              "spec.yaml: matrix combination tpu: mode 'tpu' is not in the fake section's modes (gpu, cpu)");
  }
  {
    AllowList nothing(AllowConfig{}, "/etc/benchfleet/agent.yaml");
    RunnerOptions options = Options();
    options.allow = &nothing;
    const absl::Status s = Runner(kHead, options).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(s, nothing.CheckBackend("fake"));
  }
  {
    AllowList other(AllowConfig{{"other"}, {}, {}, {}}, "agent.yaml");
    RunnerOptions options = Options();
    options.allow = &other;
    const absl::Status s = Runner("series: s1\ntask: t1\nbackend: other\n", options).status();
    EXPECT_EQ(s, absl::InvalidArgumentError(
                     "series runner: the spec names backend 'other' but was given the fake backend"));
  }
  {
    ASSERT_TRUE(Env::Default()->CreateDirs(out_dir()).ok());
    ASSERT_TRUE(Env::Default()->WriteFileAtomically(out_dir() + "/runs.jsonl", "").ok());
    const absl::Status s = Runner(kHead, Options()).status();
    EXPECT_EQ(s, absl::FailedPreconditionError(absl::StrCat(
                     out_dir(), " already holds a series (runs.jsonl): give each series a folder of its own")));
  }
  EXPECT_THAT(backend_.events(), IsEmpty());
}

}  // namespace
}  // namespace benchfleet::agent
