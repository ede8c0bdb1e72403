// The workflow backend against the real workflow-standin (tests/sim/workflow_standin) through
// the real process launcher: results, peak memory by rusage and by cgroup (where this machine
// allows), the deadline killing the whole tree, failures with their output tails.
#include "agent/backends/services.h"
#include "agent/backends/workflow/workflow_backend.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/unit/agent/probes/fake_tools.h"
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

// True once no process's command line contains needle, within 5 s: a process killed by a
// signal to its group ends a moment after the signal, on a loaded machine a noticeable one.
bool NoProcessWithin(const std::string& needle) {
  for (int i = 0; i < 500; ++i) {
    if (ProcessesWith(needle).empty()) return true;
    ::usleep(10 * 1000);
  }
  return false;
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
    // The stand-in inside a (fake) container: bin/docker is written by the tests that use it.
    auto in_docker = [&](std::vector<std::string> extra) {
      std::vector<std::string> argv = {dir_.path() + "/bin/docker", "run", "--rm", "--name", "{container}", "workflow:6",
                                       WORKFLOW_STANDIN, "--prompts", "{prompts}", "--output", "{output}"};
      argv.insert(argv.end(), extra.begin(), extra.end());
      return CommandTemplate{argv, {}};
    };
    allow.commands["docker-standin"] = in_docker({"--alloc-mib", "16", "--ms-per-request", "300", "--tokens", "20"});
    allow.commands["docker-hang"] = in_docker({"--hang"});
    // The batch size as {batch_size}, and as BATCH_SIZE.
    allow.commands["standin-batched"] = command({"--batch-size", "{batch_size}", "--ms-per-request", "5"});
    allow.commands["standin-batch-env"] =
        CommandTemplate{{WORKFLOW_STANDIN, "--prompts", "{prompts}", "--output", "{output}", "--ms-per-request", "5"},
                        {"ACCELERATOR", "BATCH_SIZE"}};
    // A reused (fake) container: started at Open, each run executed in it.
    allow.commands["docker-up"] = CommandTemplate{{dir_.path() + "/bin/docker", "run", "-d", "--name", "{container}",
                                                   "-e", "ACCELERATOR", "workflow:6", "sleep", "infinity"},
                                                  {"ACCELERATOR"}};
    allow.commands["docker-exec-standin"] = CommandTemplate{
        {dir_.path() + "/bin/docker", "exec", "{container}", WORKFLOW_STANDIN, "--prompts", "{prompts}", "--output",
         "{output}", "--batch-size", "{batch_size}", "--ms-per-request", "100", "--tokens", "20"},
        {}};
    allow_ = std::make_unique<AllowList>(allow, "agent.yaml");
    context_.env = Env::Default();
    context_.services = services_.services();
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
    conditions_ = (*session)->info().conditions;
    info_params_ = (*session)->info().params;
    EXPECT_TRUE((*session)->Close().ok());
    return record;
  }

  std::string Section(const std::string& command, const std::string& more = "") {
    return absl::StrCat("command: ", command, "\nprompts: ", prompts_, "\nenv: {ACCELERATOR: none}\n", more);
  }

  testing::ScopedTempDir dir_;
  std::string prompts_;
  std::unique_ptr<AllowList> allow_;
  AgentServices services_{Env::Default()};
  BackendContext context_;
  bool simulated_ = false;
  std::map<std::string, std::string> conditions_;  // the last RunOnce session's
  std::map<std::string, std::string> info_params_;  // the last RunOnce session's (the runner copies them into every record)
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
  // The scope is the same for every run; the run's own cgroup is named in the source.
  EXPECT_EQ(r.memory(0).scope(), "cgroup");
  EXPECT_THAT(r.memory(0).source(),
              HasSubstr(h->version == 2 ? "/memory.peak (cgroup v2 " : "/memory.max_usage_in_bytes (cgroup v1 "));
  EXPECT_THAT(r.memory(0).source(), HasSubstr(absl::StrCat("/benchfleet-workflow-", ::getpid(), "-")));
  EXPECT_NEAR(static_cast<double>(r.memory(0).bytes()), 64.0 * kMiB, 0.1 * 64 * kMiB);
  EXPECT_EQ(r.params().count("memory_cgroup_left"), 0u);
}

TEST_F(WorkflowBackendTest, WithoutACgroupAutoFallsBackToRusageAndCgroupFails) {
  auto no_cgroups = [] {
    return WorkflowDependencies{[]() -> absl::StatusOr<std::unique_ptr<MemoryCgroups>> {
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
  EXPECT_TRUE(NoProcessWithin(dir_.path()));
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
  EXPECT_TRUE(NoProcessWithin(dir_.path())) << "the setsid child outlived the deadline";
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

// A fake docker CLI: `run --rm --name NAME IMAGE CMD...` execs CMD (the stand-in); `stats ...
// NAME` answers "No such container" until that run started, then lines in the recorded
// `{{json .}}` format (300MiB first, 1.5GiB after); `kill NAME` notes the name; `version` prints
// an engine version and `image inspect ... IMAGE` an id and a repository digest (made-up hex, in
// the format of `--format '{{.Id}}{{range .RepoDigests}} {{.}}{{end}}'`), each noting its
// arguments. Docker is not needed: the backend only ever runs the CLI.
void WriteFakeDocker(const std::string& dir) {
  ::mkdir((dir + "/bin").c_str(), 0755);
  const std::string state = dir + "/docker-state";
  ::mkdir(state.c_str(), 0755);
  testing::WriteTool(dir + "/bin", "docker", absl::StrCat("state='", state, R"sh('
case "$1" in
  run)
    shift
    while [ $# -gt 0 ]; do
      case "$1" in
        --rm) shift ;;
        --name) echo "$2" > "$state/name"; shift 2 ;;
        *) break ;;
      esac
    done
    shift
    exec "$@" ;;
  stats)
    for last; do :; done
    if [ "$(cat "$state/name" 2>/dev/null)" != "$last" ]; then
      echo "Error response from daemon: No such container: $last" >&2
      exit 1
    fi
    n=$(( $(cat "$state/count" 2>/dev/null || echo 0) + 1 ))
    echo "$n" > "$state/count"
    if [ "$n" -eq 1 ]; then usage='300MiB / 62.79GiB'; else usage='1.5GiB / 62.79GiB'; fi
    printf '{"BlockIO":"0B / 0B","CPUPerc":"99.10%%","Container":"%s","ID":"1285939c1fd3","MemPerc":"2.39%%","MemUsage":"%s","Name":"%s","NetIO":"0B / 0B","PIDs":"3"}\n' "$last" "$usage" "$last" ;;
  kill) echo "$2" > "$state/killed" ;;
  version) echo "$*" > "$state/version"; echo '24.0.7' ;;
  image)
    for last; do :; done
    echo "$*" > "$state/inspect"
    echo "sha256:4c0fe3d2a1b6e0f9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5 registry.example/$last@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" ;;
  *) echo "fake docker: $*" >&2; exit 2 ;;
esac
)sh"));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_F(WorkflowBackendTest, AContainerItNamesIsMeasuredByDockerStatsSampled) {
  WriteFakeDocker(dir_.path());
  const v1::RunRecord r =
      RunOnce(absl::StrCat("command: docker-standin\nprompts: ", prompts_, "\ncontainer_sample_period: 100ms\n"));
  ASSERT_EQ(r.status().code(), v1::RunStatus::CODE_OK) << r.status().message() << "\n" << r.status().log_tail();
  const std::string name = r.params().at("container");
  EXPECT_THAT(name, StartsWith(absl::StrCat("benchfleet-", ::getpid(), "-")));
  EXPECT_THAT(r.params().at("command_line"), HasSubstr(absl::StrCat(" run --rm --name ", name, " workflow:6 ")));
  EXPECT_EQ(ReadFile(dir_.path() + "/docker-state/name"), name + "\n");
  EXPECT_EQ(r.params().at("container_lifecycle"), "restart");
  EXPECT_EQ(r.requests_size(), 3);
  // Only the container's figure: neither a cgroup nor rusage (they would see the docker CLI).
  ASSERT_EQ(r.memory_size(), 1) << r.DebugString();
  EXPECT_EQ(r.memory(0).kind(), v1::MEMORY_KIND_CONTAINER_PEAK);
  // The scope is the same for every run (one column for the repetitions); the run's container
  // is named in the source.
  EXPECT_EQ(r.memory(0).scope(), "container");
  EXPECT_EQ(r.memory(0).bytes(), 1610612736u);  // "1.5GiB", the highest sample
  const int samples = std::stoi(ReadFile(dir_.path() + "/docker-state/count"));
  EXPECT_GE(samples, 2);
  EXPECT_EQ(r.memory(0).source(),
            absl::StrCat("docker stats --no-stream MemUsage of container ", name, ", sampled: the highest of ", samples,
                         " samples taken every 0.1 s or more while the command ran; a spike between two samples is "
                         "missed, so the true peak can be higher"));
  EXPECT_THAT(r.params().at("memory_samples"), StartsWith(absl::StrCat(samples, " of ")));
  EXPECT_EQ(r.params().count("memory_cgroup_unavailable"), 0u);
}

TEST_F(WorkflowBackendTest, AContainerRunPutsTheRuntimeVersionAndTheImageDigestInTheConditions) {
  WriteFakeDocker(dir_.path());
  absl::StatusOr<std::unique_ptr<Backend>> backend = NewWorkflowBackendWith(
      YAML::Load(absl::StrCat("command: docker-standin\nprompts: ", prompts_, "\ncontainer_sample_period: 100ms\n")),
      context_, {});
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ((*session)->info().conditions,
            (std::map<std::string, std::string>{
                {"runtime", "docker"},
                {"runtime_version", "24.0.7"},
                {"image", "workflow:6"},
                {"image_digest",
                 "registry.example/workflow:6@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
                {"image_id", "sha256:4c0fe3d2a1b6e0f9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5"}}));
  EXPECT_EQ(ReadFile(dir_.path() + "/docker-state/version"), "version --format {{.Server.Version}}\n");
  EXPECT_EQ(ReadFile(dir_.path() + "/docker-state/inspect"),
            "image inspect --format {{.Id}}{{range .RepoDigests}} {{.}}{{end}} workflow:6\n");
  EXPECT_EQ((*session)->info().params.count("runtime_version_error"), 0u);
  EXPECT_EQ((*session)->info().params.count("image_digest_error"), 0u);
}

TEST_F(WorkflowBackendTest, ACommandThatIsNoContainerRunHasNoContainerConditions) {
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      NewWorkflowBackendWith(YAML::Load(Section("standin-64")), context_, {});
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->info().conditions.empty());
}

TEST_F(WorkflowBackendTest, AContainerThatNeverAnswersLeavesNoFigureButTheReason) {
  // A docker whose daemon is not there: the run is OK, without a memory figure, saying why; the
  // conditions have no runtime version and no digest, and every record says why.
  ::mkdir((dir_.path() + "/bin").c_str(), 0755);
  testing::WriteTool(dir_.path() + "/bin", "docker",
                     "case \"$1\" in\n"
                     "  run) shift 5; exec \"$@\" ;;\n"
                     "  *) echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2; exit 1 ;;\n"
                     "esac\n");
  const v1::RunRecord r = RunOnce(absl::StrCat("command: docker-standin\nprompts: ", prompts_,
                                               "\ncontainer_sample_period: 100ms\nmemory: container\n"));
  EXPECT_EQ(conditions_, (std::map<std::string, std::string>{{"runtime", "docker"}, {"image", "workflow:6"}}));
  EXPECT_EQ(info_params_.at("runtime_version_error"),
            absl::StrCat(dir_.path(), "/bin/docker version --format {{.Server.Version}} exited with code 1: Cannot "
                         "connect to the Docker daemon at unix:///var/run/docker.sock."));
  EXPECT_EQ(info_params_.at("image_digest_error"),
            absl::StrCat(dir_.path(), "/bin/docker image inspect --format {{.Id}}{{range .RepoDigests}} {{.}}{{end}} "
                         "workflow:6 exited with code 1: Cannot connect to the Docker daemon at "
                         "unix:///var/run/docker.sock."));
  ASSERT_EQ(r.status().code(), v1::RunStatus::CODE_OK) << r.status().message() << "\n" << r.status().log_tail();
  EXPECT_EQ(r.memory_size(), 0) << r.DebugString();
  const std::string name = r.params().at("container");
  EXPECT_THAT(r.params().at("memory_container_error"),
              StartsWith(absl::StrCat("no docker stats sample of container ", name, " in ")));
  EXPECT_THAT(r.params().at("memory_container_error"),
              HasSubstr(absl::StrCat(" attempts: ", dir_.path(), "/bin/docker stats --no-stream --format {{json .}} ",
                                     name, " exited with code 1: Cannot connect to the Docker daemon at "
                                     "unix:///var/run/docker.sock.")));
}

TEST_F(WorkflowBackendTest, AtTheDeadlineTheContainerIsKilledThroughTheRuntime) {
  WriteFakeDocker(dir_.path());
  const v1::RunRecord r = RunOnce(absl::StrCat("command: docker-hang\nprompts: ", prompts_,
                                               "\ndeadline: 1s\nstop_grace: 200ms\ncontainer_sample_period: 100ms\n"));
  EXPECT_EQ(r.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(r.status().message(), "command docker-hang killed at its deadline of 1 s (killed by signal 15 (SIGTERM))");
  const std::string name = r.params().at("container");
  EXPECT_EQ(ReadFile(dir_.path() + "/docker-state/killed"), name + "\n");  // docker kill NAME
  EXPECT_EQ(r.params().count("container_kill"), 0u);
  ASSERT_EQ(r.memory_size(), 1);
  EXPECT_EQ(r.memory(0).kind(), v1::MEMORY_KIND_CONTAINER_PEAK);
  EXPECT_TRUE(NoProcessWithin(dir_.path()));
}

TEST_F(WorkflowBackendTest, RefusesAModeItDoesNotHave) {
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      NewWorkflowBackendWith(YAML::Load(Section("standin-64")), context_, {});
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ((*backend)->default_axis_values("mode"), std::vector<std::string>{"none"});
  ASSERT_NE(MainFigure((*backend)->figures()), nullptr);
  EXPECT_EQ(MainFigure((*backend)->figures())->name, "output_tokens_per_second");
  EXPECT_EQ((*backend)->CheckCombination({{"mode", "nvidia"}}).message(),
            "unknown mode nvidia: the workflow section's mode is none (workflow.mode, else env ACCELERATOR)");
}

TEST_F(WorkflowBackendTest, TheBatchSizeIsAMatrixAxisHandedToTheCommand) {
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      NewWorkflowBackendWith(YAML::Load(Section("standin-batched", "batch_size: 2\nmemory: rusage\n")), context_, {});
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_THAT((*backend)->matrix_axes(), ::testing::ElementsAre("mode", "batch_size"));
  EXPECT_EQ((*backend)->default_axis_values("batch_size"), std::vector<std::string>{"2"});
  EXPECT_TRUE((*backend)->CheckCombination({{"mode", "none"}, {"batch_size", "16"}}).ok());
  EXPECT_EQ((*backend)->CheckCombination({{"batch_size", "sixteen"}}).message(),
            "batch_size must be an integer from 1 to 1048576, got 'sixteen'");
  EXPECT_EQ((*backend)->CheckCombination({{"mode", "none"}}).message(),
            "command standin-batched holds {batch_size}: give workflow.batch_size or a matrix axis batch_size");

  absl::StatusOr<std::unique_ptr<BackendSession>> session =
      (*backend)->Open({{"mode", "none"}, {"batch_size", "3"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  v1::RunRecord r;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &r);
  ASSERT_EQ(r.status().code(), v1::RunStatus::CODE_OK) << r.status().message() << "\n" << r.status().log_tail();
  EXPECT_EQ(r.params().at("batch_size"), "3");
  EXPECT_THAT(r.params().at("command_line"), HasSubstr(" --batch-size 3 "));
  EXPECT_EQ(r.params().at("results_file"), dir_.path() + "/work/workflow-none-b3-r1-cold-1.results.json");
  // The stand-in answered the three prompts in one batch: one latency for all.
  ASSERT_EQ(r.requests_size(), 3);
  EXPECT_EQ(r.requests(0).latency_seconds(), r.requests(2).latency_seconds());
  EXPECT_THAT(ReadFile(r.params().at("results_file")), HasSubstr("\"batch_size\": 3"));

  // A command without a batch size refuses the axis.
  absl::StatusOr<std::unique_ptr<Backend>> plain = NewWorkflowBackendWith(YAML::Load(Section("standin-64")), context_, {});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE((*plain)->default_axis_values("batch_size").empty());
  EXPECT_EQ((*plain)->CheckCombination({{"batch_size", "8"}}).message(),
            "batch_size 8: command standin-64 takes no batch size (no {batch_size} in its argv, no BATCH_SIZE in its "
            "env)");
}

TEST_F(WorkflowBackendTest, TheBatchSizeGoesToBatchSizeWhenTheCommandListsIt) {
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      NewWorkflowBackendWith(YAML::Load(Section("standin-batch-env", "memory: rusage\n")), context_, {});
  ASSERT_TRUE(backend.ok()) << backend.status();
  // No batch size anywhere: the command runs without BATCH_SIZE.
  EXPECT_TRUE((*backend)->CheckCombination({{"mode", "none"}}).ok());
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"batch_size", "2"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  v1::RunRecord r;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &r);
  ASSERT_EQ(r.status().code(), v1::RunStatus::CODE_OK) << r.status().message() << "\n" << r.status().log_tail();
  EXPECT_EQ(r.params().at("batch_size"), "2");
  EXPECT_THAT(ReadFile(r.params().at("results_file")), HasSubstr("\"batch_size\": 2"));
  ASSERT_EQ(r.requests_size(), 3);
  EXPECT_EQ(r.requests(0).latency_seconds(), r.requests(1).latency_seconds());  // one batch of 2
}

TEST_F(WorkflowBackendTest, AcceleratorComesFromTheAgentsLabel) {
  context_.labels = {{"accelerator", "nvidia"}, {"class", "a100"}};
  const v1::RunRecord r = RunOnce(absl::StrCat("command: standin-64\nprompts: ", prompts_,
                                               "\nenv: {ACCELERATOR: {label: accelerator, default: none}}\n"
                                               "memory: rusage\n"));
  ASSERT_EQ(r.status().code(), v1::RunStatus::CODE_OK) << r.status().message();
  EXPECT_EQ(r.mode(), "nvidia");
  EXPECT_EQ(r.params().at("env.ACCELERATOR"), "nvidia");
  EXPECT_EQ(r.params().at("env_source.ACCELERATOR"), "agent label accelerator");
  EXPECT_EQ(r.params().at("tool"), "workflow-standin 1 ACCELERATOR=nvidia");

  context_.labels = {};
  absl::StatusOr<std::unique_ptr<Backend>> refused = NewWorkflowBackendWith(
      YAML::Load(absl::StrCat("command: standin-64\nprompts: ", prompts_, "\nenv: {ACCELERATOR: {label: accelerator}}\n")),
      context_, {});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "line 3: workflow.env.ACCELERATOR takes this agent's label accelerator, which it does not have (its "
            "labels: none), and gives no default");
}

// A fake docker CLI for a reused container: `run -d --name NAME -e VAR IMAGE CMD...` notes the
// name and VAR's value and returns (the container "runs"); `exec NAME CMD...` runs CMD when NAME
// runs (else "No such container"), noting it; `stats ... NAME` answers 256MiB while NAME runs;
// `rm -f NAME` notes it and stops it; version and image inspect answer.
void WriteFakeSessionDocker(const std::string& dir, bool start_fails = false) {
  ::mkdir((dir + "/bin").c_str(), 0755);
  const std::string state = dir + "/docker-state";
  ::mkdir(state.c_str(), 0755);
  testing::WriteTool(dir + "/bin", "docker", absl::StrCat("state='", state, "'\nstart_fails=", start_fails ? 1 : 0, R"sh(
running() { [ -e "$state/running.$1" ]; }
case "$1" in
  run)
    shift
    while [ $# -gt 0 ]; do
      case "$1" in
        -d|--rm) shift ;;
        --name) name=$2; shift 2 ;;
        -e) echo "$2=$(printenv "$2")" >> "$state/env"; shift 2 ;;
        *) break ;;
      esac
    done
    echo "$name" >> "$state/started"
    if [ "$start_fails" = 1 ]; then
      echo "docker: Error response from daemon: pull access denied for $1." >&2
      exit 125
    fi
    touch "$state/running.$name"
    echo 4c0fe3d2a1b6e0f9 ;;
  exec)
    name=$2; shift 2
    running "$name" || { echo "Error response from daemon: No such container: $name" >&2; exit 1; }
    echo "$name" >> "$state/execs"
    exec "$@" ;;
  stats)
    for last; do :; done
    running "$last" || { echo "Error response from daemon: No such container: $last" >&2; exit 1; }
    printf '{"Container":"%s","MemUsage":"256MiB / 62.79GiB","Name":"%s"}
' "$last" "$last" ;;
  rm) echo "$3" >> "$state/removed"; rm -f "$state/running.$3" ;;
  kill) echo "$2" >> "$state/killed"; rm -f "$state/running.$2" ;;
  version) echo '24.0.7' ;;
  image) echo "sha256:4c0fe3d2a1b6e0f9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5 registry.example/workflow:6@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" ;;
  *) echo "fake docker: $*" >&2; exit 2 ;;
esac
)sh"));
}

std::string Reused(const std::string& prompts) {
  return absl::StrCat("command: docker-exec-standin\nprompts: ", prompts,
                      "\ncontainer: reuse\nstart: docker-up\nbatch_size: 2\nenv: {ACCELERATOR: amd}\n"
                      "container_sample_period: 100ms\n");
}

// container: reuse: Open starts one container, every run of the session executes in it (the
// first COLD, the others WARM as the runner counts), Close removes it.
TEST_F(WorkflowBackendTest, AReusedContainerServesEveryRunOfItsSession) {
  WriteFakeSessionDocker(dir_.path());
  absl::StatusOr<std::unique_ptr<Backend>> backend = NewWorkflowBackendWith(YAML::Load(Reused(prompts_)), context_, {});
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"batch_size", "2"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::string started = ReadFile(dir_.path() + "/docker-state/started");
  ASSERT_THAT(started, StartsWith(absl::StrCat("benchfleet-", ::getpid(), "-")));
  const std::string name = started.substr(0, started.size() - 1);
  EXPECT_EQ(ReadFile(dir_.path() + "/docker-state/env"), "ACCELERATOR=amd\n");  // the start command lists it
  EXPECT_EQ((*session)->info().params.at("start_command"), "docker-up");
  // The conditions come from the start command's image.
  EXPECT_EQ((*session)->info().conditions.at("image"), "workflow:6");

  std::vector<v1::RunRecord> records(3);
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &records[0]);
  (*session)->Run(RunInput{v1::PHASE_WARM, 1, 1, 0}, &records[1]);
  (*session)->Run(RunInput{v1::PHASE_WARM, 2, 1, 0}, &records[2]);
  EXPECT_TRUE((*session)->alive());
  for (const v1::RunRecord& r : records) {
    ASSERT_EQ(r.status().code(), v1::RunStatus::CODE_OK) << r.status().message() << "\n" << r.status().log_tail();
    EXPECT_EQ(r.params().at("container"), name);
    EXPECT_EQ(r.params().at("container_lifecycle"), "reuse");
    EXPECT_THAT(r.params().at("command_line"), HasSubstr(absl::StrCat(" exec ", name, " ")));
    ASSERT_EQ(r.memory_size(), 1) << r.DebugString();
    EXPECT_EQ(r.memory(0).kind(), v1::MEMORY_KIND_CONTAINER_PEAK);
    EXPECT_EQ(r.memory(0).scope(), "container");
    EXPECT_THAT(r.memory(0).source(), StartsWith(absl::StrCat("docker stats --no-stream MemUsage of container ", name,
                                                              ", sampled: ")));
    EXPECT_EQ(r.memory(0).bytes(), 256 * kMiB);
    EXPECT_EQ(r.requests_size(), 3);
  }
  EXPECT_EQ(records[1].params().at("results_file"), dir_.path() + "/work/workflow-amd-b2-r1-warm-1.results.json");
  EXPECT_EQ(ReadFile(dir_.path() + "/docker-state/execs"), absl::StrCat(name, "\n", name, "\n", name, "\n"));
  EXPECT_EQ(ReadFile(dir_.path() + "/docker-state/started"), name + "\n");  // one container for the session
  EXPECT_FALSE(std::ifstream(dir_.path() + "/docker-state/removed").good());

  EXPECT_TRUE((*session)->Close().ok());
  EXPECT_TRUE((*session)->Close().ok());  // idempotent
  EXPECT_EQ(ReadFile(dir_.path() + "/docker-state/removed"), name + "\n");

  // A new session: a new container.
  absl::StatusOr<std::unique_ptr<BackendSession>> next = (*backend)->Open({{"batch_size", "2"}}, nullptr);
  ASSERT_TRUE(next.ok()) << next.status();
  next->reset();  // the destructor removes it too
  const std::string removed = ReadFile(dir_.path() + "/docker-state/removed");
  EXPECT_EQ(std::count(removed.begin(), removed.end(), '\n'), 2);
  EXPECT_NE(removed.substr(name.size() + 1), name + "\n");
}

TEST_F(WorkflowBackendTest, AStartCommandThatFailsFailsOpenWithItsOutputAndLeavesNoContainer) {
  WriteFakeSessionDocker(dir_.path(), /*start_fails=*/true);
  absl::StatusOr<std::unique_ptr<Backend>> backend = NewWorkflowBackendWith(YAML::Load(Reused(prompts_)), context_, {});
  ASSERT_TRUE(backend.ok()) << backend.status();
  std::string tail;
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"batch_size", "2"}}, &tail);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(session.status().message(), "start command docker-up failed: exit code 125");
  EXPECT_THAT(tail, HasSubstr("stderr (last 20 lines):\ndocker: Error response from daemon: pull access denied for "
                              "workflow:6."));
  EXPECT_EQ(ReadFile(dir_.path() + "/docker-state/removed"), ReadFile(dir_.path() + "/docker-state/started"));
}

}  // namespace
}  // namespace benchfleet::agent
