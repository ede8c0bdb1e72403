// The files of deploy/ as the deploy tests read them: the Grafana dashboards and every query in
// them (panel targets, templating variables, annotations), the provisioned data sources, the
// metric catalogue (coordinator/metrics/README.md) and the recording rules (rules.yml).
// Test-only; pure functions over files, thread-compatible.
#ifndef BENCHFLEET_TESTS_DEPLOY_DEPLOY_FILES_H_
#define BENCHFLEET_TESTS_DEPLOY_DEPLOY_FILES_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace benchfleet::testing {

// Returns the checkout: $BENCHFLEET_SOURCE_DIR, else the directory this test was configured from.
std::string SourceDir();

// Returns the whole file, or NOT_FOUND naming it.
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

struct Dashboard {
  std::string file;  // e.g. "fleet-overview.json"
  nlohmann::json json;
};

// Parses every deploy/grafana/dashboards/*.json, sorted by file name. INVALID_ARGUMENT naming the
// file (and the parser's message) for a file that is not valid JSON.
absl::StatusOr<std::vector<Dashboard>> LoadDashboards();

// Every panel of a dashboard, rows included, with the panels nested in collapsed rows.
std::vector<const nlohmann::json*> Panels(const nlohmann::json& dashboard);

enum class QuerySource { kPanel, kVariable, kAnnotation };

struct DashboardQuery {
  std::string dashboard;        // file name
  QuerySource source = QuerySource::kPanel;
  std::string name;             // panel title, variable name or annotation name
  std::string datasource_type;  // "prometheus" or "postgres", the target's or else its panel's
  std::string datasource_uid;
  std::string text;             // PromQL (`expr`, or a variable's query) or SQL (`rawSql`)
  std::string format;           // SQL targets: "time_series" or "table"
};

// Every query of a dashboard, in document order: variables first, then annotations, then
// panels' targets. Grafana's built-in annotation is left out.
std::vector<DashboardQuery> Queries(const Dashboard& dashboard);

// The data sources of deploy/grafana/provisioning/datasources/benchfleet.yaml: uid -> type.
absl::StatusOr<std::map<std::string, std::string>> ProvisionedDatasources();

// The series names the catalogue (coordinator/metrics/README.md) documents: counters and gauges
// under their name, histograms as name_bucket, name_sum and name_count.
absl::StatusOr<std::set<std::string>> CatalogueSeries();

// The `record:` names of deploy/prometheus/rules.yml.
absl::StatusOr<std::set<std::string>> RecordingRuleNames();

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_DEPLOY_DEPLOY_FILES_H_
