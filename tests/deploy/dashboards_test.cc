// Static checks of deploy/: the Grafana dashboards (valid JSON, unique panel ids, every panel
// described and on a provisioned data source, PromQL naming only catalogued or recorded metrics,
// process and device memory never on one axis, no backend's metric named anywhere), the alert
// rules the live test keys on, and the small readers these checks use (catalogue, PromQL names,
// Grafana SQL macros).
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/backends/comfyui/figures.h"
#include "agent/backends/llama_server/figures.h"
#include "agent/backends/openai/figures.h"
#include "agent/backends/workflow/figures.h"
#include "agent/probes/device_sampler.h"
#include "agent/runner/steady_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/deploy/deploy_files.h"
#include "tests/deploy/grafana_sql_macros.h"
#include "tests/deploy/promql_names.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsSupersetOf;
using ::testing::UnorderedElementsAre;

// Process and host memory (RAM) versus accelerator memory: never on one axis.
const std::set<std::string>& HostKinds() {
  static const std::set<std::string> k = {"process_peak_rss", "process_footprint", "container_peak",
                                          "host_buffer"};
  return k;
}
const std::set<std::string>& DeviceKinds() {
  static const std::set<std::string> k = {"device_used", "device_buffer"};
  return k;
}

std::string TargetType(const nlohmann::json& panel, const nlohmann::json& target) {
  const nlohmann::json ds = target.value("datasource", panel.value("datasource", nlohmann::json::object()));
  return ds.value("type", "");
}

// Returns OK when the panel's queries name memory of one class only (host or device), and names
// the kinds explicitly wherever they select memory figures (else they could mix both).
absl::Status CheckMemoryOnOneAxis(const nlohmann::json& panel) {
  static const std::regex kSqlKind("MEMORY_KIND_([A-Z_]+)");
  // The runs' `memory` column (0007_lean_row.sql), or `memory` of a whole record.
  static const std::regex kSqlMemory(R"(\bmemory\b)");
  std::set<std::string> kinds;
  for (const auto& target : panel.value("targets", nlohmann::json::array())) {
    const std::string type = TargetType(panel, target);
    if (type == "prometheus") {
      const std::string expr = target.value("expr", "");
      if (expr.find("memory_peak_bytes") == std::string::npos) continue;
      const std::vector<LabelMatcher> matchers = MatchersOf(expr, "kind");
      if (matchers.empty()) {
        return absl::FailedPreconditionError(absl::StrCat("selects memory of every kind: ", expr));
      }
      for (const LabelMatcher& m : matchers) {
        if (m.op != "=" && m.op != "=~") {
          return absl::FailedPreconditionError(absl::StrCat("excludes kinds instead of naming them: ", expr));
        }
        for (absl::string_view k : absl::StrSplit(m.value, '|')) kinds.insert(std::string(k));
      }
    } else {
      const std::string sql = target.value("rawSql", "");
      size_t before = kinds.size();
      for (auto it = std::sregex_iterator(sql.begin(), sql.end(), kSqlKind); it != std::sregex_iterator(); ++it) {
        kinds.insert(absl::AsciiStrToLower((*it)[1].str()));
      }
      if (std::regex_search(sql, kSqlMemory) && kinds.size() == before) {
        return absl::FailedPreconditionError("reads the records' memory without naming its kinds");
      }
    }
  }
  std::vector<std::string> host, device;
  for (const auto& k : kinds) {
    if (HostKinds().count(k)) {
      host.push_back(k);
    } else if (DeviceKinds().count(k)) {
      device.push_back(k);
    } else {
      return absl::FailedPreconditionError(absl::StrCat("unknown memory kind ", k));
    }
  }
  if (!host.empty() && !device.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("puts host memory (", absl::StrJoin(host, ", "),
                                                      ") and device memory (", absl::StrJoin(device, ", "),
                                                      ") on one axis"));
  }
  return absl::OkStatus();
}

class DashboardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::vector<Dashboard>> d = LoadDashboards();
    ASSERT_TRUE(d.ok()) << d.status();
    dashboards_ = std::move(*d);
  }
  std::vector<Dashboard> dashboards_;
};

TEST_F(DashboardsTest, EveryDashboardIsValidJsonWithItsOwnUid) {
  std::vector<std::string> files, uids;
  for (const auto& d : dashboards_) {
    files.push_back(d.file);
    uids.push_back(d.json.value("uid", ""));
    EXPECT_EQ(d.json.value("schemaVersion", 0), 38) << d.file;
    EXPECT_FALSE(d.json.value("title", "").empty()) << d.file;
    EXPECT_FALSE(d.json.value("description", "").empty()) << d.file;
    EXPECT_FALSE(Panels(d.json).empty()) << d.file;
  }
  EXPECT_THAT(files, ElementsAre("fleet-overview.json", "memory.json", "per-run.json", "task-performance.json"));
  EXPECT_THAT(uids, ElementsAre("benchfleet-fleet-overview", "benchfleet-memory", "benchfleet-per-run",
                                "benchfleet-task-performance"));
}

TEST_F(DashboardsTest, PanelIdsAreUniqueAndEveryPanelIsDescribed) {
  for (const auto& d : dashboards_) {
    std::set<int> ids;
    for (const nlohmann::json* p : Panels(d.json)) {
      const int id = p->value("id", 0);
      EXPECT_GT(id, 0) << d.file << ": " << p->value("title", "");
      EXPECT_TRUE(ids.insert(id).second) << d.file << ": panel id " << id << " is used twice";
      EXPECT_FALSE(p->value("title", "").empty()) << d.file << ": panel " << id;
      if (p->value("type", "") == "row") continue;
      EXPECT_FALSE(p->value("description", "").empty()) << d.file << ": " << p->value("title", "");
      EXPECT_FALSE(p->value("targets", nlohmann::json::array()).empty()) << d.file << ": " << p->value("title", "");
    }
  }
}

TEST_F(DashboardsTest, EveryPanelAndQueryNamesAProvisionedDatasource) {
  absl::StatusOr<std::map<std::string, std::string>> provisioned = ProvisionedDatasources();
  ASSERT_TRUE(provisioned.ok()) << provisioned.status();
  EXPECT_THAT(*provisioned, UnorderedElementsAre(std::pair<const std::string, std::string>("benchfleet-prometheus", "prometheus"),
                                                 std::pair<const std::string, std::string>("benchfleet-postgres", "postgres")));
  // No secret in the file: the read-only role's password comes from Grafana's environment.
  const YAML::Node file = YAML::LoadFile(SourceDir() + "/deploy/grafana/provisioning/datasources/benchfleet.yaml");
  for (const auto& ds : file["datasources"]) {
    if (ds["type"].as<std::string>() != "postgres") continue;
    EXPECT_EQ(ds["user"].as<std::string>(), "benchfleet_grafana");
    EXPECT_EQ(ds["secureJsonData"]["password"].as<std::string>(), "${BENCHFLEET_GRAFANA_PG_PASSWORD}");
  }
  for (const auto& d : dashboards_) {
    for (const nlohmann::json* p : Panels(d.json)) {
      if (p->value("type", "") == "row") continue;
      const nlohmann::json ds = p->value("datasource", nlohmann::json::object());
      const std::string where = absl::StrCat(d.file, ": ", p->value("title", ""));
      ASSERT_TRUE(ds.is_object()) << where << " names no data source";
      const auto it = provisioned->find(ds.value("uid", ""));
      ASSERT_NE(it, provisioned->end()) << where << " names data source uid '" << ds.value("uid", "") << "'";
      EXPECT_EQ(ds.value("type", ""), it->second) << where;
    }
    for (const DashboardQuery& q : Queries(d)) {
      const auto it = provisioned->find(q.datasource_uid);
      ASSERT_NE(it, provisioned->end()) << d.file << ": " << q.name << " uid '" << q.datasource_uid << "'";
      EXPECT_EQ(q.datasource_type, it->second) << d.file << ": " << q.name;
      EXPECT_FALSE(q.text.empty()) << d.file << ": " << q.name << " has no query";
    }
  }
}

TEST_F(DashboardsTest, SqlQueriesAreRawCodeInAFormatGrafanaKnows) {
  int sql = 0;
  for (const auto& d : dashboards_) {
    for (const nlohmann::json* p : Panels(d.json)) {
      for (const auto& t : p->value("targets", nlohmann::json::array())) {
        if (TargetType(*p, t) != "postgres") continue;
        ++sql;
        EXPECT_TRUE(t.value("rawQuery", false)) << d.file << ": " << p->value("title", "");
        EXPECT_EQ(t.value("editorMode", ""), "code") << d.file << ": " << p->value("title", "");
        EXPECT_THAT(t.value("format", ""), ::testing::AnyOf("time_series", "table")) << p->value("title", "");
      }
    }
  }
  EXPECT_EQ(sql, 8);  // memory.json 2, per-run.json 6: grafana_sql_test runs each
}

// Every $variable a query uses is defined. A variable SQL reads has no custom "All" value:
// Grafana inserts that one raw (e.g. `.*`), so "All" must expand to the quoted list of values.
TEST_F(DashboardsTest, EveryVariableAQueryUsesIsDefined) {
  static const std::regex kVariable("\\$\\{?([A-Za-z][A-Za-z0-9_]*)");
  int variables_used = 0;
  for (const auto& d : dashboards_) {
    std::map<std::string, nlohmann::json> defined;
    for (const auto& v : d.json["templating"]["list"]) defined[v.value("name", "")] = v;
    for (const DashboardQuery& q : Queries(d)) {
      for (auto it = std::sregex_iterator(q.text.begin(), q.text.end(), kVariable); it != std::sregex_iterator(); ++it) {
        const std::string name = (*it)[1].str();
        ++variables_used;
        ASSERT_TRUE(defined.count(name)) << d.file << ": " << q.name << " uses $" << name;
        if (q.datasource_type == "postgres") {
          EXPECT_EQ(defined[name].value("allValue", ""), "") << d.file << ": $" << name << " is read by SQL in " << q.name;
        }
      }
    }
  }
  EXPECT_GT(variables_used, 0);
}

// Every PromQL expression of the dashboards and of rules.yml names only series the catalogue
// documents, Prometheus' own `up`, or a recording rule of rules.yml.
TEST_F(DashboardsTest, PromqlNamesOnlyCataloguedOrRecordedMetrics) {
  absl::StatusOr<std::set<std::string>> catalogue = CatalogueSeries();
  ASSERT_TRUE(catalogue.ok()) << catalogue.status();
  absl::StatusOr<std::set<std::string>> recorded = RecordingRuleNames();
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  std::set<std::string> known = *catalogue;
  known.insert(recorded->begin(), recorded->end());
  known.insert("up");

  std::vector<std::pair<std::string, std::string>> expressions;  // where, expr
  for (const auto& d : dashboards_) {
    for (const DashboardQuery& q : Queries(d)) {
      if (q.datasource_type == "prometheus") expressions.emplace_back(d.file + ": " + q.name, q.text);
    }
  }
  const YAML::Node rules = YAML::LoadFile(SourceDir() + "/deploy/prometheus/rules.yml");
  for (const auto& group : rules["groups"]) {
    for (const auto& rule : group["rules"]) {
      const std::string name = rule["record"] ? rule["record"].as<std::string>() : rule["alert"].as<std::string>();
      expressions.emplace_back("rules.yml: " + name, rule["expr"].as<std::string>());
    }
  }
  ASSERT_GT(expressions.size(), 50u);
  std::set<std::string> used;
  for (const auto& [where, expr] : expressions) {
    const std::set<std::string> names = MetricNamesIn(expr);
    EXPECT_FALSE(names.empty()) << where << ": no metric in " << expr;
    for (const auto& n : names) {
      EXPECT_TRUE(known.count(n)) << where << ": " << n << " is neither in coordinator/metrics/README.md nor recorded in rules.yml";
      used.insert(n);
    }
  }
  // Each recording rule exists for a dashboard or another rule.
  for (const auto& r : *recorded) EXPECT_TRUE(used.count(r)) << r << " is recorded but never used";
}

TEST_F(DashboardsTest, ProcessAndDeviceMemoryNeverShareAnAxis) {
  int host_panels = 0, device_panels = 0;
  for (const auto& d : dashboards_) {
    for (const nlohmann::json* p : Panels(d.json)) {
      absl::Status s = CheckMemoryOnOneAxis(*p);
      EXPECT_TRUE(s.ok()) << d.file << ": " << p->value("title", "") << ": " << s.message();
      const std::string text = p->dump();
      if (text.find("process_peak_rss") != std::string::npos || text.find("PROCESS_PEAK_RSS") != std::string::npos) ++host_panels;
      if (text.find("device_used") != std::string::npos || text.find("DEVICE_USED") != std::string::npos) ++device_panels;
    }
  }
  // memory.json: one Prometheus and one SQL panel of each.
  EXPECT_EQ(host_panels, 2);
  EXPECT_EQ(device_panels, 2);
}

// The dashboards, the rules and the alerts read the figures' declarations (the headline columns
// and the figure labels the coordinator derives from them), never a backend's metric: adding a
// backend adds its declaration and nothing here. A declared name is searched as a whole
// identifier; one-word names ("images", "requests") are words of any text and are left out.
TEST_F(DashboardsTest, NoDashboardRuleOrAlertNamesABackendsMetric) {
  std::set<std::string> names;
  for (FigureDeclarations figures : {FigureDeclarations(agent::llama_server::kFigures),
                                     FigureDeclarations(agent::comfyui::kFigures),
                                     FigureDeclarations(agent::openai::kFigures),
                                     FigureDeclarations(agent::workflow::kFigures),
                                     FigureDeclarations(agent::kDeviceFigures),
                                     FigureDeclarations(agent::kSteadyStateFigures)}) {
    for (const FigureDeclaration& f : figures) {
      if (f.name.find('_') != std::string_view::npos) names.insert(std::string(f.name));
    }
  }
  ASSERT_GT(names.size(), 30u);
  std::vector<std::pair<std::string, std::string>> files;  // name, text
  for (const auto& d : dashboards_) files.emplace_back("deploy/grafana/dashboards/" + d.file, d.json.dump());
  for (const char* path : {"/deploy/prometheus/rules.yml", "/deploy/prometheus/rules_test.yml",
                           "/deploy/grafana/postgres-readonly-role.sql"}) {
    absl::StatusOr<std::string> text = ReadTextFile(SourceDir() + path);
    ASSERT_TRUE(text.ok()) << text.status();
    files.emplace_back(path + 1, *text);
  }
  auto identifier_char = [](char c) { return absl::ascii_isalnum(c) || c == '_'; };
  for (const auto& [file, text] : files) {
    for (const std::string& name : names) {
      for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
        const bool starts = at == 0 || !identifier_char(text[at - 1]);
        const bool ends = at + name.size() == text.size() || !identifier_char(text[at + name.size()]);
        EXPECT_FALSE(starts && ends) << file << " names the backends' metric " << name
                                     << ": read the headline columns or figure labels instead";
      }
    }
  }
}

TEST(MemoryAxisCheckTest, CatchesAPanelThatMixesOrDoesNotNameKinds) {
  const nlohmann::json prom = {{"type", "prometheus"}, {"uid", "benchfleet-prometheus"}};
  const nlohmann::json pg = {{"type", "postgres"}, {"uid", "benchfleet-postgres"}};
  nlohmann::json mixed = {{"datasource", prom},
                          {"targets", {{{"expr", "benchfleet_run_last_memory_peak_bytes{kind=~\"process_peak_rss|device_used\"}"}}}}};
  EXPECT_EQ(CheckMemoryOnOneAxis(mixed).message(),
            "puts host memory (process_peak_rss) and device memory (device_used) on one axis");
  nlohmann::json two_targets = {{"datasource", prom},
                                {"targets", {{{"expr", "benchfleet_run_last_memory_peak_bytes{kind=\"host_buffer\"}"}},
                                             {{"expr", "benchfleet_run_last_memory_peak_bytes{kind=\"device_buffer\"}"}}}}};
  EXPECT_EQ(CheckMemoryOnOneAxis(two_targets).message(),
            "puts host memory (host_buffer) and device memory (device_buffer) on one axis");
  nlohmann::json unnamed = {{"datasource", prom}, {"targets", {{{"expr", "max(benchfleet:run_last_memory_peak_bytes:latest)"}}}}};
  EXPECT_EQ(CheckMemoryOnOneAxis(unnamed).message(),
            "selects memory of every kind: max(benchfleet:run_last_memory_peak_bytes:latest)");
  nlohmann::json excluded = {{"datasource", prom},
                             {"targets", {{{"expr", "benchfleet_run_last_memory_peak_bytes{kind!=\"device_used\"}"}}}}};
  EXPECT_EQ(CheckMemoryOnOneAxis(excluded).message(),
            "excludes kinds instead of naming them: benchfleet_run_last_memory_peak_bytes{kind!=\"device_used\"}");
  nlohmann::json sql_mixed = {{"datasource", pg},
                              {"targets", {{{"rawSql", "SELECT 1 FROM runs r, jsonb_array_elements(r.memory) m "
                                                        "WHERE m ->> 'kind' IN ('MEMORY_KIND_DEVICE_USED', 'MEMORY_KIND_PROCESS_FOOTPRINT')"}}}}};
  EXPECT_EQ(CheckMemoryOnOneAxis(sql_mixed).message(),
            "puts host memory (process_footprint) and device memory (device_used) on one axis");
  nlohmann::json sql_unnamed = {{"datasource", pg},
                                {"targets", {{{"rawSql", "SELECT 1 FROM runs r, jsonb_array_elements(r.memory) m"}}}}};
  EXPECT_EQ(CheckMemoryOnOneAxis(sql_unnamed).message(), "reads the records' memory without naming its kinds");
  nlohmann::json device_only = {{"datasource", prom},
                                {"targets", {{{"expr", "benchfleet_run_last_memory_peak_bytes{kind=~\"device_used|device_buffer\"}"}}}}};
  EXPECT_TRUE(CheckMemoryOnOneAxis(device_only).ok());
}

// ---- rules.yml: what the live test (tests/prometheus/) and Alertmanager routes rely on ----

TEST(RulesTest, TheAlertsExistWithSeverityAndAnnotations) {
  const YAML::Node rules = YAML::LoadFile(SourceDir() + "/deploy/prometheus/rules.yml");
  std::vector<std::string> alerts;
  for (const auto& group : rules["groups"]) {
    for (const auto& rule : group["rules"]) {
      if (!rule["alert"]) continue;
      const std::string name = rule["alert"].as<std::string>();
      alerts.push_back(name);
      EXPECT_THAT(rule["labels"]["severity"].as<std::string>(""), ::testing::AnyOf("critical", "warning", "info")) << name;
      EXPECT_FALSE(rule["annotations"]["summary"].as<std::string>("").empty()) << name;
      EXPECT_FALSE(rule["annotations"]["description"].as<std::string>("").empty()) << name;
    }
  }
  EXPECT_THAT(alerts, UnorderedElementsAre("BenchfleetAgentDown", "BenchfleetScrapeTargetDown",
                                           "BenchfleetRegressionDetected", "BenchfleetThroughputDrop",
                                           "BenchfleetCacheHit", "BenchfleetRunsFailed", "BenchfleetIngestErrors",
                                           "BenchfleetOutboxBackingUp", "BenchfleetAgentCertificateExpiring"));
}

TEST(RulesTest, RecordingRulesFollowLevelMetricOperations) {
  absl::StatusOr<std::set<std::string>> recorded = RecordingRuleNames();
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ(recorded->size(), 21u);
  for (const auto& name : *recorded) {
    const std::vector<std::string> parts = absl::StrSplit(name, ':');
    ASSERT_EQ(parts.size(), 3u) << name;
    EXPECT_EQ(parts[0], "benchfleet") << name;
    EXPECT_FALSE(parts[1].empty()) << name;
    EXPECT_FALSE(parts[2].empty()) << name;
  }
}

// ---- The readers the checks above rely on ----

TEST(CatalogueTest, ReadsCountersGaugesAndHistogramSeries) {
  absl::StatusOr<std::set<std::string>> catalogue = CatalogueSeries();
  ASSERT_TRUE(catalogue.ok()) << catalogue.status();
  EXPECT_THAT(*catalogue, IsSupersetOf({"benchfleet_coordinator_agent_connected", "benchfleet_fleet_tasks",
                                        "benchfleet_coordinator_records_total", "benchfleet_runs_flagged_total",
                                        "benchfleet_run_last_wall_seconds", "benchfleet_run_wall_seconds_bucket",
                                        "benchfleet_run_wall_seconds_sum", "benchfleet_run_wall_seconds_count",
                                        "benchfleet_run_last_memory_peak_bytes",
                                        "benchfleet_coordinator_commit_duration_seconds_bucket",
                                        "benchfleet_agent_outbox_records", "benchfleet_agent_coordinator_connected"}));
  // A histogram's own name is no series.
  EXPECT_EQ(catalogue->count("benchfleet_run_wall_seconds"), 0u);
  EXPECT_EQ(catalogue->count("benchfleet_coordinator_commit_duration_seconds"), 0u);
}

TEST(PromqlNamesTest, FindsMetricsButNotFunctionsLabelsKeywordsOrVariables) {
  EXPECT_THAT(MetricNamesIn("sum by (agent, task) (increase(benchfleet_runs_flagged_total{flag=\"regression\"}[1h])) > 0"),
              ElementsAre("benchfleet_runs_flagged_total"));
  EXPECT_THAT(MetricNamesIn("benchfleet_agent_outbox_records > 0 and on(instance) benchfleet_agent_coordinator_connected == 0"),
              ElementsAre("benchfleet_agent_coordinator_connected", "benchfleet_agent_outbox_records"));
  EXPECT_THAT(MetricNamesIn("histogram_quantile(0.95, benchfleet:coordinator_commit_duration_seconds_bucket:rate5m)"),
              ElementsAre("benchfleet:coordinator_commit_duration_seconds_bucket:rate5m"));
  EXPECT_THAT(MetricNamesIn("label_values(benchfleet_run_last_wall_seconds{agent=~\"$agent\"}, task)"),
              ElementsAre("benchfleet_run_last_wall_seconds"));
  EXPECT_THAT(MetricNamesIn("count(benchfleet:x:max == 0) or vector(0)"), ElementsAre("benchfleet:x:max"));
  EXPECT_THAT(MetricNamesIn("sum by (job) (up{job=~\"benchfleet-.*\"}) + max without (instance) (b)"),
              ElementsAre("b", "up"));
  EXPECT_THAT(MetricNamesIn("rate(foo_total[$__rate_interval]) / ignoring(code) group_left bar offset 5m"),
              ElementsAre("bar", "foo_total"));
}

TEST(PromqlNamesTest, ReadsLabelMatchers) {
  const std::vector<LabelMatcher> m =
      MatchersOf("max by (kind) (x{kind=~\"a|b\", agent=~\"$agent\"}) or y{kind = \"c\"} or z{subkind=\"d\"}", "kind");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].op, "=~");
  EXPECT_EQ(m[0].value, "a|b");
  EXPECT_EQ(m[1].op, "=");
  EXPECT_EQ(m[1].value, "c");
}

TEST(GrafanaSqlMacrosTest, ExpandsVariablesThenMacrosAsGrafanaDoes) {
  GrafanaSqlContext context;
  context.from = absl::FromUnixSeconds(1772445600);  // 2026-03-02T10:00:00Z
  context.to = absl::FromUnixSeconds(1772460000) + absl::Milliseconds(250);
  context.variables["agent"] = {{"a-1", "o'hara"}, true};
  context.variables["limit"] = {{"10"}, false};
  absl::StatusOr<std::string> sql = ExpandGrafanaSql(
      "SELECT $__timeGroupAlias(start_time, '1h'), count(*) FROM runs WHERE $__timeFilter(start_time) AND "
      "agent_id IN ($agent) AND ${agent} IS NOT NULL AND start_time > $__timeFrom() LIMIT $limit",
      context);
  ASSERT_TRUE(sql.ok()) << sql.status();
  EXPECT_EQ(*sql,
            "SELECT floor(extract(epoch from start_time)/3600)*3600 AS \"time\", count(*) FROM runs WHERE "
            "start_time BETWEEN '2026-03-02T10:00:00Z' AND '2026-03-02T14:00:00.25Z' AND "
            "agent_id IN ('a-1','o''hara') AND 'a-1','o''hara' IS NOT NULL AND start_time > '2026-03-02T10:00:00Z' LIMIT 10");
  EXPECT_EQ(ExpandGrafanaSql("SELECT $__timeGroup(t, 5m)", context).value(),
            "SELECT floor(extract(epoch from t)/300)*300");
}

TEST(GrafanaSqlMacrosTest, RefusesWhatItDoesNotEmulate) {
  GrafanaSqlContext context;
  EXPECT_EQ(ExpandGrafanaSql("SELECT $task", context).status().message(), "unknown variable $task");
  EXPECT_EQ(ExpandGrafanaSql("SELECT $__unixEpochFilter(t)", context).status().message(),
            "unsupported macro $__unixEpochFilter");
  EXPECT_EQ(ExpandGrafanaSql("SELECT $__interval", context).status().message(),
            "unsupported macro $__interval (no arguments)");
  EXPECT_EQ(ExpandGrafanaSql("SELECT $__timeGroup(t, '1w')", context).status().message(),
            "bad interval unit in '1w'");
}

}  // namespace
}  // namespace benchfleet::testing
