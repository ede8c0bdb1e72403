// MachineStore: the fleet's read-only view of the machines the runs store records (RunStore's
// UpsertMachine writes them): which agents exist and under what conditions. The Scheduler selects
// a series' agents with it and names a conditions change beside a regression verdict.
// Implemented by PgFleetStore (pg_fleet_store.h) and, for tests, MemoryFleetStore
// (tests/support/memory_fleet_store.h). Implementations are thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_MACHINE_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_MACHINE_STORE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "benchfleet/v1/admin.pb.h"
#include "benchfleet/v1/conditions.pb.h"

namespace benchfleet::coordinator {

class MachineStore {
 public:
  virtual ~MachineStore() = default;

  // Every known machine with its latest conditions, sorted by agent_id.
  virtual absl::StatusOr<std::vector<v1::Machine>> ListMachines() = 0;
  // The conditions stored under each of `fingerprints` (unknown ones are left out), sorted by
  // fingerprint.
  virtual absl::StatusOr<std::vector<v1::MachineConditions>> GetConditions(
      const std::vector<std::string>& fingerprints) = 0;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_MACHINE_STORE_H_
