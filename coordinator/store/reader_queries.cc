#include "coordinator/store/reader_queries.h"

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/proto_time.h"
#include "coordinator/store/pg_text.h"

namespace benchfleet::coordinator {

std::string RecordsCopySql(const std::vector<std::string>& quoted_tasks, const std::optional<absl::Time>& since) {
  std::vector<std::string> where;
  if (!quoted_tasks.empty()) where.push_back(absl::StrCat("task IN (", absl::StrJoin(quoted_tasks, ", "), ")"));
  if (since.has_value()) where.push_back(absl::StrCat("start_time >= '", FormatUtc(*since), "'::timestamptz"));
  return absl::StrCat("COPY (SELECT record_pb, CASE WHEN record_pb IS NULL THEN record END FROM runs",
                      where.empty() ? "" : " WHERE ", absl::StrJoin(where, " AND "), ") TO STDOUT");
}

std::vector<RunAnnotationRow> SelectRunAnnotations(pqxx::transaction_base& tx) {
  std::vector<RunAnnotationRow> out;
  if (!tx.exec("SELECT to_regclass('run_annotations') IS NOT NULL")[0][0].as<bool>()) return out;
  for (const auto& row : tx.exec("SELECT run_id::text, code, reason FROM run_annotations ORDER BY run_id, created, code")) {
    out.push_back({row[0].c_str(), row[1].c_str(), row[2].c_str()});
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> SelectConditionsJson(pqxx::transaction_base& tx,
                                                                     const std::vector<std::string>& fingerprints) {
  std::vector<std::pair<std::string, std::string>> out;
  if (fingerprints.empty()) return out;
  const pqxx::result rows = tx.exec_params(
      "SELECT fingerprint, conditions::text FROM conditions WHERE fingerprint = ANY($1::text[]) ORDER BY fingerprint",
      TextArrayLiteral(fingerprints));
  for (const auto& row : rows) out.emplace_back(row[0].c_str(), row[1].c_str());
  return out;
}

}  // namespace benchfleet::coordinator
