// AgentMetrics on a prometheus-cpp Registry, and the HTTP endpoint that serves it
// (`benchfleet-agent serve --metrics-listen HOST:PORT`, GET /metrics). The only place the agent
// touches prometheus-cpp. The outbox depth is read from the outbox at every scrape, so it is
// exact whenever Prometheus looks. Owned by the serve command (or a test); thread-safe
// (prometheus-cpp counters and gauges are atomic; the current task is guarded by a mutex).
#ifndef BENCHFLEET_AGENT_METRICS_PROMETHEUS_AGENT_METRICS_H_
#define BENCHFLEET_AGENT_METRICS_PROMETHEUS_AGENT_METRICS_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/metrics/agent_metrics.h"
#include "agent/outbox/record_queue.h"

namespace prometheus {
class Collectable;
class Counter;
class Exposer;
class Gauge;
class Registry;
struct MetricFamily;
template <typename T>
class Family;
}  // namespace prometheus

namespace benchfleet::agent {

class PrometheusAgentMetrics final : public AgentMetrics {
 public:
  // Every family exists from now on, at 0 (benchfleet_agent_current_task has no sample until a
  // task runs). `outbox` is read at every scrape; it must outlive this object.
  explicit PrometheusAgentMetrics(RecordQueue* outbox);
  ~PrometheusAgentMetrics() override;
  PrometheusAgentMetrics(const PrometheusAgentMetrics&) = delete;
  PrometheusAgentMetrics& operator=(const PrometheusAgentMetrics&) = delete;

  void CoordinatorConnected(bool reconnect) override;
  void CoordinatorDisconnected() override;
  void RecordsSent(uint64_t count) override;
  void TaskStarted(std::string_view task) override;
  void TaskEnded() override;

  // The agent certificate's expiry (benchfleet_agent_certificate_expiry_timestamp_seconds, Unix
  // seconds), set by serve at start and after each renewal check; nullopt (no certificate:
  // plaintext on loopback) leaves the family without a sample.
  void SetCertificateExpiry(std::optional<absl::Time> not_after);

  // Returns every family as a scrape sees it, the outbox depth read now (tests: no HTTP).
  std::vector<prometheus::MetricFamily> Collect() const;

  // Returns what GET /metrics answers: the Prometheus text format of Collect().
  std::string Exposition() const;

 private:
  friend class AgentMetricsEndpoint;
  class ScrapeView;  // the Collectable an Exposer serves: reads the outbox, then the registry

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<ScrapeView> scrape_view_;
  prometheus::Gauge* connected_;
  prometheus::Counter* reconnects_;
  prometheus::Counter* records_sent_;
  prometheus::Gauge* task_running_;
  prometheus::Family<prometheus::Gauge>* current_task_family_;
  prometheus::Family<prometheus::Gauge>* certificate_expiry_family_;

  std::mutex mu_;
  // The sample of the task now running in current_task_family_; nullptr when none runs.
  prometheus::Gauge* current_task_ ABSL_GUARDED_BY(mu_) = nullptr;
  prometheus::Gauge* certificate_expiry_ = nullptr;  // guarded by mu_; nullptr: no sample
};

// Serves a PrometheusAgentMetrics on http://ADDRESS/metrics until destroyed (about 2 s: the
// HTTP server's shutdown).
class AgentMetricsEndpoint {
 public:
  // Binds `address`, HOST:PORT with HOST an address of this machine (127.0.0.1, 0.0.0.0, [::1],
  // or a name such as localhost); port 0 picks a free one. INVALID_ARGUMENT, naming the address,
  // when it is malformed or cannot be bound. `metrics` must outlive the endpoint.
  static absl::StatusOr<std::unique_ptr<AgentMetricsEndpoint>> Start(const std::string& address,
                                                                      const PrometheusAgentMetrics& metrics);
  ~AgentMetricsEndpoint();

  // Returns the port actually bound.
  int port() const { return port_; }

 private:
  AgentMetricsEndpoint() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_METRICS_PROMETHEUS_AGENT_METRICS_H_
