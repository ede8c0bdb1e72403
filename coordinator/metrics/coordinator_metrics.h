// What the coordinator counts (the catalogue, with every name, label and the worst-case series
// count, is coordinator/metrics/README.md). An interface so that ingest/, scheduler/ and admin/
// never see prometheus-cpp (PrometheusMetrics in prometheus_metrics.h is the real one).
// Implementations are thread-safe.
#ifndef BENCHFLEET_COORDINATOR_METRICS_COORDINATOR_METRICS_H_
#define BENCHFLEET_COORDINATOR_METRICS_COORDINATOR_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "coordinator/store/fleet_snapshot.h"

namespace benchfleet::v1 {
class RunRecord;
}  // namespace benchfleet::v1

namespace benchfleet::coordinator {

// The values of regression_checks_total's `verdict` label: RegressionVerdict.Kind, lower case.
inline constexpr std::array<std::string_view, 6> kRegressionVerdicts = {
    "regression", "improvement", "no_change", "not_significant", "baseline_too_small", "sample_too_small"};

class CoordinatorMetrics {
 public:
  virtual ~CoordinatorMetrics() = default;

  virtual void RecordsStored(uint64_t count) = 0;
  virtual void RecordsDuplicated(uint64_t count) = 0;
  // Records whose run_id was already stored with different content (StoreOutcome::kConflict):
  // refused, each answered as a conflict, from an agent's batch or an import.
  virtual void RecordsConflicted(uint64_t count) = 0;

  // `reason` is a short snake_case code, e.g. "missing_run_id" (see ingest/batch.h).
  virtual void RecordRejected(std::string_view reason) = 0;

  // A stream opened by `agent_id`'s Hello (zero-initialises that agent's label sets), and closed.
  virtual void AgentConnected(std::string_view agent_id) = 0;
  virtual void AgentDisconnected(std::string_view agent_id) = 0;

  // One RecordBatch received from an agent, with `records` records in it.
  virtual void BatchReceived(uint64_t records) = 0;

  // One group commit of `runs` runs (stored, duplicated or refused) that took `latency`.
  virtual void GroupCommitted(uint64_t runs, absl::Duration latency) = 0;

  // A database operation that failed ("store_runs", "upsert_machine", "scheduler_tick", ...).
  virtual void DatabaseError(std::string_view operation) = 0;

  // A run this coordinator stored (never a duplicate): its figures and flags.
  virtual void RunStored(const v1::RunRecord& record) = 0;

  // A run of a series checked against its baseline; `verdict` is one of kRegressionVerdicts (the
  // verdict's kind, lower case; any other is not counted).
  virtual void RegressionChecked(std::string_view agent_id, std::string_view task, std::string_view verdict) = 0;

  // A task of a series given to `agent_id`: its flag counters exist at 0 from now on.
  virtual void TaskKnown(std::string_view agent_id, std::string_view task) = 0;

  // A task update ignored because it came from an attempt that is not the task's current one
  // (its lease expired and the task was retried; TaskUpdate.attempt).
  virtual void StaleTaskUpdate() = 0;

  // The fleet-wide gauges, read from the database on the coordinator's tick.
  virtual void FleetObserved(const FleetSnapshot& snapshot) = 0;

  // A gRPC call finished: `method` is the full name ("/benchfleet.v1.Admin/ListRuns"), `code` the
  // status code's name ("OK", "NOT_FOUND", ...).
  virtual void RpcHandled(std::string_view method, std::string_view code) = 0;
};

// Counts nothing; for tests that do not look at metrics.
class NullMetrics : public CoordinatorMetrics {
 public:
  void RecordsStored(uint64_t) override {}
  void RecordsDuplicated(uint64_t) override {}
  void RecordsConflicted(uint64_t) override {}
  void RecordRejected(std::string_view) override {}
  void AgentConnected(std::string_view) override {}
  void AgentDisconnected(std::string_view) override {}
  void BatchReceived(uint64_t) override {}
  void GroupCommitted(uint64_t, absl::Duration) override {}
  void DatabaseError(std::string_view) override {}
  void RunStored(const v1::RunRecord&) override {}
  void RegressionChecked(std::string_view, std::string_view, std::string_view) override {}
  void TaskKnown(std::string_view, std::string_view) override {}
  void StaleTaskUpdate() override {}
  void FleetObserved(const FleetSnapshot&) override {}
  void RpcHandled(std::string_view, std::string_view) override {}
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_METRICS_COORDINATOR_METRICS_H_
