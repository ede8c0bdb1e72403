// AgentServices: the one set of BackendServices (backend.h) of an agent process, built from its
// Env: the POSIX process launcher, the libcurl HTTP client, the command runner on the agent's
// PATH. `run` and `serve` build one and hand its services() to every backend they build; tests
// that measure real child processes and servers build one too. Thread-safe, as its services are.
#ifndef BENCHFLEET_AGENT_BACKENDS_SERVICES_H_
#define BENCHFLEET_AGENT_BACKENDS_SERVICES_H_

#include <memory>

#include "agent/backends/backend.h"
#include "common/env.h"

namespace benchfleet::agent {

class AgentServices {
 public:
  // env reads /proc for the launcher; it must outlive this object.
  explicit AgentServices(Env* env);
  AgentServices(const AgentServices&) = delete;
  AgentServices& operator=(const AgentServices&) = delete;

  // Valid while this object lives.
  const BackendServices& services() const { return services_; }

 private:
  std::unique_ptr<ProcessLauncher> launcher_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<CommandRunner> tools_;
  BackendServices services_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_BACKENDS_SERVICES_H_
