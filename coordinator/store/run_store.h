// RunStore: where a coordinator keeps runs and machines. The only interface the rest of the
// coordinator sees of the database; PgRunStore (pg_run_store.h) is the PostgreSQL one and the
// only SQL in the code base. Implementations are thread-safe: stream threads prepare runs and
// upsert machines, the group committer stores runs, admin threads list them, all at once.
#ifndef BENCHFLEET_COORDINATOR_STORE_RUN_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_RUN_STORE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "benchfleet/v1/admin.pb.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::coordinator {

// One run formatted for the store: its key and where its row sits in PreparedRuns::rows.
struct PreparedRun {
  std::string run_id;  // canonical lower-case UUID: the key duplicates are found by
  size_t offset = 0;
  size_t size = 0;
  std::string content_sha256;  // RunContentSha256 (run_rows.h): tells a re-send from a conflict
};

// The runs of one batch in the store's bulk-load form, formatted by the thread that received
// them so the committing thread only writes bytes.
struct PreparedRuns {
  std::string rows;  // one row per line, in `runs` order
  std::vector<PreparedRun> runs;
};

enum class StoreOutcome : uint8_t {
  kStored,     // committed by this call
  kDuplicate,  // its run_id was already stored, or came earlier in the same call, with the same content
  kRefused,    // the database refused its content; reason says why; the others are stored
  // Its run_id was already stored (or came earlier in the same call) with different content
  // (another content_sha256); not stored; reason says so. A stored row without a hash (stored
  // before migration 0006) cannot be compared: a re-send of it is kDuplicate.
  kConflict,
};

struct RunStoreResult {
  StoreOutcome outcome = StoreOutcome::kStored;
  std::string reason;  // for kRefused and kConflict
};

// What a Hello (or a later one on the same stream) says about a machine.
struct MachineUpdate {
  std::string agent_id;
  std::string agent_version;
  v1::MachineConditions conditions;  // its fingerprint is set
  absl::Time seen;
};

// ListRuns filters; every one that is set must match. Mirrors v1::ListRunsRequest.
struct RunQuery {
  std::vector<std::string> agent_ids;
  std::map<std::string, std::string> labels;  // in the agent's latest conditions
  std::string backend;
  std::string task;
  std::string series_id;
  std::optional<absl::Time> since;  // start_time >= since
  std::optional<absl::Time> until;  // start_time < until
  int page_size = 1000;
  std::string page_token;  // next_page_token of the previous page
};

struct RunPage {
  std::vector<v1::RunRecord> runs;  // newest start_time first; runs without one last
  std::string next_page_token;      // empty on the last page
};

class RunStore {
 public:
  virtual ~RunStore() = default;

  // Appends the row form of `record` (already validated) to `out`. Pure CPU, no I/O: stream
  // threads call it so that the committer does not. INVALID_ARGUMENT when the record cannot be
  // represented (e.g. a timestamp out of range).
  virtual absl::Status PrepareRun(const v1::RunRecord& record, PreparedRuns* out) const = 0;

  // Stores the runs of `groups` in one transaction and returns one result per run: groups in
  // order, the runs of each in order. Nothing is reported stored before it is committed. On an
  // error (UNAVAILABLE: the database cannot be reached) nothing was stored, or the commit's fate
  // is unknown, and the caller retries later; re-storing a committed run yields kDuplicate (and
  // a run_id stored with other content kConflict).
  virtual absl::StatusOr<std::vector<RunStoreResult>> StoreRuns(
      absl::Span<const PreparedRuns* const> groups) = 0;

  // Records the machine and its conditions (insert or update; first_seen is kept).
  virtual absl::Status UpsertMachine(const MachineUpdate& update) = 0;

  // Moves the machine's last_seen forward to `seen`. OK when the machine is unknown.
  virtual absl::Status TouchMachine(const std::string& agent_id, absl::Time seen) = 0;

  // Returns one page of the runs matching `query`. INVALID_ARGUMENT for a bad page token.
  virtual absl::StatusOr<RunPage> ListRuns(const RunQuery& query) = 0;

  // Returns the machines whose latest labels include `labels`, by agent_id; `connected` is left
  // false (the store does not know about streams).
  virtual absl::StatusOr<std::vector<v1::Machine>> ListMachines(
      const std::map<std::string, std::string>& labels) = 0;

  // Returns the conditions recorded under each known fingerprint (the `conditions` table: every
  // set a machine ever reported), ordered by fingerprint; unknown fingerprints are left out.
  virtual absl::StatusOr<std::vector<v1::MachineConditions>> GetConditions(
      const std::vector<std::string>& fingerprints) = 0;

  // The newest regression verdict of each agent, task, mode, phase and matrix point among the
  // runs of `tasks` (empty: all) that started at or after `since` (verdict_queries.h).
  virtual absl::StatusOr<v1::ListRegressionChecksResponse> ListRegressionChecks(const std::vector<std::string>& tasks,
                                                              const std::optional<absl::Time>& since) = 0;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_RUN_STORE_H_
