// MemoryFleetStore: an in-memory FleetStore (every concern of coordinator/store/fleet_store.h),
// so that the Scheduler's logic is tested without PostgreSQL. It keeps the documented semantics
// of the interfaces, and where a header leaves a detail open it does what PgFleetStore's SQL does
// (ids are UUIDs, times are kept to the microsecond, a non-UUID id is simply not found);
// tests/unit/coordinator/store/fleet_store_contract_test.cc runs the same cases against both.
// It also stands in for the runs store's side of the database (UpsertMachine, AddRun) and can be
// made unreachable (SetDown). Test-only; thread-safe: one mutex over everything, so each call is
// atomic like PgFleetStore's single statements and transactions (a std::mutex, which TSan sees;
// Debian's Abseil, absl::Mutex included, is not instrumented).
#ifndef BENCHFLEET_TESTS_SUPPORT_MEMORY_FLEET_STORE_H_
#define BENCHFLEET_TESTS_SUPPORT_MEMORY_FLEET_STORE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "coordinator/store/fleet_store.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::testing {

class MemoryFleetStore : public coordinator::FleetStore {
 public:
  MemoryFleetStore() = default;
  MemoryFleetStore(const MemoryFleetStore&) = delete;
  MemoryFleetStore& operator=(const MemoryFleetStore&) = delete;

  // ---- What the runs store writes (RunStore::UpsertMachine, StoreRuns) ----
  // Records the machine and its conditions as PgRunStore::UpsertMachine does: the latest
  // conditions win, last_seen never goes back.
  void UpsertMachine(const coordinator::MachineUpdate& update);
  // Stores a run as a group commit would (a run id stored already keeps its first record).
  // INVALID_ARGUMENT when the run id is not a UUID.
  absl::Status AddRun(const v1::RunRecord& record);

  // ---- Test controls ----
  // While `down`, every call of the interfaces fails with UNAVAILABLE, as PgFleetStore's do when
  // PostgreSQL cannot be reached.
  void SetDown(bool down);
  // Replaces a stored series' spec (one stored by an older coordinator). NOT_FOUND for an unknown
  // series.
  absl::Status SetSeriesSpec(const std::string& series_id, const std::string& spec_yaml);
  // The annotations of a run, {code: reason}.
  std::map<std::string, std::string> AnnotationsOf(const std::string& run_id);
  // Every verdict stored for a task (not only each point's newest), by their runs' start.
  std::vector<v1::RegressionVerdict> VerdictsOfTask(const std::string& task_id);

  // ---- MachineStore ----
  absl::StatusOr<std::vector<v1::Machine>> ListMachines() override;
  absl::StatusOr<std::vector<v1::MachineConditions>> GetConditions(
      const std::vector<std::string>& fingerprints) override;

  // ---- TaskStore ----
  absl::StatusOr<std::string> CreateSeries(const coordinator::SeriesRow& series,
                                           const std::vector<std::string>& agent_ids) override;
  absl::StatusOr<coordinator::SeriesRow> GetSeries(const std::string& series_id) override;
  absl::StatusOr<std::vector<coordinator::SeriesRow>> ListSeries(bool active_only) override;
  absl::StatusOr<std::vector<coordinator::TaskRow>> ListTasks(const std::string& series_id) override;
  absl::StatusOr<coordinator::TaskRow> GetTask(const std::string& task_id) override;
  absl::StatusOr<std::vector<coordinator::ClaimedTask>> ClaimPendingTasks(const std::vector<std::string>& agent_ids,
                                                                          const std::string& coordinator_id,
                                                                          absl::Time now,
                                                                          absl::Time lease_expiry) override;
  absl::StatusOr<std::vector<coordinator::ClaimedTask>> TakeOverRunningTasks(const std::string& agent_id,
                                                                             const std::string& coordinator_id,
                                                                             absl::Time now,
                                                                             absl::Time lease_expiry) override;
  absl::StatusOr<bool> UpdateTask(const coordinator::TaskRow& task, v1::TaskStatus::State expected_state,
                                  uint32_t expected_attempt, absl::Time now) override;
  absl::Status RenewLeases(const std::string& agent_id, absl::Time lease_expiry) override;
  absl::StatusOr<std::vector<coordinator::DueTask>> ListDueTasks(absl::Time now) override;
  absl::StatusOr<std::vector<coordinator::TaskRow>> CancelSeries(const std::string& series_id,
                                                                 const std::string& message,
                                                                 absl::Time now) override;
  absl::StatusOr<std::vector<coordinator::TaskRow>> TakeCancels(const std::vector<std::string>& agent_ids) override;
  absl::StatusOr<std::vector<std::string>> FinishDoneSeries() override;
  absl::Status AddFlagCounts(const std::map<std::string, std::map<std::string, int>>& counts) override;
  absl::StatusOr<int64_t> ChangeCounter() override;

  // ---- ScheduleStore ----
  absl::StatusOr<std::string> AddSchedule(const coordinator::ScheduleRow& schedule) override;
  absl::StatusOr<std::vector<coordinator::ScheduleRow>> ListSchedules() override;
  absl::Status RemoveSchedule(const std::string& schedule_id, absl::Time now) override;
  absl::StatusOr<bool> ClaimSlot(const std::string& schedule_id, absl::Time slot, const std::string& coordinator_id,
                                 absl::Time now) override;

  // ---- RunAnnotationStore ----
  absl::Status AnnotateRuns(const std::vector<std::string>& run_ids, const std::string& code,
                            const std::string& reason, absl::Time now) override;
  absl::StatusOr<std::vector<std::string>> RunsOfSeries(const std::string& series_id) override;
  absl::StatusOr<std::vector<coordinator::BaselineRun>> Baseline(const v1::RunRecord& record, int limit) override;
  absl::StatusOr<std::vector<coordinator::BaselineRun>> Sample(const v1::RunRecord& record, int limit) override;
  absl::Status StoreVerdict(const std::string& task_id, const v1::RegressionVerdict& verdict,
                            const std::string& reason, absl::Time now) override;
  absl::StatusOr<std::map<std::string, std::vector<v1::RegressionVerdict>>> ListVerdicts(
      const std::string& series_id) override;

  // ---- FleetSnapshotReader ----
  absl::StatusOr<coordinator::FleetSnapshot> ReadFleetSnapshot(absl::Time seen_since) override;

 private:
  struct Machine {
    v1::MachineConditions conditions;
    absl::Time first_seen;
    absl::Time last_seen;
  };
  struct Task {
    coordinator::TaskRow row;
    bool cancel_pending = false;  // cancelled while RUNNING, its agent not told yet
  };
  struct Schedule {
    coordinator::ScheduleRow row;  // last_slot and last_series_id unused: read from slots_
    std::optional<absl::Time> removed;
  };
  struct Slot {
    std::string series_id;
    std::string claimed_by;
    absl::Time claimed;
  };
  struct Run {
    v1::RunRecord record;
    std::optional<absl::Time> start;  // to the microsecond; none for a record without one
  };
  struct Verdict {
    std::string task_id;
    v1::RegressionVerdict verdict;
    absl::Time created;
  };

  absl::Status CheckUp() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void Bump() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { ++change_counter_; }
  coordinator::ClaimedTask ClaimedOf(const Task& task) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool HasAnnotation(const std::string& run_id, const std::vector<std::string>& codes) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The accepted runs of the record's agent, task name, mode, phase and matrix that `keep`
  // accepts (given the run and its start), without an annotation in `excluded_codes`, newest
  // first, at most `limit` (PgFleetStore's PointRuns).
  template <typename Keep>
  std::vector<coordinator::BaselineRun> PointRuns(const v1::RunRecord& record, int limit,
                                                  const std::vector<std::string>& excluded_codes, Keep keep) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable std::mutex mu_;
  bool down_ ABSL_GUARDED_BY(mu_) = false;
  // As fleet_change_seq: read 0 before any change, moved by every change to series, tasks or
  // schedules.
  int64_t change_counter_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Machine> machines_ ABSL_GUARDED_BY(mu_);                    // by agent id
  std::map<std::string, v1::MachineConditions> conditions_ ABSL_GUARDED_BY(mu_);   // by fingerprint
  std::map<std::string, Run> runs_ ABSL_GUARDED_BY(mu_);                            // by run id (lower case)
  std::map<std::string, coordinator::SeriesRow> series_ ABSL_GUARDED_BY(mu_);      // by id
  std::map<std::string, Task> tasks_ ABSL_GUARDED_BY(mu_);                          // by id
  std::map<std::string, Schedule> schedules_ ABSL_GUARDED_BY(mu_);                  // by id
  std::map<std::pair<std::string, absl::Time>, Slot> slots_ ABSL_GUARDED_BY(mu_);  // by (schedule, slot)
  // (run id, code) -> reason.
  std::map<std::pair<std::string, std::string>, std::string> annotations_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Verdict> verdicts_ ABSL_GUARDED_BY(mu_);  // by run id
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_SUPPORT_MEMORY_FLEET_STORE_H_
