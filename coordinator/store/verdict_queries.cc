#include "coordinator/store/verdict_queries.h"

#include <utility>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "common/proto_json.h"
#include "coordinator/store/pg_text.h"

namespace benchfleet::coordinator {
namespace {

// $1: the tasks as a text[] literal, NULL for every task; $2: the earliest start, NULL for any.
constexpr char kNewestVerdictsSql[] = R"sql(
SELECT verdict, run_id, agent_id, task, conditions_fingerprint FROM (
  SELECT DISTINCT ON (r.agent_id, r.task, r.mode, r.phase, g.verdict -> 'matrix')
    g.verdict::text AS verdict, g.run_id, r.agent_id, r.task, r.conditions_fingerprint, r.mode, r.phase,
    COALESCE(g.verdict -> 'matrix', 'null'::jsonb)::text AS matrix
  FROM regressions g JOIN runs r ON r.run_id = g.run_id
  WHERE ($1::text[] IS NULL OR r.task = ANY($1::text[]))
    AND ($2::timestamptz IS NULL OR r.start_time >= $2::timestamptz)
  ORDER BY r.agent_id, r.task, r.mode, r.phase, g.verdict -> 'matrix', r.start_time DESC NULLS LAST,
           g.created DESC, g.run_id DESC
) newest
ORDER BY agent_id, task, mode, phase, matrix
)sql";

}  // namespace

v1::ListRegressionChecksResponse SelectNewestVerdicts(pqxx::transaction_base& tx, const std::vector<std::string>& tasks,
                                    const std::optional<absl::Time>& since) {
  v1::ListRegressionChecksResponse result;
  if (!tx.exec("SELECT to_regclass('regressions') IS NOT NULL")[0][0].as<bool>()) return result;
  std::optional<std::string> tasks_array;
  if (!tasks.empty()) tasks_array = TextArrayLiteral(tasks);
  std::optional<std::string> since_text;
  if (since.has_value()) since_text = absl::FormatTime(absl::RFC3339_full, *since, absl::UTCTimeZone());
  for (const auto& row : tx.exec_params(kNewestVerdictsSql, tasks_array, since_text)) {
    v1::RegressionCheck check;
    absl::Status parsed = JsonToMessage(row[0].c_str(), check.mutable_verdict(), /*ignore_unknown_fields=*/true);
    if (!parsed.ok()) {
      result.add_unreadable(absl::StrCat("regression verdict of run ", row[1].c_str(), " unreadable: ", parsed.message()));
      continue;
    }
    check.set_agent_id(row[2].c_str());
    check.set_task(row[3].c_str());
    check.set_conditions_fingerprint(row[4].c_str());
    *result.add_checks() = std::move(check);
  }
  return result;
}

}  // namespace benchfleet::coordinator
