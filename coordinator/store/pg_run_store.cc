#include "coordinator/store/pg_run_store.h"

#include <mutex>

#include <pqxx/pqxx>

#include "absl/base/thread_annotations.h"
#include "coordinator/store/pg_connection_pool.h"
#include "coordinator/store/pg_machine_queries.h"
#include "coordinator/store/pg_run_queries.h"
#include "coordinator/store/pg_run_writer.h"
#include "coordinator/store/run_rows.h"
#include "coordinator/store/verdict_queries.h"

namespace benchfleet::coordinator {
namespace {

class PgRunStore : public RunStore {
 public:
  explicit PgRunStore(PgRunStoreOptions options)
      : pool_(options.database_url, options.max_connections),
        writer_(options.database_url) {}

  absl::Status PrepareRun(const v1::RunRecord& record, PreparedRuns* out) const override {
    return AppendRunRow(record, out);
  }

  absl::StatusOr<std::vector<RunStoreResult>> StoreRuns(
      absl::Span<const PreparedRuns* const> groups) override {
    std::lock_guard<std::mutex> lock(write_mu_);
    return writer_.StoreRuns(groups);
  }

  absl::Status UpsertMachine(const MachineUpdate& update) override {
    return pool_.Run("recording machine " + update.agent_id,
                     [&](pqxx::connection& c) { return UpsertMachineRow(c, update); });
  }

  absl::Status TouchMachine(const std::string& agent_id, absl::Time seen) override {
    return pool_.Run("updating last_seen of machine " + agent_id,
                     [&](pqxx::connection& c) { return TouchMachineRow(c, agent_id, seen); });
  }

  absl::StatusOr<RunPage> ListRuns(const RunQuery& query) override {
    RunPage page;
    absl::Status status =
        pool_.Run("listing runs", [&](pqxx::connection& c) { return SelectRuns(c, query, &page); });
    if (!status.ok()) return status;
    return page;
  }

  absl::StatusOr<std::vector<v1::Machine>> ListMachines(
      const std::map<std::string, std::string>& labels) override {
    std::vector<v1::Machine> machines;
    absl::Status status = pool_.Run(
        "listing machines", [&](pqxx::connection& c) { return SelectMachines(c, labels, &machines); });
    if (!status.ok()) return status;
    return machines;
  }

  absl::StatusOr<std::vector<v1::MachineConditions>> GetConditions(
      const std::vector<std::string>& fingerprints) override {
    std::vector<v1::MachineConditions> conditions;
    absl::Status status = pool_.Run("reading conditions", [&](pqxx::connection& c) {
      return SelectConditions(c, fingerprints, &conditions);
    });
    if (!status.ok()) return status;
    return conditions;
  }

  absl::StatusOr<v1::ListRegressionChecksResponse> ListRegressionChecks(const std::vector<std::string>& tasks,
                                                      const std::optional<absl::Time>& since) override {
    v1::ListRegressionChecksResponse verdicts;
    absl::Status status = pool_.Run("reading regression verdicts", [&](pqxx::connection& c) {
      pqxx::read_transaction tx(c);
      verdicts = SelectNewestVerdicts(tx, tasks, since);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return verdicts;
  }

 private:
  PgConnectionPool pool_;
  std::mutex write_mu_;
  PgRunWriter writer_ ABSL_GUARDED_BY(write_mu_);
};

}  // namespace

std::unique_ptr<RunStore> NewPgRunStore(PgRunStoreOptions options) {
  return std::make_unique<PgRunStore>(std::move(options));
}

}  // namespace benchfleet::coordinator
