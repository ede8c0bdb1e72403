#include "agent/backends/workflow/workflow_backend.h"

#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/backends/workflow/container_image.h"
#include "agent/backends/workflow/container_stats.h"
#include "agent/backends/workflow/figures.h"
#include "agent/backends/workflow/workflow_config.h"
#include "agent/backends/workflow/workflow_results.h"
#include "common/simulated.h"
#include "common/hashing.h"
#include "common/proto_time.h"
#include "common/string_views.h"

namespace benchfleet::agent {
namespace {

using workflow::ContainerLifecycle;
using workflow::MemoryMethod;
using workflow::WorkflowConfig;

constexpr char kBackendName[] = "workflow";
constexpr size_t kLogTailLines = 20;
// For each question to the container runtime at Open (its version, the image's digest).
constexpr absl::Duration kRuntimeTimeout = absl::Seconds(15);
constexpr char kRusageSource[] =
    "wait4 ru_maxrss of the children: the largest process of the tree, not their sum";

std::string Seconds(absl::Duration d) { return absl::StrFormat("%g s", absl::ToDoubleSeconds(d)); }

std::string PhaseName(v1::Phase phase) {
  switch (phase) {
    case v1::PHASE_VALIDATION: return "validation";
    case v1::PHASE_COLD: return "cold";
    case v1::PHASE_WARM: return "warm";
    default: return "run";
  }
}

// State the backend and its sessions share (a session may outlive the backend).
struct Shared {
  WorkflowConfig config;
  BackendContext context;
  ProcessLauncher* launcher = nullptr;  // the agent's (BackendContext::services)
  CommandRunner* tools = nullptr;       // docker stats, docker kill: the agent's
  std::function<absl::StatusOr<std::unique_ptr<MemoryCgroups>>()> find_cgroups;
  // Found at the first run that wants one; cgroups_error says why there are none.
  bool cgroups_looked = false;
  std::unique_ptr<MemoryCgroups> cgroups;
  std::string cgroups_error;
  int cgroup_counter = 0;
  int container_counter = 0;
};

// The program that reads, kills and removes the command's container: the start command's
// runtime when the container is reused, else the command's (docker from PATH when neither is).
std::string RuntimeProgram(const WorkflowConfig& config) {
  return workflow::DockerProgramFor(config.container == ContainerLifecycle::kReuse ? config.start.argv[0]
                                                                                   : config.command.argv[0]);
}

// The start of every file name of a combination: "workflow-nvidia" or "workflow-nvidia-b8".
std::string FilePrefix(const WorkflowConfig& config, const std::string& batch_size) {
  return absl::StrCat("workflow-", config.mode, batch_size.empty() ? "" : "-b", batch_size);
}

// Returns base, or base.2, base.3, ... : the first whose files do not exist yet (never overwrite
// those of an earlier run).
std::string FreshBase(Env* env, const std::string& base, std::initializer_list<const char*> suffixes) {
  std::string out = base;
  for (int i = 2;; ++i) {
    const bool taken = std::any_of(suffixes.begin(), suffixes.end(),
                                   [&](const char* suffix) { return env->FileExists(out + suffix); });
    if (!taken) return out;
    out = absl::StrCat(base, ".", i);
  }
}

// Returns the last lines of a command's two logs, for a FAILED record or a failed Open.
std::string LogTails(const std::string& stdout_path, const std::string& stderr_path) {
  std::string tail;
  for (const auto& [name, path] : {std::pair<const char*, std::string>{"stdout", stdout_path},
                                   std::pair<const char*, std::string>{"stderr", stderr_path}}) {
    if (path.empty()) continue;
    absl::StatusOr<std::string> lines = LogTail(path, kLogTailLines);
    if (!lines.ok()) continue;
    absl::StrAppend(&tail, tail.empty() ? "" : "\n", name, " (last ", kLogTailLines, " lines):\n", *lines);
  }
  return tail;
}

class WorkflowSession : public BackendSession {
 public:
  // batch_size: the combination's ("" when none); container: the session's container when it is
  // reused (started by Open, removed by Close), "" when every run names its own.
  WorkflowSession(std::shared_ptr<Shared> shared, SessionInfo info, std::string batch_size, std::string container)
      : s_(std::move(shared)), info_(std::move(info)), batch_size_(std::move(batch_size)),
        container_(std::move(container)) {}
  ~WorkflowSession() override { (void)Close(); }

  const SessionInfo& info() const override { return info_; }
  // Every run is a fresh command; a reused container ends when a run is killed at its deadline.
  bool alive() const override { return !container_lost_; }

  absl::Status Close() override {
    if (container_.empty() || removed_) return absl::OkStatus();
    removed_ = true;
    const std::vector<std::string> argv = {RuntimeProgram(s_->config), "rm", "-f", container_};
    absl::StatusOr<CommandOutput> out = s_->tools->Run(argv, s_->config.stop_grace + absl::Seconds(10));
    if (!out.ok()) {
      return absl::Status(out.status().code(),
                          absl::StrCat("removing container ", container_, ": ", out.status().message()));
    }
    if (out->exit_code != 0) {
      return absl::InternalError(absl::StrCat("removing container ", container_, ": ", DescribeFailure(argv, *out)));
    }
    return absl::OkStatus();
  }

  void Run(const RunInput& input, v1::RunRecord* record) override {
    const WorkflowConfig& config = s_->config;
    Env* env = s_->context.env;
    Clock& clock = env->clock();
    record->set_backend(kBackendName);
    record->set_mode(config.mode);
    auto& params = *record->mutable_params();
    for (const auto& [key, value] : config.env) params[absl::StrCat("env.", key)] = value;
    for (const auto& [key, value] : config.env_sources) params[absl::StrCat("env_source.", key)] = value;
    if (!batch_size_.empty()) params["batch_size"] = batch_size_;

    const std::string base = FreshBase(
        env,
        JoinPath(s_->context.work_dir, absl::StrCat(FilePrefix(config, batch_size_), "-r", input.repetition, "-",
                                                     PhaseName(input.phase), "-", input.call_index)),
        {".results.json", ".stdout.log"});
    output_path_ = base + ".results.json";
    stdout_path_ = base + ".stdout.log";
    stderr_path_ = base + ".stderr.log";
    params["results_file"] = output_path_;
    params["stdout_log"] = stdout_path_;
    params["stderr_log"] = stderr_path_;

    auto fail_now = [&](std::string message) {
      const absl::Time now = clock.Now();
      SetTimestamp(now, record->mutable_start_time());
      SetTimestamp(now, record->mutable_end_time());
      Fail(record, std::move(message));
    };
    // A container the command starts gets a fresh name, so the agent can find its memory; a reused
    // one is the session's.
    std::string container;
    if (config.names_container) {
      container = container_.empty() ? workflow::ContainerName(::getpid(), clock.Now(), ++s_->container_counter)
                                     : container_;
      params["container"] = container;
      params["container_lifecycle"] = config.container == ContainerLifecycle::kReuse ? "reuse" : "restart";
    }
    absl::StatusOr<std::vector<std::string>> argv =
        workflow::FillCommand(config.command, config.config, config.prompts, output_path_, container, batch_size_);
    if (!argv.ok()) return fail_now(std::string(argv.status().message()));
    params["command_line"] = absl::StrJoin(*argv, " ");

    // Memory: the container's from its runtime when the agent named one (the container runs in
    // the runtime's cgroup, not under the agent: a cgroup or rusage would only see the docker
    // CLI); else a cgroup of its own where the agent can make one; else rusage.
    const bool sample_container = config.names_container && (config.memory == MemoryMethod::kAuto ||
                                                             config.memory == MemoryMethod::kContainer);
    std::unique_ptr<workflow::ContainerMemorySampler> sampler;
    if (sample_container) {
      sampler = std::make_unique<workflow::ContainerMemorySampler>(s_->tools, &clock, RuntimeProgram(config), container,
                                                                   config.container_sample_period);
    }
    std::unique_ptr<MemoryCgroup> cgroup;
    if (config.memory == MemoryMethod::kCgroup || (config.memory == MemoryMethod::kAuto && !sample_container)) {
      absl::StatusOr<std::unique_ptr<MemoryCgroup>> made = MakeCgroup();
      if (made.ok()) {
        cgroup = std::move(*made);
      } else if (config.memory == MemoryMethod::kCgroup) {
        return fail_now(absl::StrCat("workflow.memory is cgroup but the agent cannot make one: ", made.status().message()));
      } else {
        params["memory_cgroup_unavailable"] = std::string(made.status().message());
      }
    }

    ProcessOptions options;
    options.argv = *argv;
    options.env = workflow::CommandEnv(config.command, config.env, batch_size_);
    options.log_path = stdout_path_;
    options.stderr_path = stderr_path_;
    if (cgroup != nullptr) options.cgroup_procs_path = cgroup->procs_path();

    const absl::Time start_time = clock.Now();
    const absl::Duration started = clock.Monotonic();
    absl::StatusOr<std::unique_ptr<Process>> process = s_->launcher->Start(options);
    if (!process.ok()) return fail_now(absl::StrCat("cannot start command ", config.command_name, ": ", process.status().message()));
    if (sampler != nullptr) sampler->Start();
    absl::StatusOr<ExitStatus> exit = (*process)->Wait(config.deadline);
    bool killed = false;
    if (!exit.ok()) {
      // The whole tree: the process group, then whatever left it but stayed in the cgroup.
      exit = (*process)->Terminate(config.stop_grace);
      if (cgroup != nullptr) cgroup->KillAll();
      killed = true;
    }
    std::optional<workflow::ContainerPeak> container_peak;
    if (sampler != nullptr) container_peak = sampler->Stop();
    if (killed && !container.empty()) {
      // The container lives in the runtime, not in the command's process group: stop it too. A
      // reused one is then gone for the session's later runs.
      container_lost_ = !container_.empty();
      const std::vector<std::string> kill_argv = {RuntimeProgram(config), "kill", container};
      absl::StatusOr<CommandOutput> killed_container = s_->tools->Run(kill_argv, config.stop_grace + absl::Seconds(10));
      if (!killed_container.ok()) {
        params["container_kill"] = std::string(killed_container.status().message());
      } else if (killed_container->exit_code != 0) {
        params["container_kill"] = DescribeFailure(kill_argv, *killed_container);
      }
    }
    const absl::Duration wall = clock.Monotonic() - started;
    SetTimestamp(start_time, record->mutable_start_time());
    SetTimestamp(clock.Now(), record->mutable_end_time());
    SetDuration(wall, record->mutable_wall_duration());

    if (container_peak.has_value()) {
      if (container_peak->peak_bytes.has_value()) {
        v1::MemoryFigure* figure = record->add_memory();
        // The scope is the class of what is measured, the same for every run; the run's own
        // container name goes into the source (5 repetitions: one column of 5 values).
        figure->set_kind(v1::MEMORY_KIND_CONTAINER_PEAK);
        figure->set_scope(workflow::kContainerScope);
        figure->set_bytes(*container_peak->peak_bytes);
        figure->set_source(absl::StrCat(
            "docker stats --no-stream MemUsage of container ", container, ", sampled: the highest of ",
            container_peak->samples,
            " samples taken every ", Seconds(config.container_sample_period),
            " or more while the command ran; a spike between two samples is missed, so the true peak can be higher"));
        params["memory_samples"] = absl::StrCat(container_peak->samples, " of ", container_peak->attempts);
      } else {
        params["memory_container_error"] =
            absl::StrCat("no docker stats sample of container ", container, " in ", container_peak->attempts,
                         " attempts", container_peak->last_error.empty() ? "" : ": ", container_peak->last_error);
      }
    } else if (cgroup != nullptr) {
      absl::StatusOr<uint64_t> peak = cgroup->PeakBytes();
      if (peak.ok()) {
        v1::MemoryFigure* figure = record->add_memory();
        figure->set_kind(v1::MEMORY_KIND_CONTAINER_PEAK);
        figure->set_scope(workflow::kCgroupScope);
        figure->set_bytes(*peak);
        figure->set_source(absl::StrCat(cgroup->source(), " (", cgroup->scope(), ")"));
      } else {
        params["memory_peak_error"] = std::string(peak.status().message());
      }
      if (absl::Status removed = cgroup->Remove(); !removed.ok()) {
        params["memory_cgroup_left"] = std::string(removed.message());
      }
    } else if (std::optional<uint64_t> rss = (*process)->reaped_max_rss_bytes(); rss.has_value()) {
      v1::MemoryFigure* figure = record->add_memory();
      figure->set_kind(v1::MEMORY_KIND_PROCESS_PEAK_RSS);
      figure->set_scope(absl::StrCat("command ", config.command_name, " (largest process of its tree)"));
      figure->set_bytes(*rss);
      figure->set_source(kRusageSource);
    }

    if (killed) {
      return Fail(record, absl::StrCat("command ", config.command_name, " killed at its deadline of ",
                                       Seconds(config.deadline), " (", exit->ToString(), ")"));
    }
    if (!exit->ok()) {
      return Fail(record, absl::StrCat("command ", config.command_name, " failed: ", exit->ToString()));
    }
    absl::StatusOr<std::string> text = env->ReadFile(output_path_);
    if (!text.ok()) {
      return Fail(record, absl::StrCat("command ", config.command_name, " exited 0 but wrote no results file ",
                                       output_path_));
    }
    absl::StatusOr<workflow::WorkflowResults> results = workflow::ParseResults(*text, config.results);
    if (!results.ok()) {
      return Fail(record, absl::StrCat("results file ", output_path_, ": ", results.status().message()));
    }
    for (const v1::RequestTiming& r : results->requests) *record->add_requests() = r;
    for (v1::Metric& m : workflow::SummaryMetrics(*results, wall)) *record->add_metrics() = std::move(m);
    params["throughput_basis"] = workflow::ThroughputBasis(*results);
    if (!results->tool.empty()) params["tool"] = results->tool;
    v1::Output* output = record->add_outputs();
    output->set_kind("application/json");
    output->set_name("results");
    output->set_sha256(Sha256Hex(*text));
    output->set_size_bytes(text->size());
    // The runner reads the session's info after each run: a stand-in marks every record, by its
    // results' "simulated" or by a tool name that says SIMULATED.
    const bool simulated = results->simulated || SaysSimulated(results->tool);
    info_.simulated = info_.simulated || simulated;
    record->set_simulated(record->simulated() || simulated);
    record->mutable_status()->set_code(v1::RunStatus::CODE_OK);
  }

 private:
  absl::StatusOr<std::unique_ptr<MemoryCgroup>> MakeCgroup() {
    if (!s_->cgroups_looked) {
      s_->cgroups_looked = true;
      absl::StatusOr<std::unique_ptr<MemoryCgroups>> found = s_->find_cgroups();
      if (found.ok()) {
        s_->cgroups = std::move(*found);
      } else {
        s_->cgroups_error = std::string(found.status().message());
      }
    }
    if (s_->cgroups == nullptr) return absl::FailedPreconditionError(s_->cgroups_error);
    return s_->cgroups->Create(absl::StrCat("benchfleet-workflow-", ::getpid(), "-", ++s_->cgroup_counter));
  }

  void Fail(v1::RunRecord* record, std::string message) {
    v1::RunStatus* status = record->mutable_status();
    status->set_code(v1::RunStatus::CODE_FAILED);
    status->set_message(std::move(message));
    status->set_log_tail(LogTails(stdout_path_, stderr_path_));
  }

  std::shared_ptr<Shared> s_;
  SessionInfo info_;
  const std::string batch_size_;
  const std::string container_;
  bool container_lost_ = false;
  bool removed_ = false;
  std::string output_path_;
  std::string stdout_path_;
  std::string stderr_path_;
};

class WorkflowBackend : public Backend {
 public:
  explicit WorkflowBackend(std::shared_ptr<Shared> shared) : s_(std::move(shared)) {}

  std::string name() const override { return kBackendName; }
  FigureDeclarations figures() const override { return workflow::kFigures; }
  std::vector<std::string> matrix_axes() const override { return {"mode", workflow::kBatchSizeAxis}; }
  std::vector<std::string> default_axis_values(const std::string& axis) const override {
    if (axis == "mode") return {s_->config.mode};
    if (axis == workflow::kBatchSizeAxis && s_->config.batch_size.has_value()) {
      return {absl::StrCat(*s_->config.batch_size)};
    }
    return {};
  }

  absl::Status CheckCombination(const Combination& combination) const override {
    const WorkflowConfig& config = s_->config;
    if (auto it = combination.find("mode"); it != combination.end() && it->second != config.mode) {
      return absl::InvalidArgumentError(absl::StrCat("unknown mode ", it->second, ": the workflow section's mode is ",
                                                     config.mode, " (workflow.mode, else env ACCELERATOR)"));
    }
    if (auto it = combination.find(workflow::kBatchSizeAxis); it != combination.end()) {
      if (absl::StatusOr<int> value = workflow::ParseBatchSize(it->second); !value.ok()) return value.status();
      if (!config.takes_batch_size()) {
        return absl::InvalidArgumentError(absl::StrCat("batch_size ", it->second, ": command ", config.command_name,
                                                       " takes no batch size (no {batch_size} in its argv, no ",
                                                       workflow::kBatchSizeEnv, " in its env)"));
      }
    } else if (config.batch_size_placeholder) {
      return absl::InvalidArgumentError(absl::StrCat("command ", config.command_name,
                                                     " holds {batch_size}: give workflow.batch_size or a matrix axis "
                                                     "batch_size"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<BackendSession>> Open(const Combination& combination, std::string* log_tail) override {
    if (absl::Status s = CheckCombination(combination); !s.ok()) return s;
    const WorkflowConfig& config = s_->config;
    std::string batch_size;
    if (auto it = combination.find(workflow::kBatchSizeAxis); it != combination.end()) {
      batch_size = absl::StrCat(*workflow::ParseBatchSize(it->second));  // "08" is 8
    }
    Env* env = s_->context.env;
    if (!env->FileExists(config.command.argv[0])) {
      return absl::NotFoundError(absl::StrCat("command ", config.command_name, ": program ", config.command.argv[0],
                                              " does not exist"));
    }
    const bool reuse = config.container == ContainerLifecycle::kReuse;
    if (reuse && !env->FileExists(config.start.argv[0])) {
      return absl::NotFoundError(absl::StrCat("start command ", config.start_name, ": program ", config.start.argv[0],
                                              " does not exist"));
    }
    if (s_->context.work_dir.empty()) return absl::FailedPreconditionError("no work_dir for the command's files");
    if (absl::Status s = env->CreateDirs(s_->context.work_dir); !s.ok()) return s;
    SessionInfo info;
    info.backend_version = absl::StrCat(config.command_name, " (", config.command.argv[0], ")");
    info.params["command"] = config.command_name;
    if (reuse) info.params["start_command"] = config.start_name;
    info.params["deadline_seconds"] = absl::StrFormat("%g", absl::ToDoubleSeconds(config.deadline));
    for (const auto& [key, path] : {std::pair<const char*, std::string>{"prompts", config.prompts},
                                    std::pair<const char*, std::string>{"config", config.config}}) {
      if (path.empty()) continue;
      absl::StatusOr<std::string> text = env->ReadFile(path);
      if (!text.ok()) {
        return absl::Status(text.status().code(), absl::StrCat("cannot read workflow.", key, ": ", text.status().message()));
      }
      info.params[absl::StrCat(key, "_sha256")] = Sha256Hex(*text);
      if (std::string_view(key) == "prompts") {
        size_t lines = 0;
        for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipWhitespace())) {
          (void)line;
          ++lines;
        }
        info.params["prompts_count"] = absl::StrCat(lines);
      }
    }
    // A container run: what it runs is the runtime's version and the image's digest, so they are
    // part of the series' conditions (and their fingerprint); a fact the runtime cannot give is
    // missing, its reason in every record's params.
    if (std::optional<workflow::ContainerRun> run =
            workflow::ParseContainerRun(reuse ? config.start.argv : config.command.argv)) {
      workflow::ContainerFacts facts = workflow::ReadContainerFacts(s_->tools, *run, kRuntimeTimeout);
      info.conditions = std::move(facts.conditions);
      // A fake runtime or image announces itself like any simulator.
      for (const auto& [key, value] : info.conditions) {
        if (info.simulated || !SaysSimulated(value)) continue;
        info.simulated = true;
        info.params["simulated_by"] = absl::StrCat(key, ": ", value);
      }
      for (auto& [key, reason] : facts.missing) {
        if (s_->context.log) s_->context.log(absl::StrCat("workflow: ", key, ": ", reason));
        info.params[key] = std::move(reason);
      }
    }
    if (!batch_size.empty()) info.params["batch_size"] = batch_size;
    std::string container;
    if (reuse) {
      absl::StatusOr<std::string> started = StartContainer(batch_size, log_tail);
      if (!started.ok()) return started.status();
      container = std::move(*started);
    }
    return std::unique_ptr<BackendSession>(
        new WorkflowSession(s_, std::move(info), std::move(batch_size), std::move(container)));
  }

 private:
  // Starts the session's container with the start command (it must end, e.g. `docker run -d`
  // returns once the container runs): its name, or why not (the start command's log tails in
  // *log_tail), after removing whatever it left.
  absl::StatusOr<std::string> StartContainer(const std::string& batch_size, std::string* log_tail) {
    const WorkflowConfig& config = s_->config;
    Env* env = s_->context.env;
    const std::string container = workflow::ContainerName(::getpid(), env->clock().Now(), ++s_->container_counter);
    absl::StatusOr<std::vector<std::string>> argv =
        workflow::FillCommand(config.start, config.config, config.prompts, "", container, batch_size);
    if (!argv.ok()) return argv.status();
    const std::string base =
        FreshBase(env, JoinPath(s_->context.work_dir, absl::StrCat(FilePrefix(config, batch_size), "-container")),
                  {".stdout.log"});
    ProcessOptions options;
    options.argv = *argv;
    options.env = workflow::CommandEnv(config.start, config.env, batch_size);
    options.log_path = base + ".stdout.log";
    options.stderr_path = base + ".stderr.log";
    if (s_->context.log) {
      s_->context.log(absl::StrCat("workflow: starting container ", container, ": ", absl::StrJoin(*argv, " ")));
    }
    absl::StatusOr<std::unique_ptr<Process>> process = s_->launcher->Start(options);
    if (!process.ok()) {
      return absl::Status(process.status().code(), absl::StrCat("cannot start command ", config.start_name, ": ",
                                                                process.status().message()));
    }
    // Waited in slices, so a stop (the agent's SIGTERM, the task's cancel) ends the wait at once.
    constexpr absl::Duration kStopSlice = absl::Milliseconds(100);
    absl::StatusOr<ExitStatus> exit = absl::DeadlineExceededError("not waited");
    for (absl::Duration waited; !exit.ok() && waited < config.deadline && !s_->context.stop.stop_requested();
         waited += kStopSlice) {
      exit = (*process)->Wait(std::min(kStopSlice, config.deadline - waited));
    }
    std::string failure;
    if (!exit.ok() && s_->context.stop.stop_requested()) {
      exit = (*process)->Terminate(config.stop_grace);
      failure = absl::StrCat("stopped while start command ", config.start_name, " ran (",
                             exit.ok() ? exit->ToString() : "not stopped", ")");
    } else if (!exit.ok()) {
      exit = (*process)->Terminate(config.stop_grace);
      failure = absl::StrCat("start command ", config.start_name, " did not end within its deadline of ",
                             Seconds(config.deadline), " (", exit.ok() ? exit->ToString() : "not stopped", ")");
    } else if (!exit->ok()) {
      failure = absl::StrCat("start command ", config.start_name, " failed: ", exit->ToString());
    }
    if (failure.empty()) return container;
    if (log_tail != nullptr) *log_tail = LogTails(options.log_path, options.stderr_path);
    // A container may exist (created, not started): never leave one behind.
    (void)s_->tools->Run({RuntimeProgram(config), "rm", "-f", container}, config.stop_grace + absl::Seconds(10));
    return absl::FailedPreconditionError(failure);
  }

  std::shared_ptr<Shared> s_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> NewWorkflowBackendWith(const YAML::Node& section,
                                                                const BackendContext& context,
                                                                WorkflowDependencies dependencies) {
  if (context.env == nullptr || context.allow == nullptr) {
    return absl::InvalidArgumentError("the workflow backend needs an Env and an allow-list");
  }
  absl::StatusOr<WorkflowConfig> config = workflow::ParseWorkflowSection(section, *context.allow, context.labels);
  if (!config.ok()) return config.status();
  if (context.services.launcher == nullptr || context.services.tools == nullptr) {
    return absl::FailedPreconditionError(
        "the workflow backend needs the agent's process launcher and command runner (BackendContext::services)");
  }
  auto shared = std::make_shared<Shared>();
  shared->config = std::move(*config);
  shared->context = context;
  shared->tools = context.services.tools;
  shared->launcher = context.services.launcher;
  shared->find_cgroups = dependencies.cgroups ? std::move(dependencies.cgroups)
                                              : []() -> absl::StatusOr<std::unique_ptr<MemoryCgroups>> {
    absl::StatusOr<CgroupMemoryHierarchy> h = DetectMemoryHierarchy();
    if (!h.ok()) return h.status();
    return NewMemoryCgroups(*h);
  };
  return std::unique_ptr<Backend>(new WorkflowBackend(std::move(shared)));
}

absl::StatusOr<std::unique_ptr<Backend>> NewWorkflowBackend(const YAML::Node& section, const BackendContext& context) {
  return NewWorkflowBackendWith(section, context, WorkflowDependencies{});
}

}  // namespace benchfleet::agent
