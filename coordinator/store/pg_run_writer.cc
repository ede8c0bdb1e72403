#include "coordinator/store/pg_run_writer.h"

#include <unordered_map>
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

// After the move, in the same transaction: the staged runs whose run_id is stored with another
// content hash (a run just moved matches itself; a row stored before 0006 has none to compare).
constexpr char kConflictsSql[] =
    "SELECT i.run_id::text FROM runs_incoming i JOIN runs r USING (run_id) "
    "WHERE i.content_sha256 IS NOT NULL AND r.content_sha256 IS NOT NULL "
    "AND i.content_sha256 <> r.content_sha256";

void MarkConflict(std::string_view run_id, RunStoreResult* result) {
  result->outcome = StoreOutcome::kConflict;
  result->reason = absl::StrCat("conflict: run_id ", std::string(run_id), " already stored with different content");
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
  std::unordered_map<std::string_view, std::string_view> seen;  // run_id -> content hash
  seen.reserve(total);
  size_t index = 0;
  for (const PreparedRuns* g : groups) {
    const size_t first_row = rows.size();
    bool whole = true;
    for (const PreparedRun& run : g->runs) {
      std::string_view line(g->rows.data() + run.offset, run.size);
      const auto [first, inserted] = seen.emplace(run.run_id, run.content_sha256);
      if (inserted) {
        rows.push_back(Row{run.run_id, run.content_sha256, line, index});
      } else {
        if (first->second == run.content_sha256) {
          results[index].outcome = StoreOutcome::kDuplicate;
        } else {
          MarkConflict(run.run_id, &results[index]);
        }
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
  PgOutcome conflicts = conn_.Exec(kConflictsSql);
  if (!conflicts.ok) return abort(conflicts, "comparing re-sent runs");
  if (PgOutcome o = conn_.Exec("COMMIT"); !o.ok) return Fail(o, "committing runs");
  std::unordered_set<std::string_view> stored(moved.first_column.begin(),
                                              moved.first_column.end());
  std::unordered_set<std::string_view> conflicting(conflicts.first_column.begin(),
                                                   conflicts.first_column.end());
  for (const Row& row : rows) {
    RunStoreResult& result = (*results)[row.result];
    if (stored.count(row.run_id) > 0) {
      result.outcome = StoreOutcome::kStored;
    } else if (conflicting.count(row.run_id) > 0) {
      MarkConflict(row.run_id, &result);
    } else {
      result.outcome = StoreOutcome::kDuplicate;
    }
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
      // The run_id is canonical (a validated UUID, lower case): safe as a literal.
      PgOutcome stored = conn_.Exec(
          absl::StrCat("SELECT coalesce(content_sha256, '') FROM runs WHERE run_id = '", std::string(row.run_id), "'"));
      if (!stored.ok) {
        if (!stored.sqlstate.empty()) conn_.Exec("ROLLBACK");
        return Fail(stored, "comparing a re-sent run");
      }
      if (!stored.first_column.empty() && !stored.first_column.front().empty() &&
          stored.first_column.front() != row.content_sha256) {
        MarkConflict(row.run_id, &result);
      } else {
        result.outcome = StoreOutcome::kDuplicate;
      }
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
