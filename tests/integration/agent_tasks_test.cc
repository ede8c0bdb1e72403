// Tasks from a coordinator, end to end: `benchfleet-agent serve` connects to a small in-test
// AgentGateway (a fake coordinator on 127.0.0.1, port 0) that, like a coordinator, sends the
// agent's unfinished tasks after every Welcome and acknowledges record batches. One task runs a
// llama-server series against the simulator (tests/sim/llama-server-sim); one names a backend
// the agent's allow-list does not list and is refused. After the stream is broken, the tasks
// are sent again and answered again without running again. No PostgreSQL.
#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "benchfleet/v1/record.pb.h"
#include "gtest/gtest.h"
#include "tests/integration/fake_coordinator.h"
#include "tests/integration/fleet.h"

namespace benchfleet::testing {
namespace {

// A llama-server task against the simulator: one cold run and `warm` warm runs.
v1::TaskAssignment LlamaTask(const std::string& task_id, const std::string& model, int warm,
                             const std::string& pause = "0", const std::string& sim_args = "",
                             const std::string& request_timeout = "5s") {
  v1::TaskAssignment llama;
  llama.set_task_id(task_id);
  llama.set_series_id("series-1");
  llama.set_attempt(1);
  llama.set_spec_yaml(absl::StrCat("series: fleet-llama\n"
                                   "task: llama-qwen2.5-3b-q4km\n"
                                   "backend: llama-server\n"
                                   "llama-server:\n"
                                   "  binary: ", BinaryPath("llama-server-sim"), "\n"
                                   "  model: ", model, "\n"
                                   "  args: [-c, '256', --sim-load-ms, '100'", sim_args, "]\n"
                                   "  modes: {gpu: [-ngl, '99']}\n"
                                   "  prompt: Explain in one sentence what a GPU is.\n"
                                   "  n_predict: 8\n"
                                   "  seed: 42\n"
                                   "  health_timeout: 10s\n"
                                   "  request_timeout: ", request_timeout, "\n"
                                   "  stop_grace: 2s\n"
                                   "runs:\n  cold: 1\n  warm: ", warm, "\n  pause_between_runs: ", pause, "\n"
                                   "targets: all\n"
                                   "deadline: 2h\n"
                                   "retry: {max_attempts: 2}\n"));
  return llama;
}

TEST(AgentTasksTest, ServeRunsAnAssignedSeriesRefusesOneOutsideItsAllowListAndNeverRunsOneTwice) {
  const AgentFiles files("agent-tasks");
  const std::string& work = files.work;
  const std::string& config = files.config;
  const v1::TaskAssignment llama = LlamaTask("task-llama", files.model, 2);
  v1::TaskAssignment comfy;
  comfy.set_task_id("task-comfy");
  comfy.set_series_id("series-2");
  comfy.set_attempt(1);
  comfy.set_spec_yaml("series: fleet-comfy\ntask: sdxl\nbackend: comfyui\ncomfyui: {url: 'http://127.0.0.1:8188'}\n");

  FakeCoordinator coordinator("127.0.0.1:0", {llama, comfy});
  auto agent = StartAgent(work, "serve", {"serve", "--config", config, "--coordinator", coordinator.address()});
  const std::string log = work + "/serve.log";
  // The comfyui task waits behind the llama-server one, then is refused.
  ASSERT_TRUE(PollUntil([&] { return !coordinator.updates("task-llama", v1::TaskUpdate::kFinished).empty() &&
                                     !coordinator.updates("task-comfy", v1::TaskUpdate::kRefused).empty(); },
                        absl::Seconds(120)))
      << ReadAll(log);

  const std::vector<v1::TaskUpdate> accepted = coordinator.updates("task-llama", v1::TaskUpdate::kAccepted);
  ASSERT_EQ(accepted.size(), 1u) << ReadAll(log);
  EXPECT_EQ(accepted[0].accepted().runs_total(), 3u);
  // Progress may be coalesced while a write waits, but the last one says every run.
  const std::vector<v1::TaskUpdate> progress = coordinator.updates("task-llama", v1::TaskUpdate::kProgress);
  ASSERT_FALSE(progress.empty());
  const v1::TaskProgress& last = progress.back().progress();
  EXPECT_EQ(last.runs_done(), 3u);
  EXPECT_EQ(last.runs_total(), 3u);
  EXPECT_EQ(last.runs_failed(), 0u);
  EXPECT_EQ(last.phase(), "WARM");
  EXPECT_EQ(last.call_index(), 2u);
  EXPECT_TRUE(absl::StartsWith(last.last_figure(), "generation tokens/s ")) << last.last_figure();  // its label
  EXPECT_TRUE(absl::EndsWith(last.last_figure(), " tokens/s SIMULATED")) << last.last_figure();
  const v1::TaskFinished finished =
      coordinator.updates("task-llama", v1::TaskUpdate::kFinished)[0].finished();
  EXPECT_TRUE(finished.ok()) << finished.message();
  EXPECT_FALSE(finished.cancelled());
  EXPECT_EQ(finished.runs_done(), 3u);
  EXPECT_EQ(finished.runs_failed(), 0u);
  EXPECT_EQ(finished.message(), "3 of 3 runs made, 0 FAILED");

  const std::vector<v1::TaskUpdate> refused = coordinator.updates("task-comfy", v1::TaskUpdate::kRefused);
  ASSERT_EQ(refused.size(), 1u) << ReadAll(log);
  EXPECT_EQ(refused[0].refused().reason(),
            absl::StrCat("backend comfyui is not in this agent's allow-list (allow.backends in ", config,
                         "); allow.backends lists: llama-server"));

  // The records came up the same stream, stamped with the task.
  ASSERT_TRUE(PollUntil([&] { return coordinator.records().size() == 3; }, absl::Seconds(30))) << ReadAll(log);
  for (const v1::RunRecord& record : coordinator.records()) {
    EXPECT_EQ(record.task_id(), "task-llama");
    EXPECT_EQ(record.series_id(), "series-1");
    EXPECT_TRUE(record.simulated());
  }
  EXPECT_EQ(coordinator.records().back().run_id(), last.last_run_id());

  // A new stream: the coordinator sends both tasks again; the agent answers again, runs nothing.
  const size_t updates_before = coordinator.updates().size();
  coordinator.BreakStream();
  ASSERT_TRUE(PollUntil([&] { return coordinator.updates("task-llama", v1::TaskUpdate::kFinished).size() == 2 &&
                                     coordinator.updates("task-comfy", v1::TaskUpdate::kRefused).size() == 2; },
                        absl::Seconds(60)))
      << ReadAll(log);
  EXPECT_EQ(coordinator.sessions(), 2);
  EXPECT_EQ(coordinator.updates().size(), updates_before + 2);
  EXPECT_EQ(coordinator.updates("task-llama", v1::TaskUpdate::kFinished)[1].SerializeAsString(),
            coordinator.updates("task-llama", v1::TaskUpdate::kFinished)[0].SerializeAsString());
  EXPECT_EQ(coordinator.records().size(), 3u);

  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0) << ReadAll(log);
}

TEST(AgentTasksTest, ACancelStopsTheTaskBetweenRuns) {
  const AgentFiles files("agent-tasks");
  FakeCoordinator coordinator("127.0.0.1:0", {LlamaTask("task-cancel", files.model, 8, "300ms")});
  auto agent = StartAgent(files.work, "serve", {"serve", "--config", files.config, "--coordinator",
                                                coordinator.address()});
  const std::string log = files.work + "/serve.log";
  ASSERT_TRUE(PollUntil([&] { return !coordinator.updates("task-cancel", v1::TaskUpdate::kProgress).empty(); },
                        absl::Seconds(120)))
      << ReadAll(log);
  v1::CoordinatorMessage cancel;
  cancel.mutable_cancel_task()->set_task_id("task-cancel");
  cancel.mutable_cancel_task()->set_reason("cancelled by an operator");
  ASSERT_TRUE(coordinator.Send(cancel));
  ASSERT_TRUE(PollUntil([&] { return !coordinator.updates("task-cancel", v1::TaskUpdate::kFinished).empty(); },
                        absl::Seconds(60)))
      << ReadAll(log);
  const v1::TaskFinished finished = coordinator.updates("task-cancel", v1::TaskUpdate::kFinished)[0].finished();
  EXPECT_TRUE(finished.cancelled()) << finished.message();
  EXPECT_TRUE(finished.ok()) << finished.message();
  // The run under way when the cancel came is finished and kept; no other starts after it.
  EXPECT_GE(finished.runs_done(), 1u);
  EXPECT_LE(finished.runs_done(), 2u);
  EXPECT_TRUE(absl::StartsWith(finished.message(), "cancelled: cancelled by an operator; ")) << finished.message();
  ASSERT_TRUE(PollUntil([&] { return coordinator.records().size() == finished.runs_done(); }, absl::Seconds(30)))
      << ReadAll(log);
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0) << ReadAll(log);
}

// Issue 19 case 6: SIGTERM while a task waits out "pause_between_runs: 24h" (the most a spec
// allows; 100000000h is refused) stops serve within 2 s: the pause ends, the simulator it measures
// is stopped, the task ends "the agent stopped" and the run made stays delivered.
TEST(AgentTasksTest, SigtermDuringALongPauseStopsServeWithinTwoSecondsAndItsServer) {
  const AgentFiles files("agent-tasks");
  FakeCoordinator coordinator("127.0.0.1:0", {LlamaTask("task-pause", files.model, 2, "24h")});
  auto agent = StartAgent(files.work, "serve", {"serve", "--config", files.config, "--coordinator",
                                                coordinator.address()});
  const std::string log = files.work + "/serve.log";
  ASSERT_TRUE(PollUntil([&] { return !coordinator.updates("task-pause", v1::TaskUpdate::kProgress).empty(); },
                        absl::Seconds(120)))
      << ReadAll(log);
  ASSERT_TRUE(PollUntil([&] { return coordinator.records().size() == 1; }, absl::Seconds(30))) << ReadAll(log);
  ASSERT_EQ(ProcessesNaming(files.model).size(), 1u) << ReadAll(log);  // the simulator, in the pause
  const absl::Time signalled = absl::Now();
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0) << ReadAll(log);
  EXPECT_LT(absl::Now() - signalled, absl::Seconds(2)) << ReadAll(log);
  EXPECT_TRUE(ProcessesNaming(files.model).empty()) << ReadAll(log);
  const std::string text = ReadAll(log);
  EXPECT_NE(text.find("serve: SIGTERM, stopping; "), std::string::npos) << text;
  EXPECT_NE(text.find(" records stay in the outbox (a task's pause or wait ends now, a timed run in progress "
                      "finishes, its server is stopped; send SIGTERM again to exit at once)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("task task-pause: gpu: stopped during the pause before warm 1\n"), std::string::npos) << text;
  const std::vector<v1::TaskUpdate> finished = coordinator.updates("task-pause", v1::TaskUpdate::kFinished);
  ASSERT_EQ(finished.size(), 1u) << text;
  EXPECT_FALSE(finished[0].finished().ok());
  EXPECT_EQ(finished[0].finished().message(), "the agent stopped during the task; 1 of 3 runs made, 0 FAILED");
}

// A second SIGTERM while serve waits for a slow end (the timed run in progress never answers,
// request_timeout 10m) exits at once with exit code 1 and says so; the simulator dies with the
// agent; the run made before is still in the outbox or delivered, never lost.
TEST(AgentTasksTest, ASecondSigtermDuringASlowShutdownExitsServeAtOnce) {
  const AgentFiles files("agent-tasks");
  FakeCoordinator coordinator(
      "127.0.0.1:0", {LlamaTask("task-hang", files.model, 1, "0", ", --sim-fail, hang-on-request, '2'", "10m")});
  auto agent = StartAgent(files.work, "serve", {"serve", "--config", files.config, "--coordinator",
                                                coordinator.address()});
  const std::string log = files.work + "/serve.log";
  const std::string server_log = files.work + "/state/tasks/task-hang/attempt-1/series/llama-server-gpu.log";
  // The warm run's request reached the simulator (its second "init sampler" line), which holds it.
  ASSERT_TRUE(PollUntil(
      [&] {
        const std::string text = ReadAll(server_log);
        size_t n = 0;
        for (size_t at = text.find("init sampler"); at != std::string::npos; at = text.find("init sampler", at + 1)) ++n;
        return n >= 2;
      },
      absl::Seconds(120)))
      << ReadAll(log);
  agent->Signal(SIGTERM);
  ASSERT_TRUE(PollUntil([&] { return ReadAll(log).find("serve: SIGTERM, stopping") != std::string::npos; },
                        absl::Seconds(10)))
      << ReadAll(log);
  absl::SleepFor(absl::Milliseconds(300));  // the first signal lets the timed run finish
  EXPECT_TRUE(agent->running()) << ReadAll(log);
  const absl::Time signalled = absl::Now();
  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 1) << ReadAll(log);
  EXPECT_LT(absl::Now() - signalled, absl::Seconds(2)) << ReadAll(log);
  const std::string text = ReadAll(log);
  EXPECT_NE(text.find("benchfleet-agent serve: second SIGTERM: exiting at once (exit code 1); "), std::string::npos)
      << text;
  EXPECT_TRUE(PollUntil([&] { return ProcessesNaming(files.model).empty(); }, absl::Seconds(5))) << text;
  // The cold run: acknowledged by the coordinator, or still in the outbox for the next start.
  auto again = StartAgent(files.work, "serve-again", {"serve", "--config", files.config, "--coordinator",
                                                      coordinator.address(), "--exit-when-drained"});
  ASSERT_TRUE(PollUntil([&] { return !again->running(); }, absl::Seconds(60))) << ReadAll(files.work + "/serve-again.log");
  EXPECT_EQ(again->Wait(), 0) << ReadAll(files.work + "/serve-again.log");
  size_t cold = 0;
  for (const v1::RunRecord& record : coordinator.records()) cold += record.phase() == v1::PHASE_COLD ? 1 : 0;
  EXPECT_GE(cold, 1u);
}

}  // namespace
}  // namespace benchfleet::testing
