// Records, batches and conditions for the coordinator's tests, and FakeRunStore: an in-memory
// RunStore whose StoreRuns can be made to fail, for tests of the ingest path without
// PostgreSQL. Test-only; FakeRunStore is thread-safe, the builders are pure.
#ifndef BENCHFLEET_TESTS_UNIT_COORDINATOR_TEST_RECORDS_H_
#define BENCHFLEET_TESTS_UNIT_COORDINATOR_TEST_RECORDS_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/gateway.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::testing {

inline constexpr char kAgentId[] = "agent-1";

// Returns a valid record: a new run_id, agent kAgentId, warm phase, status OK, one
// tokens_per_second metric (40 + call_index) stamped as its main figure (headline 1, label
// "output tokens/s", higher is better), start_time 2026-01-01T00:00:00Z + call_index seconds.
v1::RunRecord MakeRecord(uint32_t call_index = 1);

std::string Serialize(const v1::RunRecord& record);

// Returns `serialized` with field 6 (backend) set again to invalid UTF-8: parses as a whole
// message only for a reader that skips UTF-8 checks.
std::string WithInvalidUtf8(const std::string& serialized);

v1::RecordBatch MakeBatch(uint64_t batch_id, const std::vector<std::string>& records);

v1::MachineConditions MakeConditions(const std::string& hostname,
                                     const std::map<std::string, std::string>& labels);

// An in-memory store. StoreRuns fails with UNAVAILABLE `failures` more times, then stores.
class FakeRunStore : public coordinator::RunStore {
 public:
  absl::Status PrepareRun(const v1::RunRecord& record, coordinator::PreparedRuns* out) const override;
  absl::StatusOr<std::vector<coordinator::RunStoreResult>> StoreRuns(
      absl::Span<const coordinator::PreparedRuns* const> groups) override;
  absl::Status UpsertMachine(const coordinator::MachineUpdate& update) override;
  absl::Status TouchMachine(const std::string& agent_id, absl::Time seen) override;
  absl::StatusOr<coordinator::RunPage> ListRuns(const coordinator::RunQuery& query) override;
  absl::StatusOr<std::vector<v1::Machine>> ListMachines(
      const std::map<std::string, std::string>& labels) override;
  absl::StatusOr<std::vector<v1::MachineConditions>> GetConditions(
      const std::vector<std::string>& fingerprints) override;
  absl::StatusOr<v1::ListRegressionChecksResponse> ListRegressionChecks(
      const std::vector<std::string>& tasks, const std::optional<absl::Time>& since) override;

  void FailNext(int failures);
  // Makes machine calls fail with UNAVAILABLE while `down` is true.
  void SetMachinesDown(bool down);

  int store_calls();
  // Blocks until StoreRuns was called at least `n` times.
  void WaitForStoreCalls(int n);
  std::set<std::string> stored();
  std::map<std::string, absl::Time> machines_seen();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int failures_ = 0;
  int calls_ = 0;
  bool machines_down_ = false;
  std::set<std::string> stored_;
  std::map<std::string, absl::Time> machines_;
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_UNIT_COORDINATOR_TEST_RECORDS_H_
