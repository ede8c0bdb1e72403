// The workflow backend against the real workflow-standin (tests/sim/workflow_standin) through
// the real process launcher: results, peak memory by rusage and by cgroup (where this machine
// allows), the deadline killing the whole tree, failures with their output tails.
#include "agent/backends/workflow/workflow_backend.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kMiB = 1 << 20;

// Returns the pids whose command line contains needle.
std::vector<int> ProcessesWith(const std::string& needle) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  while (dirent* e = proc ? ::readdir(proc) : nullptr) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in(absl::StrCat("/proc/", pid, "/cmdline"));
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(needle) != std::string::npos) pids.push_back(pid);
  }
  if (proc) ::closedir(proc);
  return pids;
}

class WorkflowBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prompts_ = dir_.path() + "/prompts.jsonl";
    std::ofstream(prompts_) << "{\"id\": \"p1\", \"prompt\": \"Explain in one sentence what a GPU is.\"}\n"
                            << "{\"id\": \"p2\", \"prompt\": \"Explain in one sentence what RAM is.\"}\n"
                            << "{\"prompt\": \"Explain in one sentence what a CPU is.\"}\n";
    AllowConfig allow;
    allow.backends = {"workflow"};
    allow.workflow_dirs = {dir_.path()};
    auto command = [&](std::vector<std::string> extra) {
      std::vector<std::string> argv = {WORKFLOW_STANDIN, "--prompts", "{prompts}", "--output", "{output}"};
      argv.insert(argv.end(), extra.begin(), extra.end());
      return CommandTemplate{argv, {"ACCELERATOR"}};
    };
    allow.commands["standin-64"] = command({"--alloc-mib", "64", "--ms-per-request", "5", "--tokens", "20"});
    allow.commands["standin-hang"] = command({"--hang"});
    allow.commands["standin-escape"] = command({"--hang-escape"});
    allow.commands["standin-garbage"] = command({"--garbage"});
    allow.commands["standin-exit3"] = command({"--exit-code", "3"});
    allow_ = std::make_unique<AllowList>(allow, "agent.yaml");
    context_.env = Env::Default();
    context_.allow = allow_.get();
    context_.work_dir = dir_.path() + "/work";
  }

  // Opens the backend with this section and makes one COLD run.
  v1::RunRecord RunOnce(const std::string& section_yaml, WorkflowDependencies deps = {}) {
    const YAML::Node section = YAML::Load(section_yaml);
    absl::StatusOr<std::unique_ptr<Backend>> backend = NewWorkflowBackendWith(section, context_, std::move(deps));
    EXPECT_TRUE(backend.ok()) << backend.status();
    if (!backend.ok()) return {};
    std::string tail;
    absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({}, &tail);
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return {};
    EXPECT_EQ((*session)->info().params.at("prompts_count"), "3");
    v1::RunRecord record;
    (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &record);
    simulated_ = (*session)->info().simulated;
    EXPECT_TRUE((*session)->Close().ok());
    return record;
  }

  std::string Section(const std::string& command, const std::string& more = "") {
    return absl::StrCat("command: ", command, "\nprompts: ", prompts_, "\nenv: {ACCELERATOR: none}\n", more);
  }

  testing::ScopedTempDir dir_;
  std::string prompts_;
  std::unique_ptr<AllowList> allow_;
  BackendContext context_;
  bool simulated_ = false;
};

double Metric(const v1::RunRecord& r, const std::string& name) {
  for (const v1::Metric& m : r.metrics()) {
    if (m.name() == name) return m.value();
  }
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

TEST_F(WorkflowBackendTest, RunsTheCommandAndReadsItsResultsWithRusageMemory) {
  const v1::RunRecord r = RunOnce(Section("standin-64", "memory: rusage\n"));
  ASSERT_EQ(r.status().code(), v1::RunStatus::CODE_OK) << r.status().message() << "\n" << r.status().log_tail();
  EXPECT_EQ(r.backend(), "workflow");
  EXPECT_EQ(r.mode(), "none");
  ASSERT_EQ(r.requests_size(), 3);
  EXPECT_EQ(r.requests(0).prompt_id(), "p1");
  EXPECT_EQ(r.requests(2).prompt_id(), "3");  // no id: its line
  EXPECT_EQ(r.requests(1).output_tokens(), 20u);
  EXPECT_GE(r.requests(0).latency_seconds(), 0.005);
  EXPECT_EQ(Metric(r, "requests"), 3);
  EXPECT_EQ(Metric(r, "output_tokens"), 60);
  EXPECT_GT(Metric(r, "output_tokens_per_second"), 0);
  EXPECT_GE(Metric(r, "latency_p99_seconds"), Metric(r, "latency_p50_seconds"));
  EXPECT_EQ(r.params().at("throughput_basis"), "results duration_seconds");
  EXPECT_EQ(r.params().at("tool"), "workflow-standin 1 ACCELERATOR=none");
  EXPECT_EQ(r.params().at("env.ACCELERATOR"), "none");
  EXPECT_TRUE(r.simulated());
  EXPECT_TRUE(simulated_);
  EXPECT_GT(r.wall_duration().nanos() + r.wall_duration().seconds(), 0);
  ASSERT_EQ(r.memory_size(), 1);
  EXPECT_EQ(r.memory(0).kind(), v1::MEMORY_KIND_PROCESS_PEAK_RSS);
  EXPECT_EQ(r.memory(0).source(), "wait4 ru_maxrss of the children: the largest process of the tree, not their sum");
  EXPECT_NEAR(static_cast<double>(r.memory(0).bytes()), 64.0 * kMiB, 0.1 * 64 * kMiB);
  ASSERT_EQ(r.outputs_size(), 1);
  EXPECT_EQ(r.outputs(0).name(), "results");
  const std::string base = dir_.path() + "/work/workflow-none-r1-cold-1";
  EXPECT_EQ(r.params().at("results_file"), base + ".results.json");
  EXPECT_EQ(r.params().at("stdout_log"), base + ".stdout.log");
  EXPECT_EQ(r.params().at("stderr_log"), base + ".stderr.log");
}

TEST_F(WorkflowBackendTest, CgroupPeakWhereThisMachineAllows) {
  absl::StatusOr<CgroupMemoryHierarchy> h = DetectMemoryHierarchy();
  if (!h.ok() || ::geteuid() != 0) GTEST_SKIP() << "no memory cgroup for this user here";
  const v1::RunRecord r = RunOnce(Section("standin-64", "memory: cgroup\n"));
  if (h->version == 2 && r.status().code() == v1::RunStatus::CODE_FAILED &&
      absl::StrContains(r.status().message(), "cannot make one")) {
    GTEST_SKIP() << r.status().message();
  }
  ASSERT_EQ(r.status().code(), v1::RunStatus::CODE_OK) << r.status().message() << "\n" << r.status().log_tail();
  ASSERT_EQ(r.memory_size(), 1);
  EXPECT_EQ(r.memory(0).kind(), v1::MEMORY_KIND_CONTAINER_PEAK);
  EXPECT_THAT(r.memory(0).scope(), StartsWith(absl::StrCat("cgroup v", h->version, " ")));
  EXPECT_THAT(r.memory(0).source(),
              HasSubstr(h->version == 2 ? "/memory.peak" : "/memory.max_usage_in_bytes"));
  EXPECT_NEAR(static_cast<double>(r.memory(0).bytes()), 64.0 * kMiB, 0.1 * 64 * kMiB);
  EXPECT_EQ(r.params().count("memory_cgroup_left"), 0u);
}

TEST_F(WorkflowBackendTest, WithoutACgroupAutoFallsBackToRusageAndCgroupFails) {
  auto no_cgroups = [] {
    return WorkflowDependencies{nullptr, []() -> absl::StatusOr<std::unique_ptr<MemoryCgroups>> {
                                  return absl::NotFoundError("no cgroup memory hierarchy is mounted");
                                }};
  };
  const v1::RunRecord fallback = RunOnce(Section("standin-64"), no_cgroups());
  ASSERT_EQ(fallback.status().code(), v1::RunStatus::CODE_OK) << fallback.status().message();
  ASSERT_EQ(fallback.memory_size(), 1);
  EXPECT_EQ(fallback.memory(0).kind(), v1::MEMORY_KIND_PROCESS_PEAK_RSS);
  EXPECT_EQ(fallback.params().at("memory_cgroup_unavailable"), "no cgroup memory hierarchy is mounted");

  const v1::RunRecord strict = RunOnce(Section("standin-64", "memory: cgroup\n"), no_cgroups());
  EXPECT_EQ(strict.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(strict.status().message(),
            "workflow.memory is cgroup but the agent cannot make one: no cgroup memory hierarchy is mounted");
}

TEST_F(WorkflowBackendTest, AHungCommandIsKilledWithItsWholeTreeAtTheDeadline) {
  const v1::RunRecord r = RunOnce(Section("standin-hang", "deadline: 1s\nstop_grace: 200ms\nmemory: rusage\n"));
  EXPECT_EQ(r.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(r.status().message(), "command standin-hang killed at its deadline of 1 s (killed by signal 15 (SIGTERM))");
  EXPECT_THAT(r.status().log_tail(), HasSubstr("stderr (last 20 lines):\nworkflow-standin: hanging (as asked)"));
  EXPECT_GE(r.wall_duration().seconds(), 1);
  // The stand-in's forked child (same command line) is gone too.
  EXPECT_TRUE(ProcessesWith(dir_.path()).empty());
}

// A child that left the process group (setsid) escapes killpg; the cgroup still holds it.
TEST_F(WorkflowBackendTest, AtTheDeadlineTheCgroupKillsWhatLeftTheProcessGroup) {
  absl::StatusOr<CgroupMemoryHierarchy> h = DetectMemoryHierarchy();
  if (!h.ok() || ::geteuid() != 0) GTEST_SKIP() << "no memory cgroup for this user here";
  const v1::RunRecord r = RunOnce(Section("standin-escape", "deadline: 1s\nstop_grace: 200ms\nmemory: cgroup\n"));
  if (h->version == 2 && absl::StrContains(r.status().message(), "cannot make one")) GTEST_SKIP() << r.status().message();
  EXPECT_EQ(r.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(r.status().message(), "command standin-escape killed at its deadline of 1 s (killed by signal 15 (SIGTERM))");
  ASSERT_EQ(r.memory_size(), 1);
  EXPECT_EQ(r.memory(0).kind(), v1::MEMORY_KIND_CONTAINER_PEAK);
  EXPECT_TRUE(ProcessesWith(dir_.path()).empty()) << "the setsid child outlived the deadline";
}

TEST_F(WorkflowBackendTest, FailuresSayWhyWithTheOutputTails) {
  const v1::RunRecord garbage = RunOnce(Section("standin-garbage", "memory: rusage\n"));
  EXPECT_EQ(garbage.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(garbage.status().message(),
            absl::StrCat("results file ", garbage.params().at("results_file"), ": the results file is not JSON"));
  EXPECT_EQ(garbage.requests_size(), 0);

  const v1::RunRecord exit3 = RunOnce(Section("standin-exit3", "memory: rusage\n"));
  EXPECT_EQ(exit3.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(exit3.status().message(), "command standin-exit3 failed: exit code 3");
  EXPECT_THAT(exit3.status().log_tail(), StartsWith("stdout (last 20 lines):\nworkflow-standin: holding 0 MiB\n"));
  // Each run has files of its own.
  EXPECT_NE(garbage.params().at("results_file"), exit3.params().at("results_file"));
}

TEST_F(WorkflowBackendTest, RefusesAModeItDoesNotHave) {
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      NewWorkflowBackendWith(YAML::Load(Section("standin-64")), context_, {});
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ((*backend)->default_axis_values("mode"), std::vector<std::string>{"none"});
  EXPECT_EQ((*backend)->throughput_metric(), "output_tokens_per_second");
  EXPECT_EQ((*backend)->CheckCombination({{"mode", "nvidia"}}).message(),
            "unknown mode nvidia: the workflow section's mode is none (workflow.mode, else env ACCELERATOR)");
}

}  // namespace
}  // namespace benchfleet::agent
