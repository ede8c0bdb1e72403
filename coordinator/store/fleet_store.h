// FleetStore: everything the fleet keeps in the shared database, as one object that implements
// each concern's interface: MachineStore (machine_store.h), TaskStore (series and tasks,
// task_store.h), ScheduleStore (schedule_store.h), RunAnnotationStore (annotations, baselines,
// verdicts; run_annotation_store.h) and FleetSnapshotReader (fleet_snapshot.h). Consumers take
// only the interfaces they use: the Scheduler a FleetStores (below), the metrics' poll a
// FleetSnapshotReader, the regression check's pure functions a BaselineRun.
//
// FleetStore itself is kept as the aggregate that an implementation derives from, so that one
// owner (CoordinatorServer's unique_ptr, a test's store) holds the one connection pool (or the
// one in-memory state) behind every interface; nothing should take a FleetStore* to call it.
// Implemented by PgFleetStore (pg_fleet_store.h) and, for tests, MemoryFleetStore
// (tests/support/memory_fleet_store.h). Implementations are thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_FLEET_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_FLEET_STORE_H_

#include "coordinator/store/fleet_snapshot.h"
#include "coordinator/store/machine_store.h"
#include "coordinator/store/run_annotation_store.h"
#include "coordinator/store/schedule_store.h"
#include "coordinator/store/task_store.h"

namespace benchfleet::coordinator {

class FleetStore : public MachineStore,
                   public TaskStore,
                   public ScheduleStore,
                   public RunAnnotationStore,
                   public FleetSnapshotReader {
 public:
  ~FleetStore() override = default;
};

// The stores the Scheduler reads and writes, one per concern; none owned. Each may be a
// different object (a test can hand in a failing TaskStore beside an in-memory rest).
struct FleetStores {
  MachineStore* machines = nullptr;
  TaskStore* tasks = nullptr;
  ScheduleStore* schedules = nullptr;
  RunAnnotationStore* annotations = nullptr;

  // Returns every concern of `store`.
  static FleetStores Of(FleetStore* store) { return FleetStores{store, store, store, store}; }
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_FLEET_STORE_H_
