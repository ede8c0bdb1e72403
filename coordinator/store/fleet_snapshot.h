// FleetSnapshot: what the shared database says about the whole fleet, as FleetSnapshotReader
// reads it and the metrics publish it (CoordinatorServer reads it on its scheduler thread). Beside
// the store's interfaces, so that the store depends on nothing above it (metrics/ includes this,
// not the other way round). A plain struct and a one-call interface, implemented by PgFleetStore
// and MemoryFleetStore; implementations are thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_FLEET_SNAPSHOT_H_
#define BENCHFLEET_COORDINATOR_STORE_FLEET_SNAPSHOT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::coordinator {

// Every replica reads the same, so dashboards aggregate these with max, never sum.
struct FleetSnapshot {
  int64_t agents_known = 0;
  // Agents seen within the last 24 hours: each gets benchfleet_coordinator_agent_connected at 0
  // on a replica that does not hold its stream, so `max by (agent)` says whether any holds it.
  std::vector<std::string> recent_agents;
  // Task state name ("pending", "running", "succeeded", "failed", "cancelled", ...: the
  // v1::TaskStatus::State names in lower case, without STATE_) -> count; every state is present,
  // at 0 when none.
  std::map<std::string, int64_t> tasks_by_state;
  // (agent, task name) of every task not yet finished: their flag counters exist from now on.
  std::vector<std::pair<std::string, std::string>> open_tasks;
};

class FleetSnapshotReader {
 public:
  virtual ~FleetSnapshotReader() = default;

  // Reads the fleet-wide gauges in one statement: machines known, the agents whose last_seen is
  // at or after `seen_since` (sorted), tasks by state (every state of v1::TaskStatus, lower case,
  // 0 when none) and the (agent, series' task name) of every PENDING or RUNNING task, sorted,
  // each once.
  virtual absl::StatusOr<FleetSnapshot> ReadFleetSnapshot(absl::Time seen_since) = 0;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_FLEET_SNAPSHOT_H_
