// What the coordinator counts: records stored, duplicated and rejected (by reason), agents
// connected. An interface so that ingest/ and admin/ never see prometheus-cpp
// (PrometheusMetrics in prometheus_metrics.h is the real one). Implementations are thread-safe.
#ifndef BENCHFLEET_COORDINATOR_METRICS_COORDINATOR_METRICS_H_
#define BENCHFLEET_COORDINATOR_METRICS_COORDINATOR_METRICS_H_

#include <cstdint>
#include <string_view>

namespace benchfleet::coordinator {

class CoordinatorMetrics {
 public:
  virtual ~CoordinatorMetrics() = default;

  virtual void RecordsStored(uint64_t count) = 0;
  virtual void RecordsDuplicated(uint64_t count) = 0;

  // `reason` is a short snake_case code, e.g. "missing_run_id" (see ingest/batch.h).
  virtual void RecordRejected(std::string_view reason) = 0;

  virtual void AgentConnected() = 0;
  virtual void AgentDisconnected() = 0;

  // One group commit of `runs` runs (stored, duplicated or refused).
  virtual void GroupCommitted(uint64_t runs) = 0;

  // A run of a scheduled series checked against its baseline; `regression` when flagged.
  virtual void RegressionChecked(std::string_view agent_id, std::string_view task, bool regression) = 0;
};

// Counts nothing; for tests that do not look at metrics.
class NullMetrics : public CoordinatorMetrics {
 public:
  void RecordsStored(uint64_t) override {}
  void RecordsDuplicated(uint64_t) override {}
  void RecordRejected(std::string_view) override {}
  void AgentConnected() override {}
  void AgentDisconnected() override {}
  void GroupCommitted(uint64_t) override {}
  void RegressionChecked(std::string_view, std::string_view, bool) override {}
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_METRICS_COORDINATOR_METRICS_H_
