#include "coordinator/store/pg_run_writer.h"

#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "coordinator/store/pg_errors.h"
#include "coordinator/store/run_rows.h"

namespace benchfleet::coordinator {
namespace {

const std::string& CopyRunsSql() {
  static const std::string* sql = new std::string(absl::StrCat("COPY runs (", kRunRowColumns, ") FROM STDIN"));
  return *sql;
}

// The rows already in the group are written to a per-session staging table, then moved over.
// ON COMMIT DELETE ROWS empties it at every commit; a rollback drops what the transaction added.
constexpr char kCreateStagingSql[] =
    "CREATE TEMP TABLE IF NOT EXISTS runs_incoming (LIKE runs INCLUDING DEFAULTS) "
    "ON COMMIT DELETE ROWS";

const std::string& CopyStagingSql() {
  static const std::string* sql =
      new std::string(absl::StrCat("COPY runs_incoming (", kRunRowColumns, ") FROM STDIN"));
  return *sql;
}

const std::string& MoveStagedSql() {
  static const std::string* sql = new std::string(absl::StrCat(
      "INSERT INTO runs (", kRunRowColumns, ") SELECT ", kRunRowColumns,
      " FROM runs_incoming ON CONFLICT (run_id) DO NOTHING RETURNING run_id::text"));
  return *sql;
}

}  // namespace

PgRunWriter::PgRunWriter(std::string database_url) : conn_(std::move(database_url)) {}

absl::Status PgRunWriter::Fail(const PgOutcome& outcome, std::string_view what) {
  if (outcome.sqlstate.empty()) conn_.Reset();
  return PgStatus(outcome.sqlstate, what, outcome.message);
}

PgOutcome PgRunWriter::CopyAll(absl::Span<const std::string_view> chunks) {
  // Outside a transaction block a COPY is its own transaction: it returns once committed.
  return conn_.Copy(CopyRunsSql(), chunks);
}

absl::StatusOr<std::vector<RunStoreResult>> PgRunWriter::StoreRuns(
    absl::Span<const PreparedRuns* const> groups) {
  size_t total = 0;
  for (const PreparedRuns* g : groups) total += g->runs.size();
  std::vector<RunStoreResult> results(total);

  // A run_id twice in one group would fail the COPY: the second one is a duplicate already.
  std::vector<Row> rows;
  rows.reserve(total);
  std::vector<std::string_view> chunks;
  std::unordered_set<std::string_view> seen;
  seen.reserve(total);
  size_t index = 0;
  for (const PreparedRuns* g : groups) {
    const size_t first_row = rows.size();
    bool whole = true;
    for (const PreparedRun& run : g->runs) {
      std::string_view line(g->rows.data() + run.offset, run.size);
      if (seen.insert(run.run_id).second) {
        rows.push_back(Row{run.run_id, line, index});
      } else {
        results[index].outcome = StoreOutcome::kDuplicate;
        whole = false;
      }
      ++index;
    }
    if (whole) {
      // The common case: the batch's buffer goes out as it is, in one piece.
      if (!g->rows.empty()) chunks.emplace_back(g->rows);
    } else {
      for (size_t i = first_row; i < rows.size(); ++i) chunks.push_back(rows[i].line);
    }
  }
  if (rows.empty()) return results;

  PgOutcome copied = CopyAll(chunks);
  if (copied.ok) return results;  // all kStored
  if (copied.sqlstate == "23505") {
    bool content_error = false;
    absl::Status staged = StageAndInsert(chunks, rows, &results, &content_error);
    if (staged.ok()) return results;
    if (!content_error) return staged;
  } else if (!IsContentError(copied.sqlstate)) {
    return Fail(copied, "storing runs");
  }
  absl::Status one_by_one = OneByOne(rows, &results);
  if (!one_by_one.ok()) return one_by_one;
  return results;
}

absl::Status PgRunWriter::StageAndInsert(absl::Span<const std::string_view> chunks,
                                         const std::vector<Row>& rows,
                                         std::vector<RunStoreResult>* results,
                                         bool* content_error) {
  if (PgOutcome o = conn_.Exec(kCreateStagingSql); !o.ok) return Fail(o, "creating runs_incoming");
  if (PgOutcome o = conn_.Exec("BEGIN"); !o.ok) return Fail(o, "starting a transaction");
  auto abort = [&](const PgOutcome& o, std::string_view what) {
    *content_error = IsContentError(o.sqlstate);
    conn_.Exec("ROLLBACK");
    return Fail(o, what);
  };
  if (PgOutcome o = conn_.Copy(CopyStagingSql(), chunks); !o.ok) {
    return abort(o, "staging runs");
  }
  PgOutcome moved = conn_.Exec(MoveStagedSql());
  if (!moved.ok) return abort(moved, "moving staged runs");
  if (PgOutcome o = conn_.Exec("COMMIT"); !o.ok) return Fail(o, "committing runs");
  std::unordered_set<std::string_view> stored(moved.first_column.begin(),
                                              moved.first_column.end());
  for (const Row& row : rows) {
    (*results)[row.result].outcome =
        stored.count(row.run_id) > 0 ? StoreOutcome::kStored : StoreOutcome::kDuplicate;
  }
  return absl::OkStatus();
}

absl::Status PgRunWriter::OneByOne(const std::vector<Row>& rows,
                                   std::vector<RunStoreResult>* results) {
  // Slow, and only for a group the database refused: each row under its own savepoint, so the
  // bad ones are refused with the database's reason and the rest still commit together.
  if (PgOutcome o = conn_.Exec("BEGIN"); !o.ok) return Fail(o, "starting a transaction");
  for (const Row& row : rows) {
    if (PgOutcome o = conn_.Exec("SAVEPOINT one_run"); !o.ok) {
      if (!o.sqlstate.empty()) conn_.Exec("ROLLBACK");
      return Fail(o, "storing runs one by one");
    }
    PgOutcome copied = conn_.Copy(CopyRunsSql(), {row.line});
    RunStoreResult& result = (*results)[row.result];
    if (copied.ok) {
      result.outcome = StoreOutcome::kStored;
      continue;
    }
    if (copied.sqlstate.empty()) return Fail(copied, "storing runs one by one");
    if (PgOutcome o = conn_.Exec("ROLLBACK TO SAVEPOINT one_run"); !o.ok) {
      conn_.Exec("ROLLBACK");
      return Fail(o, "storing runs one by one");
    }
    if (copied.sqlstate == "23505") {
      result.outcome = StoreOutcome::kDuplicate;
    } else if (IsContentError(copied.sqlstate)) {
      result.outcome = StoreOutcome::kRefused;
      result.reason = absl::StrCat("the database refused the record: ", copied.message);
    } else {
      conn_.Exec("ROLLBACK");
      return Fail(copied, "storing runs one by one");
    }
  }
  if (PgOutcome o = conn_.Exec("COMMIT"); !o.ok) return Fail(o, "committing runs");
  return absl::OkStatus();
}

}  // namespace benchfleet::coordinator
