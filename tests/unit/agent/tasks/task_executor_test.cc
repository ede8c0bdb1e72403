// The task executor with a fake uplink (a recorder of TaskUpdates) and the runner's scripted
// fake backend: accepted, progress after every run, finished; refusals (backend, binary,
// spec, deadline) with their exact reasons; cancel between runs and before a start; duplicate
// assignments never run twice, also after a restart; tasks run one at a time, in order.
#include "agent/tasks/task_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/outbox/outbox.h"
#include "common/conditions_fingerprint.h"
#include "common/proto_time.h"
#include "common/series_folder.h"
#include "common/spec/spec_limits.h"
#include "common/string_views.h"
#include "tests/unit/agent/runner/fake_backend.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::FakeBackend;
using testing::Ok;
using testing::ScopedTempDir;

constexpr char kAgentId[] = "1b4e28ba-2fa1-41d2-883f-0016d3cca427";
constexpr char kConfig[] = "/etc/benchfleet/agent.yaml";
// Three runs of one combination: cold 1, warm 1 and 2.
constexpr char kSpec[] =
    "series: s1\n"
    "task: t1\n"
    "backend: fake\n"
    "runs:\n"
    "  cold: 1\n"
    "  warm: 2\n"
    "matrix:\n"
    "  mode: [gpu]\n";

// kSpec with a pause of 24h (the most a spec allows) before every run but the first.
constexpr char kPausedSpec[] =
    "series: s1\n"
    "task: t1\n"
    "backend: fake\n"
    "runs:\n"
    "  cold: 1\n"
    "  warm: 2\n"
    "  pause_between_runs: 24h\n"
    "matrix:\n"
    "  mode: [gpu]\n";

// The real filesystem with a simulated clock (which nothing here sleeps on: the specs have no
// pause).
class ClockEnv : public EnvWrapper {
 public:
  ClockEnv() : EnvWrapper(Env::Default()) {}
  Clock& clock() override { return clock_; }
  SimulatedClock& simulated() { return clock_; }

 private:
  SimulatedClock clock_;
};

// A Backend the executor owns that forwards to the test's FakeBackend, so the test scripts it
// and reads its events.
class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(FakeBackend* fake) : fake_(fake) {}
  std::string name() const override { return fake_->name(); }
  FigureDeclarations figures() const override { return fake_->figures(); }
  std::vector<std::string> matrix_axes() const override { return fake_->matrix_axes(); }
  std::vector<std::string> default_axis_values(const std::string& axis) const override {
    return fake_->default_axis_values(axis);
  }
  absl::Status CheckCombination(const Combination& c) const override { return fake_->CheckCombination(c); }
  absl::StatusOr<std::unique_ptr<BackendSession>> Open(const Combination& c, std::string* log_tail) override {
    return fake_->Open(c, log_tail);
  }

 private:
  FakeBackend* fake_;
};

// One line per update: "accepted 3", "progress 1/3 failed 0 COLD 1: FIGURE", "refused: WHY",
// "finished ok 3 0: MESSAGE" ("finished cancelled ...", "finished failed ...").
std::string Brief(const v1::TaskUpdate& u) {
  switch (u.body_case()) {
    case v1::TaskUpdate::kAccepted:
      return absl::StrCat(u.task_id(), " accepted ", u.accepted().runs_total());
    case v1::TaskUpdate::kRefused:
      return absl::StrCat(u.task_id(), " refused: ", u.refused().reason());
    case v1::TaskUpdate::kProgress: {
      const v1::TaskProgress& p = u.progress();
      return absl::StrCat(u.task_id(), " progress ", p.runs_done(), "/", p.runs_total(), " failed ", p.runs_failed(),
                          " ", p.phase(), " ", p.call_index(), ": ", p.last_figure());
    }
    case v1::TaskUpdate::kFinished: {
      const v1::TaskFinished& f = u.finished();
      return absl::StrCat(u.task_id(), " finished ", f.cancelled() ? "cancelled" : (f.ok() ? "ok" : "failed"), " ",
                          f.runs_done(), " ", f.runs_failed(), ": ", f.message());
    }
    default:
      return "empty";
  }
}

// An AgentMetrics that keeps what it was told, one line each: "started TASK", "ended".
class RecordingMetrics : public AgentMetrics {
 public:
  void CoordinatorConnected(bool) override {}
  void CoordinatorDisconnected() override {}
  void RecordsSent(uint64_t) override {}
  void TaskStarted(std::string_view task) override { Add(absl::StrCat("started ", ToAbsl(task))); }
  void TaskEnded() override { Add("ended"); }

  std::vector<std::string> events() {
    std::lock_guard<std::mutex> l(mu_);
    return events_;
  }

 private:
  void Add(std::string event) {
    std::lock_guard<std::mutex> l(mu_);
    events_.push_back(std::move(event));
  }
  std::mutex mu_;
  std::vector<std::string> events_;  // guarded by mu_
};

class TaskExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AllowConfig allow;
    allow.backends = {"fake", "llama-server"};
    allow.executables = {"/opt/llama.cpp/bin/llama-server"};
    allow.model_dirs = {"/srv/models"};
    allow_ = std::make_unique<AllowList>(allow, kConfig);
    auto outbox = Outbox::Open(Env::Default(), tmp_.path() + "/outbox");
    ASSERT_TRUE(outbox.ok()) << outbox.status();
    outbox_ = std::move(*outbox);
    fake_.Script("gpu", {Ok(48.1), Ok(52.9), Ok(52.6), Ok(47.0), Ok(51.0), Ok(50.5)});
  }

  TaskExecutorOptions Options() {
    TaskExecutorOptions options;
    options.env = &env_;
    options.allow = allow_.get();
    options.agent_id = kAgentId;
    options.conditions.set_hostname("gpu-01");
    options.tasks_dir = tmp_.path() + "/tasks";
    options.outbox = outbox_.get();
    options.find_backend = [this](const std::string& name) -> absl::StatusOr<BackendFactory> {
      if (name == "fake") {
        return BackendFactory([this](const YAML::Node&,
                                     const BackendContext& context) -> absl::StatusOr<std::unique_ptr<Backend>> {
          {
            std::lock_guard<std::mutex> l(mu_);
            authors_.push_back(context.spec_author);
          }
          return std::unique_ptr<Backend>(new ForwardingBackend(&fake_));
        });
      }
      return FindBackend(name);
    };
    options.send_update = [this](const v1::TaskUpdate& update) {
      std::function<void(const v1::TaskUpdate&)> hook;
      {
        std::lock_guard<std::mutex> l(mu_);
        updates_.push_back(Brief(update));
        raw_.push_back(update);
        hook = hook_;
        cv_.notify_all();
      }
      if (hook) hook(update);
    };
    return options;
  }

  void Start(TaskExecutorOptions options) {
    executor_ = std::make_unique<TaskExecutor>(std::move(options));
    ASSERT_TRUE(executor_->Start().ok());
  }

  static v1::TaskAssignment Assignment(const std::string& task_id, const std::string& spec, uint32_t attempt = 1) {
    v1::TaskAssignment a;
    a.set_task_id(task_id);
    a.set_series_id("series-42");
    a.set_attempt(attempt);
    a.set_spec_yaml(spec);
    return a;
  }

  // Waits (real time) until n updates arrived and the executor is idle; returns them.
  std::vector<std::string> Updates(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::seconds(10), [&] { return updates_.size() >= n; });
    l.unlock();
    EXPECT_TRUE(executor_->WaitUntilIdle(absl::Seconds(10)));
    l.lock();
    return updates_;
  }

  std::vector<v1::RunRecord> OutboxRecords() {
    std::vector<v1::RunRecord> records;
    for (const PendingRecord& p : outbox_->Pending(1000, 1u << 30, 0)) {
      v1::RunRecord r;
      EXPECT_TRUE(r.ParseFromString(p.bytes));
      records.push_back(r);
    }
    return records;
  }

  // The attempt of every update so far, in order.
  std::vector<uint32_t> Attempts() {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<uint32_t> attempts;
    for (const v1::TaskUpdate& u : raw_) attempts.push_back(u.attempt());
    return attempts;
  }

  void SetHook(std::function<void(const v1::TaskUpdate&)> hook) {
    std::lock_guard<std::mutex> l(mu_);
    hook_ = std::move(hook);
  }

  ScopedTempDir tmp_;
  ClockEnv env_;
  std::unique_ptr<AllowList> allow_;
  std::unique_ptr<Outbox> outbox_;
  FakeBackend fake_{&env_};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> updates_;
  std::vector<SpecAuthor> authors_;  // of each "fake" backend built, in order
  std::vector<v1::TaskUpdate> raw_;
  std::function<void(const v1::TaskUpdate&)> hook_;
  RecordingMetrics metrics_;
  std::unique_ptr<TaskExecutor> executor_;  // last: stopped before what it uses goes
};

TEST_F(TaskExecutorTest, AcceptedThenProgressAfterEveryRunThenFinished) {
  Start(Options());
  executor_->Assign(Assignment("task-1", kSpec));
  EXPECT_THAT(Updates(5), ElementsAre("task-1 accepted 3",
                                      "task-1 progress 1/3 failed 0 COLD 1: predicted_per_second 48.1 tokens/s",
                                      "task-1 progress 2/3 failed 0 WARM 1: predicted_per_second 52.9 tokens/s",
                                      "task-1 progress 3/3 failed 0 WARM 2: predicted_per_second 52.6 tokens/s",
                                      "task-1 finished ok 3 0: 3 of 3 runs made, 0 FAILED"));
  const std::vector<v1::RunRecord> records = OutboxRecords();
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].task_id(), "task-1");
    EXPECT_EQ(records[i].series_id(), "series-42");
    EXPECT_EQ(records[i].agent_id(), kAgentId);
    EXPECT_EQ(raw_[i + 1].progress().last_run_id(), records[i].run_id());
  }
  // The series folder is the agent's own: tasks/TASK/attempt-N/series.
  EXPECT_TRUE(Env::Default()->FileExists(tmp_.path() + "/tasks/task-1/attempt-1/series/" + kRunsJsonlFile));
  EXPECT_THAT(fake_.events(), ElementsAre("open gpu", ::testing::StartsWith("run gpu cold 1"),
                                          ::testing::StartsWith("run gpu warm 1"),
                                          ::testing::StartsWith("run gpu warm 2"), "close gpu"));
}

// runs.warm.until: runs_total counts the most warm calls, and the progress after a combination's
// warm calls stop as stable lowers it to what was needed.
TEST_F(TaskExecutorTest, WarmCallsUntilStableLowerTheTotalWhenTheyStopEarly) {
  // Warm calls 1-5 give median 52 and the interval (51, 53): 1.9% of it (agent/runner's warm_until_test).
  fake_.Script("gpu", {Ok(48.1), Ok(52), Ok(51), Ok(53), Ok(52.5), Ok(51.5), Ok(50)});
  Start(Options());
  executor_->Assign(Assignment("task-1",
                               "series: s1\ntask: t1\nbackend: fake\nruns:\n  cold: 1\n"
                               "  warm: {until: {ci_halfwidth: 2%, max: 12}}\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(Updates(8), ElementsAre("task-1 accepted 13",
                                      "task-1 progress 1/13 failed 0 COLD 1: predicted_per_second 48.1 tokens/s",
                                      "task-1 progress 2/13 failed 0 WARM 1: predicted_per_second 52.0 tokens/s",
                                      "task-1 progress 3/13 failed 0 WARM 2: predicted_per_second 51.0 tokens/s",
                                      "task-1 progress 4/13 failed 0 WARM 3: predicted_per_second 53.0 tokens/s",
                                      "task-1 progress 5/13 failed 0 WARM 4: predicted_per_second 52.5 tokens/s",
                                      "task-1 progress 6/6 failed 0 WARM 5: predicted_per_second 51.5 tokens/s",
                                      "task-1 finished ok 6 0: 6 of 6 runs made, 0 FAILED; 7 warm call(s) not needed: "
                                      "stable before runs.warm.until.max"));
  const std::vector<v1::RunRecord> records = OutboxRecords();
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ(records.back().warm_stop().reason(), v1::WarmStop::REASON_STABLE);
}

// serve hands these to the uplink (AnnounceConditions): the coordinator then holds the
// conditions whose fingerprint the records carry, not only those of the agent's Hello.
TEST_F(TaskExecutorTest, TheSeriesFinishedConditionsAreAnnouncedBeforeItsFirstRecordIsQueued) {
  fake_.set_conditions("gpu", {{"devices", "CUDA0"}});
  std::vector<v1::MachineConditions> announced;
  size_t queued_when_announced = 99;
  TaskExecutorOptions options = Options();
  options.announce_conditions = [&](const v1::MachineConditions& c) {
    announced.push_back(c);
    queued_when_announced = outbox_->depth();
  };
  Start(std::move(options));
  executor_->Assign(Assignment("task-1", kSpec));
  ASSERT_EQ(Updates(5).back(), "task-1 finished ok 3 0: 3 of 3 runs made, 0 FAILED");
  executor_->Stop();
  ASSERT_EQ(announced.size(), 1u);
  EXPECT_EQ(queued_when_announced, 0u);
  EXPECT_EQ(announced[0].hostname(), "gpu-01");
  EXPECT_EQ(announced[0].backend_versions().at("fake"), "fake-1.0");
  EXPECT_EQ(announced[0].backend_attributes().at("fake.devices"), "CUDA0");
  EXPECT_EQ(announced[0].fingerprint(), ConditionsFingerprint(announced[0]));
  const std::vector<v1::RunRecord> records = OutboxRecords();
  ASSERT_EQ(records.size(), 3u);
  for (const v1::RunRecord& r : records) EXPECT_EQ(r.conditions_fingerprint(), announced[0].fingerprint());
}

TEST_F(TaskExecutorTest, MetricsShowTheTaskByItsNameWhileItRunsAndNeverARefusedOne) {
  TaskExecutorOptions options = Options();
  options.metrics = &metrics_;
  Start(std::move(options));
  std::vector<std::string> during_first_run;
  SetHook([&](const v1::TaskUpdate& u) {
    if (u.has_progress() && u.progress().runs_done() == 1) during_first_run = metrics_.events();
  });
  executor_->Assign(Assignment("task-1", kSpec));
  ASSERT_EQ(Updates(5).size(), 5u);
  executor_->Assign(Assignment("task-2", "series: s2\ntask: t2\nbackend: comfyui\ncomfyui: {url: http://h:1}\n"));
  EXPECT_THAT(Updates(6).back(), ::testing::StartsWith("task-2 refused: "));

  // By the spec's task name (a bounded label), not the coordinator's task id.
  EXPECT_THAT(during_first_run, ElementsAre("started t1"));
  EXPECT_THAT(metrics_.events(), ElementsAre("started t1", "ended"));
}

// Counts the runs it watches and marks each record, as serve's DeviceSampler would annotate it.
class CountingWatcher : public RunWatcher {
 public:
  void BeginRun() override { ++begun; }
  std::vector<std::string> EndRun(v1::RunRecord* record) override {
    ++ended;
    auto* metric = record->add_metrics();
    metric->set_name("device_samples");
    metric->set_value(ended);
    metric->set_unit("samples");
    return {};
  }
  std::atomic<int> begun{0};
  std::atomic<int> ended{0};
};

TEST_F(TaskExecutorTest, TheRunWatcherWatchesEveryTimedRunOfEveryTask) {
  CountingWatcher watcher;
  TaskExecutorOptions options = Options();
  options.run_watcher = &watcher;
  Start(std::move(options));
  executor_->Assign(Assignment("task-1", kSpec));
  ASSERT_EQ(Updates(5).size(), 5u);
  executor_->Stop();  // the watcher, declared after the executor, must not be used once gone
  EXPECT_EQ(watcher.begun.load(), 3);
  EXPECT_EQ(watcher.ended.load(), 3);
  const std::vector<v1::RunRecord> records = OutboxRecords();
  ASSERT_EQ(records.size(), 3u);
  for (size_t i = 0; i < records.size(); ++i) {
    const v1::RunRecord& r = records[i];
    const auto found = std::find_if(r.metrics().begin(), r.metrics().end(),
                                    [](const v1::Metric& m) { return m.name() == "device_samples"; });
    ASSERT_NE(found, r.metrics().end()) << r.DebugString();
    EXPECT_EQ(found->value(), static_cast<double>(i + 1));
  }
}

TEST_F(TaskExecutorTest, AFailedRunIsCountedAndShownAndTheTaskStillSucceeds) {
  fake_.Script("gpu", {Ok(48.1), testing::Fail("HTTP 500 from /completion"), Ok(52.6)});
  Start(Options());
  executor_->Assign(Assignment("task-1", kSpec));
  EXPECT_THAT(Updates(5), ElementsAre("task-1 accepted 3",
                                      "task-1 progress 1/3 failed 0 COLD 1: predicted_per_second 48.1 tokens/s",
                                      "task-1 progress 2/3 failed 1 WARM 1: FAILED: HTTP 500 from /completion",
                                      "task-1 progress 3/3 failed 1 WARM 2: predicted_per_second 52.6 tokens/s",
                                      "task-1 finished ok 3 1: 3 of 3 runs made, 1 FAILED"));
}

TEST_F(TaskExecutorTest, StoppingTheAgentEndsTheTaskAfterItsCurrentRun) {
  Start(Options());
  SetHook([this](const v1::TaskUpdate& u) {
    if (u.has_progress() && u.progress().runs_done() == 1) {
      SetHook({});
      // On the executor's own thread, before its next run: Stop() would join this thread.
      executor_->RequestStop();
    }
  });
  executor_->Assign(Assignment("task-1", kSpec));
  const std::vector<std::string> updates = Updates(3);
  executor_->Stop();
  EXPECT_THAT(updates, ElementsAre("task-1 accepted 3", ::testing::StartsWith("task-1 progress 1/3"),
                                   "task-1 finished failed 1 0: the agent stopped during the task; 1 of 3 runs "
                                   "made, 0 FAILED"));
  EXPECT_THAT(fake_.events(), ElementsAre("open gpu", ::testing::StartsWith("run gpu cold 1"), "close gpu"));
}

TEST_F(TaskExecutorTest, RefusesABackendOutsideTheAllowList) {
  Start(Options());
  executor_->Assign(Assignment("task-1", "series: s1\ntask: t1\nbackend: comfyui\ncomfyui: {url: http://h:1}\n"));
  EXPECT_THAT(Updates(1), ElementsAre("task-1 refused: backend comfyui is not in this agent's allow-list "
                                      "(allow.backends in /etc/benchfleet/agent.yaml); allow.backends lists: fake, "
                                      "llama-server"));
  EXPECT_THAT(OutboxRecords(), IsEmpty());
  EXPECT_THAT(fake_.events(), IsEmpty());
}

// The backend is told a coordinator wrote the spec, so it holds the files the spec names to
// allow.workflow_dirs (each backend's own check; comfyui_config_test, openai_config_test).
TEST_F(TaskExecutorTest, TheBackendIsBuiltAsFromACoordinatorsSpec) {
  Start(Options());
  executor_->Assign(Assignment("task-1", kSpec));
  const std::vector<std::string> updates = Updates(1);
  ASSERT_FALSE(updates.empty());
  EXPECT_EQ(updates[0], "task-1 accepted 3");
  std::lock_guard<std::mutex> l(mu_);
  EXPECT_THAT(authors_, ElementsAre(SpecAuthor::kCoordinator));
}

TEST_F(TaskExecutorTest, RefusesABinaryOutsideTheAllowList) {
  Start(Options());
  executor_->Assign(Assignment("task-1",
                               "series: s1\ntask: t1\nbackend: llama-server\n"
                               "llama-server:\n"
                               "  binary: /bin/sh\n"
                               "  model: /srv/models/m.gguf\n"
                               "  modes: {gpu: [-ngl, 99]}\n"));
  EXPECT_THAT(Updates(1), ElementsAre("task-1 refused: task task-1: executable /bin/sh is not in this agent's "
                                      "allow-list (allow.executables in /etc/benchfleet/agent.yaml); "
                                      "allow.executables lists: /opt/llama.cpp/bin/llama-server"));
}

// A spec this agent cannot take ends the task FAILED with the reason (the agent's stream goes on).
TEST_F(TaskExecutorTest, ABadSpecEndsTheTaskFailedNamingItsLine) {
  Start(Options());
  executor_->Assign(Assignment("task-1", "series: s1\ntask: t1\nbackend: fake\nruns:\n  wram: 3\n"));
  const std::vector<std::string> updates = Updates(1);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0],
            "task-1 finished failed 0 0: task task-1:5: unknown key 'runs.wram' (known keys: validation, cold, warm, "
            "repetitions, pause_between_runs, throughput_drop_threshold)");
}

TEST_F(TaskExecutorTest, ASpecOverTheLimitEndsTheTaskFailedWithItsSizeAndTheNextTaskRuns) {
  Start(Options());
  std::string big = kSpec;
  big += "# " + std::string(kMaxSpecBytes, 'x') + "\n";
  executor_->Assign(Assignment("task-1", big));
  executor_->Assign(Assignment("task-2", kSpec));
  const std::vector<std::string> updates = Updates(6);
  ASSERT_EQ(updates.size(), 6u);
  EXPECT_EQ(updates[0], absl::StrCat("task-1 finished failed 0 0: task task-1: the spec is ", big.size(),
                                     " bytes, over the limit of 1048576 bytes (1 MiB) a task carries to its agents; "
                                     "put large inputs such as prompt lists in a file the agents' allow-list names "
                                     "(allow.workflow_dirs, e.g. the `prompts` file of the openai and workflow "
                                     "backends) and name that file in the spec"));
  EXPECT_EQ(updates[1], "task-2 accepted 3");
  EXPECT_EQ(updates[5], "task-2 finished ok 3 0: 3 of 3 runs made, 0 FAILED");
}

TEST_F(TaskExecutorTest, RefusesATaskThatArrivesAfterItsDeadline) {
  Start(Options());
  v1::TaskAssignment a = Assignment("task-1", kSpec);
  SetTimestamp(env_.clock().Now() - absl::Hours(1), a.mutable_deadline());
  executor_->Assign(a);
  EXPECT_THAT(Updates(1), ElementsAre("task-1 refused: the task's deadline 2025-12-31T23:00:00Z had passed when "
                                      "it arrived (at 2026-01-01T00:00:00Z)"));
  EXPECT_THAT(fake_.events(), IsEmpty());
}

TEST_F(TaskExecutorTest, RefusesATaskIdThatIsNoFolderName) {
  Start(Options());
  executor_->Assign(Assignment("../etc", kSpec));
  EXPECT_THAT(Updates(1), ElementsAre("../etc refused: task id '../etc' is not 1 to 128 letters, digits, '.', '_' "
                                      "or '-' (not starting with '.')"));
}

TEST_F(TaskExecutorTest, CancelStopsBetweenRuns) {
  Start(Options());
  SetHook([this](const v1::TaskUpdate& u) {
    if (u.has_progress() && u.progress().runs_done() == 1) {
      v1::TaskCancel cancel;
      cancel.set_task_id("task-1");
      cancel.set_reason("operator");
      executor_->Cancel(cancel);
    }
  });
  executor_->Assign(Assignment("task-1", kSpec));
  EXPECT_THAT(Updates(3), ElementsAre("task-1 accepted 3",
                                      "task-1 progress 1/3 failed 0 COLD 1: predicted_per_second 48.1 tokens/s",
                                      "task-1 finished cancelled 1 0: cancelled: operator; 1 of 3 runs made, 0 FAILED"));
  EXPECT_THAT(fake_.events(), ElementsAre("open gpu", ::testing::StartsWith("run gpu cold 1"), "close gpu"));
  EXPECT_EQ(OutboxRecords().size(), 1u);
}

// Issue 19 case 6: a cancel during pause_between_runs (the most a spec allows, 24h) ends the task
// at the same simulated instant: the session is closed (the server stopped), no other run starts,
// and the task queued behind it starts at once.
TEST_F(TaskExecutorTest, ACancelDuringAPauseEndsTheTaskAtTheSameSimulatedInstant) {
  Start(Options());
  executor_->Assign(Assignment("task-1", kPausedSpec));
  executor_->Assign(Assignment("task-2", kSpec));
  SimulatedClock& clock = env_.simulated();
  // Cold 1 is made, then the runner waits 24h (simulated) before warm 1.
  for (int i = 0; i < 10000 && clock.sleepers() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(clock.sleepers(), 1);
  const absl::Time paused_at = clock.Now();
  EXPECT_THAT(fake_.events(), ElementsAre("open gpu", ::testing::StartsWith("run gpu cold 1")));
  v1::TaskCancel cancel;
  cancel.set_task_id("task-1");
  cancel.set_reason("operator");
  executor_->Cancel(cancel);
  const std::vector<std::string> updates = Updates(8);
  EXPECT_EQ(clock.Now(), paused_at);  // not a simulated nanosecond waited after the cancel
  EXPECT_EQ(updates[0], "task-1 accepted 3");
  EXPECT_EQ(updates[1], "task-1 progress 1/3 failed 0 COLD 1: predicted_per_second 48.1 tokens/s");
  EXPECT_EQ(updates[2], "task-1 finished cancelled 1 0: cancelled: operator; 1 of 3 runs made, 0 FAILED");
  EXPECT_EQ(updates[3], "task-2 accepted 3");
  const std::vector<std::string> events = fake_.events();
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[2], "close gpu");  // task-1's session, right after the cancel
  EXPECT_EQ(OutboxRecords().size(), 4u);  // task-1's cold run and task-2's three
}

TEST_F(TaskExecutorTest, StoppingTheAgentDuringAPauseEndsTheTaskAtOnce) {
  Start(Options());
  executor_->Assign(Assignment("task-1", kPausedSpec));
  SimulatedClock& clock = env_.simulated();
  for (int i = 0; i < 10000 && clock.sleepers() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(clock.sleepers(), 1);
  const absl::Time paused_at = clock.Now();
  executor_->Stop();  // joins: returns only once the task has ended
  EXPECT_EQ(clock.Now(), paused_at);
  EXPECT_THAT(Updates(3), ElementsAre("task-1 accepted 3", ::testing::StartsWith("task-1 progress 1/3"),
                                      "task-1 finished failed 1 0: the agent stopped during the task; 1 of 3 runs "
                                      "made, 0 FAILED"));
  EXPECT_THAT(fake_.events(), ElementsAre("open gpu", ::testing::StartsWith("run gpu cold 1"), "close gpu"));
}

TEST_F(TaskExecutorTest, TasksRunOneAtATimeInOrderAndAQueuedOneCanBeCancelled) {
  Start(Options());
  SetHook([this](const v1::TaskUpdate& u) {
    if (u.task_id() == "task-1" && u.has_accepted()) {
      // Both arrive while task-1 runs: task-2 waits, task-3 is cancelled before it starts.
      executor_->Assign(Assignment("task-2", kSpec));
      executor_->Assign(Assignment("task-3", kSpec));
      v1::TaskCancel cancel;
      cancel.set_task_id("task-3");
      executor_->Cancel(cancel);
    }
  });
  executor_->Assign(Assignment("task-1", kSpec));
  const std::vector<std::string> updates = Updates(11);
  EXPECT_THAT(updates, ::testing::ElementsAreArray(std::vector<::testing::Matcher<std::string>>{
                           "task-1 accepted 3", "task-3 finished cancelled 0 0: cancelled before it started",
                                   ::testing::StartsWith("task-1 progress 1/3"),
                                   ::testing::StartsWith("task-1 progress 2/3"),
                                   ::testing::StartsWith("task-1 progress 3/3"),
                                   ::testing::StartsWith("task-1 finished ok 3 0"), "task-2 accepted 3",
                                   "task-2 progress 1/3 failed 0 COLD 1: predicted_per_second 47.0 tokens/s",
                                   ::testing::StartsWith("task-2 progress 2/3"),
                                   ::testing::StartsWith("task-2 progress 3/3"),
                                   ::testing::StartsWith("task-2 finished ok 3 0")}));
}

TEST_F(TaskExecutorTest, ADuplicateAssignmentIsNotRunTwice) {
  Start(Options());
  SetHook([this](const v1::TaskUpdate& u) {
    // Re-sent while running (a reconnect mid-task): its latest progress comes again.
    if (u.has_progress() && u.progress().runs_done() == 2) {
      SetHook({});
      executor_->Assign(Assignment("task-1", kSpec));
    }
  });
  executor_->Assign(Assignment("task-1", kSpec));
  Updates(6);
  // Re-sent after its end: its finished update comes again.
  executor_->Assign(Assignment("task-1", kSpec));
  EXPECT_THAT(Updates(7), ElementsAre("task-1 accepted 3", ::testing::StartsWith("task-1 progress 1/3"),
                                      "task-1 progress 2/3 failed 0 WARM 1: predicted_per_second 52.9 tokens/s",
                                      "task-1 progress 2/3 failed 0 WARM 1: predicted_per_second 52.9 tokens/s",
                                      ::testing::StartsWith("task-1 progress 3/3"),
                                      "task-1 finished ok 3 0: 3 of 3 runs made, 0 FAILED",
                                      "task-1 finished ok 3 0: 3 of 3 runs made, 0 FAILED"));
  EXPECT_EQ(OutboxRecords().size(), 3u);
  EXPECT_EQ(std::count(fake_.events().begin(), fake_.events().end(), "open gpu"), 1);
}

TEST_F(TaskExecutorTest, AnEndedTaskIsNotRunAgainAfterARestart) {
  Start(Options());
  executor_->Assign(Assignment("task-1", kSpec));
  Updates(5);
  executor_.reset();
  Start(Options());  // the agent restarted: same state directory
  executor_->Assign(Assignment("task-1", kSpec));
  const std::vector<std::string> updates = Updates(6);
  ASSERT_EQ(updates.size(), 6u);
  EXPECT_EQ(updates[5], "task-1 finished ok 3 0: 3 of 3 runs made, 0 FAILED");
  EXPECT_EQ(std::count(fake_.events().begin(), fake_.events().end(), "open gpu"), 1);
  // A new attempt (the coordinator retried it: the lease expired before the finish reached it)
  // is answered with the same outcome under the new attempt; nothing runs again.
  executor_->Assign(Assignment("task-1", kSpec, 2));
  const std::vector<std::string> again = Updates(7);
  ASSERT_EQ(again.size(), 7u);
  EXPECT_EQ(again[6], "task-1 finished ok 3 0: 3 of 3 runs made, 0 FAILED");
  EXPECT_EQ(Attempts(), (std::vector<uint32_t>{1, 1, 1, 1, 1, 1, 2}));
  EXPECT_EQ(std::count(fake_.events().begin(), fake_.events().end(), "open gpu"), 1);
  EXPECT_FALSE(Env::Default()->FileExists(tmp_.path() + "/tasks/task-1/attempt-2/series/" + kRunsJsonlFile));
  // Kept under attempt 2 too: after another restart, attempt 2 is answered from its folder.
  executor_.reset();
  Start(Options());
  executor_->Assign(Assignment("task-1", kSpec, 2));
  EXPECT_EQ(Updates(8).back(), "task-1 finished ok 3 0: 3 of 3 runs made, 0 FAILED");
  EXPECT_EQ(Attempts().back(), 2u);
  EXPECT_EQ(std::count(fake_.events().begin(), fake_.events().end(), "open gpu"), 1);
}

// The case on the agent's side: attempt 2 of a task arrives while attempt 1 still runs
// (its lease expired while this agent was cut off). Attempt 1 goes on as attempt 2: each run is
// made once, every update from then on says attempt 2, and attempt 1's records say attempt 1.
TEST_F(TaskExecutorTest, ALaterAttemptTakesOverTheRunningTaskWhichGoesOnUnderIt) {
  Start(Options());
  SetHook([this](const v1::TaskUpdate& u) {
    if (u.has_progress() && u.progress().runs_done() == 1) {
      SetHook({});
      executor_->Assign(Assignment("task-1", kSpec, 2));
    }
  });
  executor_->Assign(Assignment("task-1", kSpec, 1));
  EXPECT_THAT(Updates(6), ElementsAre("task-1 accepted 3",
                                      "task-1 progress 1/3 failed 0 COLD 1: predicted_per_second 48.1 tokens/s",
                                      "task-1 progress 1/3 failed 0 COLD 1: predicted_per_second 48.1 tokens/s",
                                      ::testing::StartsWith("task-1 progress 2/3"),
                                      ::testing::StartsWith("task-1 progress 3/3"),
                                      "task-1 finished ok 3 0: 3 of 3 runs made, 0 FAILED"));
  EXPECT_EQ(Attempts(), (std::vector<uint32_t>{1, 1, 2, 2, 2, 2}));
  EXPECT_EQ(std::count(fake_.events().begin(), fake_.events().end(), "open gpu"), 1);
  const std::vector<v1::RunRecord> records = OutboxRecords();
  ASSERT_EQ(records.size(), 3u);
  for (const v1::RunRecord& r : records) EXPECT_EQ(r.task_attempt(), 1u);

  // Attempt 1 again (a late message of an old stream) and a cancel of attempt 1: ignored.
  executor_->Assign(Assignment("task-1", kSpec, 1));
  v1::TaskCancel cancel;
  cancel.set_task_id("task-1");
  cancel.set_attempt(1);
  executor_->Cancel(cancel);
  EXPECT_EQ(Updates(6).size(), 6u);
  // A cancel of attempt 2 is answered as usual (the task has ended: its outcome again).
  cancel.set_attempt(2);
  executor_->Cancel(cancel);
  EXPECT_EQ(Updates(7).back(), "task-1 finished ok 3 0: 3 of 3 runs made, 0 FAILED");
  EXPECT_EQ(Attempts().back(), 2u);
}

// A queued task whose later attempt arrives before it starts runs once, as that attempt.
TEST_F(TaskExecutorTest, ALaterAttemptOfAQueuedTaskReplacesIt) {
  Start(Options());
  SetHook([this](const v1::TaskUpdate& u) {
    if (u.task_id() == "task-1" && u.has_accepted()) {
      SetHook({});
      executor_->Assign(Assignment("task-2", kSpec, 1));
      executor_->Assign(Assignment("task-2", kSpec, 3));
    }
  });
  executor_->Assign(Assignment("task-1", kSpec));
  const std::vector<std::string> updates = Updates(10);
  ASSERT_EQ(updates.size(), 10u);
  EXPECT_EQ(updates[5], "task-2 accepted 3");
  EXPECT_EQ(updates[9], "task-2 finished ok 3 0: 3 of 3 runs made, 0 FAILED");
  EXPECT_EQ(Attempts(), (std::vector<uint32_t>{1, 1, 1, 1, 1, 3, 3, 3, 3, 3}));
  EXPECT_EQ(std::count(fake_.events().begin(), fake_.events().end(), "open gpu"), 2);
  EXPECT_TRUE(Env::Default()->FileExists(tmp_.path() + "/tasks/task-2/attempt-3/series/" + kRunsJsonlFile));
}

TEST_F(TaskExecutorTest, CancelOfAnUnknownTaskIsAnswered) {
  Start(Options());
  v1::TaskCancel cancel;
  cancel.set_task_id("task-9");
  executor_->Cancel(cancel);
  EXPECT_THAT(Updates(1), ElementsAre("task-9 finished cancelled 0 0: cancelled: task task-9 is not known to this "
                                      "agent; nothing ran"));
}

}  // namespace
}  // namespace benchfleet::agent
