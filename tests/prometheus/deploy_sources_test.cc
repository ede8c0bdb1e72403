// The live test's readers and rewriters of deploy/ files, on fixed inputs.
#include "tests/prometheus/deploy_sources.h"

#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::testing {
namespace {

std::string NoLabel(const std::string&) { return ""; }

TEST(ExpandGrafanaVariablesTest, RegexMatchersGetDotStarEqualityMatchersARealValue) {
  const auto value = [](const std::string& label) { return label == "agent" ? "agent-1" : "?"; };
  EXPECT_EQ(ExpandGrafanaVariables(
                "sum by (agent) (rate(benchfleet_run_wall_seconds_count{agent=~\"$agent\", task=~\"${task}\"}[$__rate_interval]))",
                {}, value),
            "sum by (agent) (rate(benchfleet_run_wall_seconds_count{agent=~\".*\", task=~\".*\"}[1m]))");
  EXPECT_EQ(ExpandGrafanaVariables("benchfleet_run_last_figure{agent=\"[[agent]]\",mode!=\"$mode\"}", {}, value),
            "benchfleet_run_last_figure{agent=\"agent-1\",mode!=\"__matches_nothing__\"}");
}

TEST(ExpandGrafanaVariablesTest, OtherVariablesTakeTheDashboardValueUnknownOnesStay) {
  EXPECT_EQ(ExpandGrafanaVariables("topk($n, x[$window]) > $__range_s + $missing", {{"n", "5"}, {"window", "10m"}}, NoLabel),
            "topk(5, x[10m]) > 300 + $missing");
}

TEST(DashboardExpressionsTest, FindsPrometheusTargetsInRowsAndVariablesSkipsSql) {
  const std::string dashboard = R"json({
    "templating": {"list": [
      {"name": "agent", "type": "query", "datasource": {"type": "prometheus", "uid": "prom"},
       "query": {"query": "label_values(benchfleet_coordinator_agent_connected, agent)"}},
      {"name": "window", "type": "interval", "query": "5m,1h", "current": {}},
      {"name": "run", "type": "query", "datasource": {"type": "grafana-postgresql-datasource"}, "query": "SELECT 1"}
    ]},
    "panels": [
      {"title": "Agents", "datasource": {"type": "prometheus", "uid": "prom"},
       "targets": [{"refId": "A", "expr": "sum(benchfleet_coordinator_agents_connected)"}]},
      {"title": "Runs", "datasource": {"type": "grafana-postgresql-datasource", "uid": "pg"},
       "targets": [{"refId": "A", "rawSql": "SELECT 1", "format": "table"}]},
      {"title": "Row", "type": "row", "collapsed": true, "panels": [
        {"title": "Inner", "targets": [{"refId": "B", "datasource": "Prometheus", "expr": "up[$window]"}]}
      ]}
    ]
  })json";
  std::string error;
  const std::vector<PromExpression> found = DashboardExpressions(dashboard, "d.json", &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].origin, "d.json panel \"Agents\" target A");
  EXPECT_EQ(found[0].expr, "sum(benchfleet_coordinator_agents_connected)");
  EXPECT_EQ(found[1].origin, "d.json panel \"Inner\" target B");
  EXPECT_EQ(ExpandGrafanaVariables(found[1].expr, found[1].variables, NoLabel), "up[5m]");
  EXPECT_EQ(found[2].origin, "d.json variable $agent");
  EXPECT_EQ(found[2].expr, "count by (agent) (benchfleet_coordinator_agent_connected)");
}

TEST(RuleExpressionsTest, ReadsAlertsAndRecordingRules) {
  std::string error;
  const std::vector<PromExpression> rules = RuleExpressions(
      "groups:\n- name: g\n  rules:\n  - record: job:x:sum\n    expr: sum(x)\n"
      "  - alert: BenchfleetAgentDown\n    expr: max by (agent) (y) == 0\n    for: 5m\n",
      &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_FALSE(rules[0].is_alert);
  EXPECT_EQ(rules[0].origin, "rules.yml group g record job:x:sum");
  EXPECT_TRUE(rules[1].is_alert);
  EXPECT_EQ(rules[1].alert, "BenchfleetAgentDown");
  EXPECT_EQ(rules[1].expr, "max by (agent) (y) == 0");
}

TEST(RewriteRulesTest, ShortensLongForKeepsShortOnes) {
  std::string error;
  const YAML::Node out = YAML::Load(RewriteRules(
      "groups:\n- name: g\n  interval: 30s\n  rules:\n  - alert: A\n    expr: x\n    for: 1h30m\n"
      "  - alert: B\n    expr: y\n    for: 1s\n  - alert: C\n    expr: z\n",
      "2s", &error));
  ASSERT_EQ(error, "");
  EXPECT_EQ(out["groups"][0]["interval"].as<std::string>(), "1s");
  EXPECT_EQ(out["groups"][0]["rules"][0]["for"].as<std::string>(), "2s");
  EXPECT_EQ(out["groups"][0]["rules"][1]["for"].as<std::string>(), "1s");
  EXPECT_FALSE(out["groups"][0]["rules"][2]["for"]);
}

TEST(RewritePrometheusConfigTest, TargetsComeFromTheTestsFilesLabelsKept) {
  std::string error;
  const TestConfig config = RewritePrometheusConfig(
      "global:\n  scrape_interval: 15s\n"
      "alerting:\n  alertmanagers: [{static_configs: [{targets: ['am:9093']}]}]\n"
      "rule_files: [rules.yml]\n"
      "scrape_configs:\n"
      "- job_name: benchfleet-coordinator\n  static_configs:\n  - targets: ['c1:9464', 'c2:9464']\n"
      "    labels: {service: benchfleet}\n"
      "- job_name: benchfleet-agents\n  file_sd_configs: [{files: ['/etc/prometheus/agents/*.json']}]\n"
      "- job_name: node\n  static_configs: [{targets: ['n:9100']}]\n",
      "/t/rules.yml", "/t/sd", &error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(config.jobs.at("benchfleet-coordinator"), JobRole::kCoordinator);
  EXPECT_EQ(config.jobs.at("benchfleet-agents"), JobRole::kAgent);
  EXPECT_EQ(config.jobs.at("node"), JobRole::kUnknown);
  EXPECT_EQ(config.target_labels.at("benchfleet-coordinator").at("service"), "benchfleet");
  const YAML::Node out = YAML::Load(config.prometheus_yml);
  EXPECT_EQ(out["global"]["scrape_interval"].as<std::string>(), "1s");
  EXPECT_EQ(out["global"]["evaluation_interval"].as<std::string>(), "1s");
  EXPECT_FALSE(out["alerting"]);
  EXPECT_EQ(out["rule_files"][0].as<std::string>(), "/t/rules.yml");
  EXPECT_FALSE(out["scrape_configs"][0]["static_configs"]);
  EXPECT_EQ(out["scrape_configs"][0]["file_sd_configs"][0]["files"][0].as<std::string>(),
            "/t/sd/benchfleet-coordinator.json");
  EXPECT_EQ(out["scrape_configs"][1]["file_sd_configs"].size(), 1u);
  EXPECT_EQ(out["scrape_configs"][1]["file_sd_configs"][0]["files"][0].as<std::string>(), "/t/sd/benchfleet-agents.json");
  EXPECT_EQ(FileSdTargets({"127.0.0.1:1"}, {{"service", "benchfleet"}}),
            "[\n  {\n    \"labels\": {\n      \"service\": \"benchfleet\"\n    },\n    \"targets\": [\n      \"127.0.0.1:1\"\n    ]\n  }\n]");
}

}  // namespace
}  // namespace benchfleet::testing
