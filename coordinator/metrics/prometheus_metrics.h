// CoordinatorMetrics on a prometheus-cpp Registry, and the HTTP endpoint (/metrics) that serves
// it. The only place the coordinator touches prometheus-cpp. Owned by CoordinatorServer;
// thread-safe (prometheus-cpp counters and gauges are atomic).
#ifndef BENCHFLEET_COORDINATOR_METRICS_PROMETHEUS_METRICS_H_
#define BENCHFLEET_COORDINATOR_METRICS_PROMETHEUS_METRICS_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/metrics/coordinator_metrics.h"

namespace prometheus {
class Counter;
class Exposer;
class Gauge;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace benchfleet::coordinator {

class PrometheusMetrics : public CoordinatorMetrics {
 public:
  PrometheusMetrics();
  ~PrometheusMetrics() override;

  void RecordsStored(uint64_t count) override;
  void RecordsDuplicated(uint64_t count) override;
  void RecordRejected(std::string_view reason) override;
  void AgentConnected() override;
  void AgentDisconnected() override;
  void GroupCommitted(uint64_t runs) override;
  void RegressionChecked(std::string_view agent_id, std::string_view task, bool regression) override;

  // The registry, for an exposer and for tests (Registry::Collect, no HTTP).
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* stored_;
  prometheus::Counter* duplicated_;
  prometheus::Family<prometheus::Counter>* rejected_;
  prometheus::Gauge* agents_connected_;
  prometheus::Counter* commits_;
  prometheus::Counter* committed_runs_;
  prometheus::Family<prometheus::Counter>* regression_checks_;
};

// Serves a registry on http://ADDRESS/metrics until destroyed.
class MetricsEndpoint {
 public:
  // Binds `address` (HOST:PORT; port 0 picks a free one). INVALID_ARGUMENT when it cannot.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& address, std::shared_ptr<prometheus::Registry> registry);
  ~MetricsEndpoint();

  // The port actually bound.
  int port() const { return port_; }

 private:
  MetricsEndpoint() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Registry> registry_;
  int port_ = 0;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_METRICS_PROMETHEUS_METRICS_H_
