// What a workflow command that is a container run (`docker run [OPTIONS] IMAGE [COMMAND...]`,
// podman alike) runs, for the series' conditions and their fingerprint: the runtime and its
// version (the Workflow v6 method requires the same Docker version on every platform) and the
// image and its digest, as the runtime reports them. A fact the runtime cannot give is left out,
// with the reason beside it: never a made-up value.
// Owner: the workflow backend. ParseContainerRun is pure; ReadContainerFacts only runs the
// runtime's CLI through the CommandRunner it is given (thread-safe when that runner is).
#ifndef BENCHFLEET_AGENT_BACKENDS_WORKFLOW_CONTAINER_IMAGE_H_
#define BENCHFLEET_AGENT_BACKENDS_WORKFLOW_CONTAINER_IMAGE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/probes/command_runner.h"

namespace benchfleet::agent::workflow {

// A command line that runs a container.
struct ContainerRun {
  std::string runtime;  // "docker" or "podman": argv[0]'s file name
  std::string program;  // argv[0] as the template gives it, to ask the same runtime
  std::string image;    // the IMAGE argument as written, e.g. "workflow:6"; "" when it holds a placeholder
};

// Returns the container run of a command template's argv, nullopt when it is not one. It is one
// when argv[0]'s file name is docker or podman and, after the runtime's global options (e.g.
// --context NAME), the command is `run` or `container run`; IMAGE is the first argument after the
// run options (an option without "=" takes the next argument as its value unless it is one of
// the flags that take none, e.g. --rm, -d, -it).
std::optional<ContainerRun> ParseContainerRun(const std::vector<std::string>& argv);

// What the runtime said.
struct ContainerFacts {
  // For SessionInfo.conditions: runtime; runtime_version when the runtime gave it; image;
  // image_digest (the first repository digest, "workflow@sha256:...", else the image's id,
  // "sha256:...", for an image built locally) and image_id, when the runtime knows the image.
  std::map<std::string, std::string> conditions;
  // Why a fact is missing, for every record's params: runtime_version_error, image_digest_error.
  std::map<std::string, std::string> missing;
};

// Asks the runtime: `PROGRAM version --format {{.Server.Version}}` (podman: {{.Client.Version}},
// a local podman has no server) and `PROGRAM image inspect --format '{{.Id}}{{range
// .RepoDigests}} {{.}}{{end}}' IMAGE` (one call for the id and every repository digest; the
// image must be there already: an image `run` would pull has no digest yet, and says so). Each
// call is given timeout.
ContainerFacts ReadContainerFacts(CommandRunner* runner, const ContainerRun& run, absl::Duration timeout);

}  // namespace benchfleet::agent::workflow

#endif  // BENCHFLEET_AGENT_BACKENDS_WORKFLOW_CONTAINER_IMAGE_H_
