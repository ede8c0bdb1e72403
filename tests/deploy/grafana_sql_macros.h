// Expands a Grafana PostgreSQL panel query the way Grafana does before PostgreSQL sees it, so the
// deploy tests can run the dashboards' SQL: first the dashboard's variables (Grafana's frontend),
// then the time macros (Grafana's SQL backend). Only what the dashboards use is supported; any
// other `$name` or `$__macro` is an error, so a dashboard cannot use one the tests do not emulate.
//
//   $var, ${var}                 a multi-value or include-All variable: each value single-quoted
//                                (quotes doubled) and comma-joined, e.g. 'a','b'; a single-value
//                                variable: the value as is, quotes doubled
//   $__timeFilter(col)           col BETWEEN '<from>' AND '<to>' (RFC 3339, UTC)
//   $__timeFrom(), $__timeTo()   '<from>', '<to>'
//   $__timeGroup(col, '1h')      floor(extract(epoch from col)/3600)*3600
//   $__timeGroupAlias(col, '1h') the same followed by AS "time"
//
// As in Grafana, a macro's arguments end at the first ')' (no nested calls) and intervals take
// the units s, m, h, d. Pure; thread-safe.
#ifndef BENCHFLEET_TESTS_DEPLOY_GRAFANA_SQL_MACROS_H_
#define BENCHFLEET_TESTS_DEPLOY_GRAFANA_SQL_MACROS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::testing {

struct GrafanaVariable {
  std::vector<std::string> values;
  bool multi = true;  // multi-value or include-All: values are quoted
};

struct GrafanaSqlContext {
  absl::Time from;
  absl::Time to;
  std::map<std::string, GrafanaVariable> variables;
};

// Returns `sql` with variables and macros expanded; INVALID_ARGUMENT naming what is not known.
absl::StatusOr<std::string> ExpandGrafanaSql(const std::string& sql, const GrafanaSqlContext& context);

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_DEPLOY_GRAFANA_SQL_MACROS_H_
