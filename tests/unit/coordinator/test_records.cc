#include "tests/unit/coordinator/test_records.h"

#include "common/hashing.h"
#include "coordinator/store/run_rows.h"

namespace benchfleet::testing {

using coordinator::PreparedRuns;
using coordinator::RunStoreResult;
using coordinator::StoreOutcome;

v1::RunRecord MakeRecord(uint32_t call_index) {
  v1::RunRecord r;
  r.set_run_id(NewUuid());
  r.set_series_id("series-1");
  r.set_task_id("task-1");
  r.set_agent_id(kAgentId);
  r.set_conditions_fingerprint("fp-1");
  r.set_backend("llama-server");
  r.set_task("chat-7b");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(call_index);
  r.set_repetition(1);
  r.mutable_start_time()->set_seconds(1767225600 + call_index);
  r.mutable_end_time()->set_seconds(1767225600 + call_index + 1);
  r.mutable_wall_duration()->set_seconds(1);
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(40.0 + call_index);
  m->set_unit("tokens/s");
  // As a backend's declaration stamps it (common/figures.h): the run's main figure.
  m->set_better(v1::BETTER_HIGHER);
  m->set_headline(1);
  m->set_label("output tokens/s");
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  r.set_agent_version("0.1.0");
  return r;
}

std::string Serialize(const v1::RunRecord& record) {
  std::string out;
  record.SerializeToString(&out);
  return out;
}

std::string WithInvalidUtf8(const std::string& serialized) {
  // Tag of field 6, length-delimited; 2 bytes that are not UTF-8.
  return serialized + std::string("\x32\x02\xff\xfe", 4);
}

v1::RecordBatch MakeBatch(uint64_t batch_id, const std::vector<std::string>& records) {
  v1::RecordBatch batch;
  batch.set_batch_id(batch_id);
  for (const auto& r : records) batch.add_records(r);
  return batch;
}

v1::MachineConditions MakeConditions(const std::string& hostname,
                                     const std::map<std::string, std::string>& labels) {
  v1::MachineConditions c;
  c.set_hostname(hostname);
  c.set_os_name("Debian GNU/Linux");
  c.set_os_version("12");
  c.set_architecture("x86_64");
  c.set_logical_cores(16);
  for (const auto& [k, v] : labels) (*c.mutable_labels())[k] = v;
  c.set_agent_version("0.1.0");
  return c;
}

absl::Status FakeRunStore::PrepareRun(const v1::RunRecord& record, PreparedRuns* out) const {
  return coordinator::AppendRunRow(record, out);
}

absl::StatusOr<std::vector<RunStoreResult>> FakeRunStore::StoreRuns(
    absl::Span<const PreparedRuns* const> groups) {
  std::lock_guard<std::mutex> lock(mu_);
  ++calls_;
  cv_.notify_all();
  if (failures_ > 0) {
    --failures_;
    return absl::UnavailableError("storing runs: the database is down");
  }
  std::vector<RunStoreResult> results;
  for (const PreparedRuns* g : groups) {
    for (const auto& run : g->runs) {
      RunStoreResult r;
      r.outcome = stored_.insert(run.run_id).second ? StoreOutcome::kStored : StoreOutcome::kDuplicate;
      results.push_back(r);
    }
  }
  return results;
}

absl::Status FakeRunStore::UpsertMachine(const coordinator::MachineUpdate& update) {
  return TouchMachine(update.agent_id, update.seen);
}

absl::Status FakeRunStore::TouchMachine(const std::string& agent_id, absl::Time seen) {
  std::lock_guard<std::mutex> lock(mu_);
  if (machines_down_) return absl::UnavailableError("machines: the database is down");
  machines_[agent_id] = seen;
  cv_.notify_all();
  return absl::OkStatus();
}

absl::StatusOr<coordinator::RunPage> FakeRunStore::ListRuns(const coordinator::RunQuery&) {
  return absl::UnimplementedError("FakeRunStore::ListRuns");
}

absl::StatusOr<std::vector<v1::Machine>> FakeRunStore::ListMachines(
    const std::map<std::string, std::string>&) {
  return absl::UnimplementedError("FakeRunStore::ListMachines");
}

absl::StatusOr<std::vector<v1::MachineConditions>> FakeRunStore::GetConditions(
    const std::vector<std::string>&) {
  return absl::UnimplementedError("FakeRunStore::GetConditions");
}

absl::StatusOr<v1::ListRegressionChecksResponse> FakeRunStore::ListRegressionChecks(
    const std::vector<std::string>&, const std::optional<absl::Time>&) {
  return absl::UnimplementedError("FakeRunStore::ListRegressionChecks");
}

void FakeRunStore::FailNext(int failures) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_ = failures;
}

void FakeRunStore::SetMachinesDown(bool down) {
  std::lock_guard<std::mutex> lock(mu_);
  machines_down_ = down;
}

int FakeRunStore::store_calls() {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

void FakeRunStore::WaitForStoreCalls(int n) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return calls_ >= n; });
}

std::set<std::string> FakeRunStore::stored() {
  std::lock_guard<std::mutex> lock(mu_);
  return stored_;
}

std::map<std::string, absl::Time> FakeRunStore::machines_seen() {
  std::lock_guard<std::mutex> lock(mu_);
  return machines_;
}

}  // namespace benchfleet::testing
