#include "coordinator/store/pg_run_queries.h"

#include <pqxx/binarystring>
#include <pqxx/connection>
#include <pqxx/result>
#include <pqxx/nontransaction>

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/proto_json.h"
#include "coordinator/store/pg_text.h"

namespace benchfleet::coordinator {
namespace {

constexpr char kTokenPrefix[] = "r1:";

// Builds a WHERE clause with numbered parameters.
class Where {
 public:
  // Adds `condition`, in which each "?" stands for the next of `values`.
  void Add(std::string_view condition, std::vector<std::string> values) {
    std::string text;
    size_t next = 0;
    for (char c : condition) {
      if (c == '?' && next < values.size()) {
        params_.push_back(std::move(values[next++]));
        absl::StrAppend(&text, "$", params_.size());
      } else {
        text += c;
      }
    }
    clauses_.push_back(std::move(text));
  }

  std::string Sql() const {
    if (clauses_.empty()) return "";
    std::string sql = " WHERE ";
    for (size_t i = 0; i < clauses_.size(); ++i) {
      if (i > 0) sql += " AND ";
      sql += clauses_[i];
    }
    return sql;
  }

  const std::vector<std::string>& params() const { return params_; }

 private:
  std::vector<std::string> clauses_;
  std::vector<std::string> params_;
};

constexpr char kMicrosToTimestamptz[] = "('epoch'::timestamptz + ?::bigint * interval '1 microsecond')";

// Appends each run's annotations (run_annotations: INVALIDATED by an operator, REGRESSION by
// the scheduler) to its flags, so every listing shows them and the guide can exclude them.
absl::Status AppendAnnotationFlags(pqxx::transaction_base& tx, std::vector<v1::RunRecord>* runs) {
  if (runs->empty()) return absl::OkStatus();
  std::vector<std::string> ids;
  std::map<std::string, v1::RunRecord*> by_id;
  for (v1::RunRecord& r : *runs) {
    // The key is the canonical lower-case form (runs.run_id is a uuid).
    const std::string id = absl::AsciiStrToLower(r.run_id());
    if (!IsUuid(id)) continue;
    ids.push_back(id);
    by_id[id] = &r;
  }
  const pqxx::result rows = tx.exec_params(
      "SELECT run_id::text, code, reason FROM run_annotations "
      "WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, created, code",
      TextArrayLiteral(ids));
  for (const auto& row : rows) {
    const auto it = by_id.find(row[0].c_str());
    if (it == by_id.end()) continue;
    v1::Flag* flag = it->second->add_flags();
    flag->set_code(row[1].c_str());
    flag->set_reason(row[2].c_str());
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodePageToken(const PagePosition& position) {
  return absl::StrCat(kTokenPrefix,
                      position.start_micros.has_value() ? absl::StrCat(*position.start_micros) : "-",
                      ":", position.run_id);
}

absl::StatusOr<PagePosition> DecodePageToken(const std::string& token) {
  const absl::Status bad = absl::InvalidArgumentError(
      "page_token is not valid: pass the next_page_token of the previous page unchanged");
  if (token.rfind(kTokenPrefix, 0) != 0) return bad;
  const std::string rest = token.substr(sizeof(kTokenPrefix) - 1);
  const size_t colon = rest.find(':');
  if (colon == std::string::npos) return bad;
  PagePosition position;
  const std::string time = rest.substr(0, colon);
  if (time != "-") {
    int64_t micros = 0;
    if (!absl::SimpleAtoi(time, &micros)) return bad;
    position.start_micros = micros;
  }
  position.run_id = rest.substr(colon + 1);
  if (!IsUuid(position.run_id)) return bad;
  return position;
}

absl::Status SelectRuns(pqxx::connection& conn, const RunQuery& query, RunPage* page) {
  Where where;
  if (!query.agent_ids.empty()) {
    where.Add("agent_id = ANY(?::text[])", {TextArrayLiteral(query.agent_ids)});
  }
  if (!query.labels.empty()) {
    where.Add("agent_id IN (SELECT agent_id FROM machines WHERE labels @> ?::jsonb)",
              {JsonStringObject(query.labels)});
  }
  if (!query.backend.empty()) where.Add("backend = ?", {query.backend});
  if (!query.task.empty()) where.Add("task = ?", {query.task});
  if (!query.series_id.empty()) where.Add("series_id = ?", {query.series_id});
  if (query.since.has_value()) where.Add("start_time >= ?::timestamptz", {TimestamptzLiteral(*query.since)});
  if (query.until.has_value()) where.Add("start_time < ?::timestamptz", {TimestamptzLiteral(*query.until)});
  if (!query.page_token.empty()) {
    absl::StatusOr<PagePosition> after = DecodePageToken(query.page_token);
    if (!after.ok()) return after.status();
    // Rows after (start_time, run_id) in "start_time DESC NULLS LAST, run_id DESC" order.
    if (after->start_micros.has_value()) {
      where.Add(absl::StrCat("((start_time, run_id) < (", kMicrosToTimestamptz,
                             ", ?::uuid) OR start_time IS NULL)"),
                {absl::StrCat(*after->start_micros), after->run_id});
    } else {
      where.Add("(start_time IS NULL AND run_id < ?::uuid)", {after->run_id});
    }
  }
  const int limit = query.page_size > 0 ? query.page_size : 1000;
  const std::string sql = absl::StrCat(
      "SELECT record_pb, record::text, (extract(epoch FROM start_time) * 1000000)::bigint, run_id::text "
      "FROM runs",
      where.Sql(), " ORDER BY start_time DESC NULLS LAST, run_id DESC LIMIT ", limit + 1);

  pqxx::nontransaction tx(conn);
  const pqxx::result rows = tx.exec_params(sql, pqxx::prepare::make_dynamic_params(where.params()));
  for (const auto& row : rows) {
    if (static_cast<int>(page->runs.size()) == limit) {
      // There is more: the token names the last run returned.
      const auto& last = rows[limit - 1];
      PagePosition position;
      if (!last[2].is_null()) position.start_micros = last[2].as<int64_t>();
      position.run_id = last[3].c_str();
      page->next_page_token = EncodePageToken(position);
      break;
    }
    // The record in binary (0007_lean_row.sql), or in JSON in the rows that have no binary copy.
    v1::RunRecord record;
    absl::Status parsed;
    if (!row[0].is_null()) {
      const pqxx::binarystring bytes(row[0]);
      if (!record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        parsed = absl::DataLossError("record_pb is not a RunRecord");
      }
    } else {
      parsed = JsonToMessage(row[1].c_str(), &record, /*ignore_unknown_fields=*/true);
    }
    if (!parsed.ok()) {
      return absl::DataLossError(
          absl::StrCat("run ", row[3].c_str(), " has an unreadable record: ", parsed.message()));
    }
    page->runs.push_back(std::move(record));
  }
  return AppendAnnotationFlags(tx, &page->runs);
}

}  // namespace benchfleet::coordinator
