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
                             const std::string& pause = "0") {
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
                                   "  args: [-c, '256', --sim-load-ms, '100']\n"
                                   "  modes: {gpu: [-ngl, '99']}\n"
                                   "  prompt: Explain in one sentence what a GPU is.\n"
                                   "  n_predict: 8\n"
                                   "  seed: 42\n"
                                   "  health_timeout: 10s\n"
                                   "  request_timeout: 5s\n"
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

}  // namespace
}  // namespace benchfleet::testing
