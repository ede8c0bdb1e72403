// ScheduleStore: the fleet's cron schedules and the slots they fired. A slot is claimed with a
// conditional insert, so that of several coordinators ticking at once exactly one fires it. Used
// by the Scheduler; implemented by PgFleetStore (pg_fleet_store.h) and, for tests,
// MemoryFleetStore (tests/support/memory_fleet_store.h). Implementations are thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_SCHEDULE_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_SCHEDULE_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::coordinator {

struct ScheduleRow {
  std::string id;  // set by the store on AddSchedule
  std::string cron;
  std::string spec_yaml;
  std::string source_name;
  std::string series_name;
  std::string task;
  absl::Time created;
  std::optional<absl::Time> last_slot;  // the latest claimed slot
  std::string last_series_id;           // the series it fired ("" when none)
};

class ScheduleStore {
 public:
  virtual ~ScheduleStore() = default;

  // Stores the schedule (id, a new UUID, set here). Returns the id.
  virtual absl::StatusOr<std::string> AddSchedule(const ScheduleRow& schedule) = 0;
  // Live schedules by creation time (then id), with their latest claimed slot and the series
  // that slot fired (TaskStore::CreateSeries with the slot sets it).
  virtual absl::StatusOr<std::vector<ScheduleRow>> ListSchedules() = 0;
  // NOT_FOUND "no schedule ID" for an unknown or already removed schedule.
  virtual absl::Status RemoveSchedule(const std::string& schedule_id, absl::Time now) = 0;
  // INSERT ... ON CONFLICT DO NOTHING: true for exactly one caller per (schedule, slot).
  virtual absl::StatusOr<bool> ClaimSlot(const std::string& schedule_id, absl::Time slot,
                                         const std::string& coordinator_id, absl::Time now) = 0;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_SCHEDULE_STORE_H_
