// The write path of PgRunStore: stores a group of prepared runs in one transaction. The fast path
// is one plain COPY; only when it hits a duplicate run_id is the group redone through a staging
// table with INSERT ... ON CONFLICT DO NOTHING RETURNING (to learn which were new; the ones
// already stored with another content_sha256 are conflicts, the others duplicates), and only
// when the database refuses a row's content is it redone row by row, each under a savepoint, so
// one bad row never holds back the others. Owned by PgRunStore; not thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_RUN_WRITER_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_RUN_WRITER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "coordinator/store/pg_copy_connection.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

class PgRunWriter {
 public:
  explicit PgRunWriter(std::string database_url);

  // See RunStore::StoreRuns.
  absl::StatusOr<std::vector<RunStoreResult>> StoreRuns(absl::Span<const PreparedRuns* const> groups);

 private:
  // A run to write: its key, its row and where its result goes.
  struct Row {
    std::string_view run_id;
    std::string_view content_sha256;
    std::string_view line;
    size_t result;
  };

  // The three ways to write; each leaves `results` of the rows it handled set, or fails whole.
  PgOutcome CopyAll(absl::Span<const std::string_view> chunks);
  absl::Status StageAndInsert(absl::Span<const std::string_view> chunks,
                              const std::vector<Row>& rows, std::vector<RunStoreResult>* results,
                              bool* content_error);
  absl::Status OneByOne(const std::vector<Row>& rows, std::vector<RunStoreResult>* results);

  // The status for a failed statement; drops the connection when it broke.
  absl::Status Fail(const PgOutcome& outcome, std::string_view what);

  PgCopyConnection conn_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_RUN_WRITER_H_
