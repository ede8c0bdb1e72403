// What the live test reads from deploy/ at run time, whatever those files hold: every PromQL
// expression of the rules and of the Grafana dashboards (with Grafana's variables expanded), the
// alert names, and test copies of prometheus.yml and rules.yml (targets from files the test
// writes, 1 s intervals, shortened `for:`). Pure functions over file contents; thread-safe.
#ifndef BENCHFLEET_TESTS_PROMETHEUS_DEPLOY_SOURCES_H_
#define BENCHFLEET_TESTS_PROMETHEUS_DEPLOY_SOURCES_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace benchfleet::testing {

// One PromQL expression and where it was found.
struct PromExpression {
  std::string origin;   // e.g. "rules.yml group benchfleet alert BenchfleetAgentDown"
  std::string expr;     // as written
  bool is_alert = false;
  std::string alert;    // the alert's name, when is_alert
  // Grafana variables with their dashboard values (name -> value); empty for rules.
  std::map<std::string, std::string> variables;
};

// Returns the rules of a rules.yml (Prometheus' rule file format); *error says what is wrong
// when it cannot be read.
std::vector<PromExpression> RuleExpressions(const std::string& yaml_text, std::string* error);

// Returns every PromQL expression of a dashboard JSON (panels, rows, collapsed rows; targets
// whose data source is not a SQL one; query variables of the templating). `file` names it.
std::vector<PromExpression> DashboardExpressions(const std::string& json_text, const std::string& file,
                                                 std::string* error);

// Returns expr with Grafana's variables replaced: inside a label matcher, `=~`/`!~` get the regex
// `.*` / one that matches nothing, `=`/`!=` a real value of that label (label_value(label); ""
// when there is none); elsewhere the dashboard's value of the variable, or for Grafana's own
// `$__rate_interval`, `$__interval`, `$__range`... fixed values fit for a short test.
std::string ExpandGrafanaVariables(const std::string& expr, const std::map<std::string, std::string>& variables,
                                   const std::function<std::string(const std::string&)>& label_value);

// What a scrape job of prometheus.yml scrapes, judged by its name.
enum class JobRole { kCoordinator, kAgent, kPrometheus, kUnknown };
JobRole RoleOfJob(const std::string& job_name);

struct TestConfig {
  std::string prometheus_yml;                 // the rewritten configuration
  std::map<std::string, JobRole> jobs;        // job name -> role
  std::map<std::string, std::string> target_files;  // job name -> the file_sd file it reads
  // job name -> the labels its static_configs gave its targets
  std::map<std::string, std::map<std::string, std::string>> target_labels;
};

// Rewrites prometheus.yml for the test: global and per-job scrape/evaluation intervals 1 s,
// rule_files = [rules_path], no alerting/remote storage, each job's targets read from
// sd_dir/JOB.json (static and service-discovery configs dropped, their labels kept), plain HTTP.
TestConfig RewritePrometheusConfig(const std::string& yaml_text, const std::string& rules_path,
                                   const std::string& sd_dir, std::string* error);

// Rewrites rules.yml: each `for:` longer than max_for becomes max_for, group intervals 1 s.
std::string RewriteRules(const std::string& yaml_text, const std::string& max_for, std::string* error);

// Returns the file_sd JSON listing these targets (host:port) with the labels the original
// configuration gave them.
std::string FileSdTargets(const std::vector<std::string>& targets, const std::map<std::string, std::string>& labels);

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_PROMETHEUS_DEPLOY_SOURCES_H_
