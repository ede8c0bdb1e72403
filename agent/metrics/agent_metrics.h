// What the agent counts about itself for Prometheus (the catalogue, with every name and label, is
// the "Agent" section of coordinator/metrics/README.md). An interface so that uplink/ and tasks/
// never see prometheus-cpp; PrometheusAgentMetrics (prometheus_agent_metrics.h) is the real one,
// served by `benchfleet-agent serve --metrics-listen`. The outbox depth is not reported through
// it: the real implementation reads the outbox itself at every scrape.
// Implementations are thread-safe and return at once (the uplink calls them under its lock).
#ifndef BENCHFLEET_AGENT_METRICS_AGENT_METRICS_H_
#define BENCHFLEET_AGENT_METRICS_AGENT_METRICS_H_

#include <cstdint>
#include <string_view>

namespace benchfleet::agent {

class AgentMetrics {
 public:
  virtual ~AgentMetrics() = default;

  // A stream to the coordinator was accepted (its Welcome arrived); `reconnect` when it is not
  // the first one of this process.
  virtual void CoordinatorConnected(bool reconnect) = 0;
  // The accepted stream ended (broken, closed, or the agent stopping).
  virtual void CoordinatorDisconnected() = 0;

  // `count` records were written on a stream (re-sends after a reconnect included).
  virtual void RecordsSent(uint64_t count) = 0;

  // A coordinator's task was accepted and now runs; `task` is its spec's task name (bounded: the
  // tasks in use, never a task id). One task runs at a time.
  virtual void TaskStarted(std::string_view task) = 0;
  // The task that runs ended (finished, failed or cancelled).
  virtual void TaskEnded() = 0;
};

// Counts nothing: the default of the uplink and the executor when no metrics are served.
class NullAgentMetrics final : public AgentMetrics {
 public:
  void CoordinatorConnected(bool) override {}
  void CoordinatorDisconnected() override {}
  void RecordsSent(uint64_t) override {}
  void TaskStarted(std::string_view) override {}
  void TaskEnded() override {}

  // Returns the shared instance (stateless).
  static NullAgentMetrics* Get() {
    static NullAgentMetrics instance;
    return &instance;
  }
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_METRICS_AGENT_METRICS_H_
