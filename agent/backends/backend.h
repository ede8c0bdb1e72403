// Backend: what a bench backend (llama-server, comfyui, workflow, openai) gives the runner. A
// backend measures and returns records; it never speaks gRPC, SQL or Prometheus. The runner
// (agent/runner/) owns phases, call indices, ids, pacing, the outbox and the series folder.
// A new backend is one folder under agent/backends/ (its library declared with
// benchfleet_add_backend in its CMakeLists.txt, its section's schema, its figures, its README)
// and one line, add_subdirectory, in agent/backends/CMakeLists.txt; nothing else names it.
//
// Lifecycle, per matrix combination of a series:
//   Backend::Open(combination)  -> a BackendSession (e.g. llama-server started with the mode's
//                                  arguments, /health ready, /props read)
//   session->Run(input, record)  once per run: the first after Open is the COLD run
//   session->Close()            (e.g. SIGTERM, then SIGKILL after a grace period)
// Backends and sessions are used from one thread at a time (the runner's). A stop (the agent's
// SIGTERM, a task's cancel) is BackendContext::stop: every wait of Open and Close ends at once.
#ifndef BENCHFLEET_AGENT_BACKENDS_BACKEND_H_
#define BENCHFLEET_AGENT_BACKENDS_BACKEND_H_

#include <functional>
#include <map>
#include <stop_token>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/config/allow_list.h"
#include "agent/http/http_client.h"
#include "agent/probes/command_runner.h"
#include "agent/process/child_process.h"
#include "benchfleet/v1/record.pb.h"
#include "common/env.h"
#include "common/figures.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent {

// One combination of the spec's matrix axes, e.g. {"mode": "gpu", "n_predict": "128"}. Empty
// when the spec has no matrix.
using Combination = std::map<std::string, std::string>;

// What the agent lends every backend to measure with (Envoy's Api in spirit): one of each for the
// whole agent, built from its Env by AgentServices (agent/backends/services.h) in `run` and
// `serve`, pointed at fakes by tests. A backend takes these and builds none of its own; they
// outlive it.
struct BackendServices {
  // Child processes (servers, commands). The POSIX launcher waits on the kernel, so its waits
  // are on the system clock whatever the Env's clock is.
  ProcessLauncher* launcher = nullptr;
  HttpClient* http = nullptr;      // thread-safe
  CommandRunner* tools = nullptr;  // programs on the agent's PATH (docker stats, kill)
};

// Who wrote the spec a backend is built from.
enum class SpecAuthor {
  kOperator,     // `benchfleet-agent run SPEC.yaml`: the operator of this machine
  kCoordinator,  // a coordinator's task (`serve`)
};

// What every backend gets from the agent: the injected Env (clock, files), the allow-list it
// must check every executable, model path and URL against, the services it measures with, and
// where to put its logs.
struct BackendContext {
  Env* env = nullptr;
  const AllowList* allow = nullptr;
  BackendServices services;
  // A file the spec names that the backend reads and sends on (a prompts list, a ComfyUI graph)
  // must lie in allow.workflow_dirs (AllowList::CheckInputFile) when a coordinator wrote the
  // spec, so no coordinator has an arbitrary readable file sent out; each backend says in its
  // README whether it holds the operator's own spec to it too.
  SpecAuthor spec_author = SpecAuthor::kOperator;
  // A folder of this series the backend may write to (server logs: e.g. llama-server-gpu.log).
  std::string work_dir;
  // The agent's labels (agent.yaml labels:, e.g. {"accelerator": "nvidia", "class": "a100"}), so a
  // spec sent to many machines can take a per-machine value from them (the workflow backend's
  // env: {ACCELERATOR: {label: accelerator}}).
  std::map<std::string, std::string> labels;
  // Requested when the series stops (the agent's SIGTERM or SIGINT, the task's cancel). Every wait
  // outside the timed part of a run ends at once when it is: waiting for a server to come up
  // (Open then fails and the runner records nothing for it), polls, cooldowns, back-offs; waits go
  // through Clock::WaitForStop with it. A timed run in progress is not cut (it ends by itself or
  // at its own timeout); the session's Close stops the server as usual. Never stopped when unset.
  std::stop_token stop;
  // Progress lines for the operator (stderr); never called during a timed window.
  std::function<void(std::string_view)> log;
  // Progress within a run (e.g. sampler steps of the current image): `what` is being done,
  // value of max. Called during the timed window, so it must be cheap; unset means nobody
  // watches.
  std::function<void(std::string_view what, int64_t value, int64_t max)> step_progress;
};

// What a session found out about the server it measures, for the conditions and every record.
struct SessionInfo {
  // The backend's version as the server reports it, e.g. llama-server's build_info
  // "b10587-1a2b3c4d". Goes into MachineConditions.backend_versions[backend name].
  std::string backend_version;

  // True when the server announced itself as a simulator (build_info, system_stats, model
  // metadata): every record is then marked simulated.
  bool simulated = false;

  // Facts recorded in every record's params, e.g. {"server_verbosity": "4", "n_ctx": "4096",
  // "model_path": "...", "modes_switchable": "false"}.
  std::map<std::string, std::string> params;

  // Facts the server reports about itself that change what a run measures (the devices it found,
  // its framework's version, a container image's digest), for the series' conditions and their
  // fingerprint: MachineConditions.backend_attributes["<backend name>.<key>"], e.g.
  // {"devices": "CUDA0 (NVIDIA A100-SXM4-80GB, 80562 MiB free)"}. The runner takes them from the
  // first session of a series and notes a later session whose facts differ.
  std::map<std::string, std::string> conditions;
};

// Which run this is, as the runner counts it.
struct RunInput {
  v1::Phase phase = v1::PHASE_UNSPECIFIED;
  uint32_t call_index = 0;  // 1-based within combination and phase
  uint32_t repetition = 0;  // 1-based
  // For VALIDATION runs of backends with several input sets (e.g. ComfyUI seeds): which one.
  uint32_t input_index = 0;
};

class BackendSession {
 public:
  virtual ~BackendSession() = default;

  virtual const SessionInfo& info() const = 0;

  // Performs one run and fills what the backend measured: start_time, end_time, wall_duration
  // (monotonic, client side), params, metrics, memory, outputs, the flags the backend itself
  // sees (e.g. PROMPT_CACHE_USED) and status (CODE_OK, or CODE_FAILED with message and
  // log_tail). Never throws; a failure is a FAILED record. The runner fills ids, phase,
  // call_index, matrix, repetition, simulated and provenance.
  virtual void Run(const RunInput& input, v1::RunRecord* record) = 0;

  // False once the session cannot run any more (e.g. the server died): the runner stops this
  // combination and records why (Run's last FAILED record says it).
  virtual bool alive() const = 0;

  // Stops what Open started. Idempotent; also called by the destructor.
  virtual absl::Status Close() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The backend's name as in specs and records, e.g. "llama-server".
  virtual std::string name() const = 0;

  // The backend's declaration of its figures (a figures.h in its folder, common/figures.h): the
  // runner stamps it on every record. Its main figure (headline 1), when higher is better, is the
  // one whose fall below the first warm call marks THROUGHPUT_DROP.
  virtual FigureDeclarations figures() const = 0;

  // The matrix axes this backend understands (e.g. "mode", "n_predict"); the runner refuses a
  // spec whose matrix names another.
  virtual std::vector<std::string> matrix_axes() const = 0;

  // The values of an axis when the spec's matrix does not list it (e.g. every mode of the
  // llama-server section, in order); empty when the axis has no default.
  virtual std::vector<std::string> default_axis_values(const std::string& axis) const = 0;

  // Checks one combination of the matrix before anything of the series runs (e.g. a mode the
  // section does not define): INVALID_ARGUMENT naming the axis and value. The runner calls it for
  // every combination up front, so a typo fails at start-up rather than as a FAILED run hours in.
  // The default accepts every combination.
  virtual absl::Status CheckCombination(const Combination& combination) const { return absl::OkStatus(); }

  // Starts measuring one combination. On failure (binary missing, server exited while loading,
  // /health never ready, ...) returns the reason and fills *log_tail with the server's last log
  // lines when there are any; the runner then records one FAILED run for the combination.
  virtual absl::StatusOr<std::unique_ptr<BackendSession>> Open(const Combination& combination,
                                                               std::string* log_tail) = 0;
};

// Builds a backend from its section of the spec (the mapping under the backend's name). Checks
// the section (INVALID_ARGUMENT naming the key and its line) and the allow-list
// (PERMISSION_DENIED) before anything runs.
using BackendFactory = std::function<absl::StatusOr<std::unique_ptr<Backend>>(
    const YAML::Node& section, const BackendContext& context)>;

// Returns the factory of a backend by name; NOT_FOUND listing the known backends otherwise.
absl::StatusOr<BackendFactory> FindBackend(const std::string& name);

// Returns the names of every registered backend, sorted.
std::vector<std::string> BackendNames();

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_BACKENDS_BACKEND_H_
