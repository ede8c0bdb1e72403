// NewEchoBackend: the example backend (README.md). Each run copies the section's text `repeat`
// times in memory, timed by the context's clock.
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_EXAMPLE_BACKEND_ECHO_ECHO_BACKEND_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_EXAMPLE_BACKEND_ECHO_ECHO_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "agent/backends/backend.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent {

// INVALID_ARGUMENT naming the key and its line for a bad section.
absl::StatusOr<std::unique_ptr<Backend>> NewEchoBackend(const YAML::Node& section, const BackendContext& context);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_EXAMPLE_BACKEND_ECHO_ECHO_BACKEND_H_
