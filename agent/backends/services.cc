#include "agent/backends/services.h"

#include "common/clock.h"

namespace benchfleet::agent {

AgentServices::AgentServices(Env* env)
    : launcher_(NewPosixProcessLauncher(&SystemClock(), env)),
      http_(NewCurlHttpClient()),
      tools_(NewPosixCommandRunner()) {
  services_.launcher = launcher_.get();
  services_.http = http_.get();
  services_.tools = tools_.get();
}

}  // namespace benchfleet::agent
