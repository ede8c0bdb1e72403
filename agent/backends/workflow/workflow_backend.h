// The workflow backend: runs a command the operator allow-listed (allow.commands: e.g. a
// benchmark tool, or a `docker run ...` line) once per run, with its placeholders filled
// ({config}, {prompts}, {output}, {container}) and its environment (e.g. ACCELERATOR), kills its
// whole process tree at the run's deadline, measures its wall time and peak memory (a container it
// named: docker stats sampled, CONTAINER_PEAK; else a cgroup of its own where the agent can make
// one: CONTAINER_PEAK; else wait4's ru_maxrss: PROCESS_PEAK_RSS), and reads
// the results file it wrote into one record with every request's timing. See README.md here.
// Owner: the workflow backend. Used from one thread at a time (the runner's).
#ifndef BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_BACKEND_H_
#define BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_BACKEND_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "agent/backends/backend.h"
#include "agent/probes/command_runner.h"
#include "agent/process/cgroup_memory.h"
#include "agent/process/child_process.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent {

// Builds the backend from the `workflow:` section (see workflow/workflow_config.h for the keys
// and errors). Starts nothing.
absl::StatusOr<std::unique_ptr<Backend>> NewWorkflowBackend(const YAML::Node& section, const BackendContext& context);

// Settings for tests (the launcher and the command runner are BackendContext::services); an
// unset member takes the default.
struct WorkflowDependencies {
  // Default: the host's memory hierarchy (DetectMemoryHierarchy), found at the first run.
  std::function<absl::StatusOr<std::unique_ptr<MemoryCgroups>>()> cgroups;
};

absl::StatusOr<std::unique_ptr<Backend>> NewWorkflowBackendWith(const YAML::Node& section,
                                                                const BackendContext& context,
                                                                WorkflowDependencies dependencies);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_BACKEND_H_
