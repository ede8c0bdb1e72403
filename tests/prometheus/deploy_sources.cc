#include "tests/prometheus/deploy_sources.h"

#include <cctype>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

namespace benchfleet::testing {
namespace {

using nlohmann::json;

// Grafana's own variables, with values fit for a test whose data is a minute old at most.
const std::map<std::string, std::string>& BuiltinVariables() {
  static const auto* kBuiltins = new std::map<std::string, std::string>{
      {"__rate_interval", "1m"}, {"__interval", "15s"},  {"__interval_ms", "15000"},
      {"__range", "5m"},         {"__range_s", "300"},   {"__range_ms", "300000"},
      {"__auto_interval", "15s"},
  };
  return *kBuiltins;
}

// $name, ${name}, ${name:format}, [[name]], [[name:format]]
const std::regex& VariableRef() {
  static const auto* kRe =
      new std::regex(R"(\$\{([A-Za-z0-9_]+)(?::[^}]*)?\}|\[\[([A-Za-z0-9_]+)(?::[^\]]*)?\]\]|\$([A-Za-z0-9_]+))");
  return *kRe;
}

// Replaces each variable reference in text by value(name).
std::string ReplaceRefs(const std::string& text, const std::function<std::string(const std::string&)>& value) {
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), VariableRef());
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const std::string name = m[1].matched ? m[1].str() : m[2].matched ? m[2].str() : m[3].str();
    out += text.substr(last, m.position(0) - last);
    out += value(name);
    last = m.position(0) + m.length(0);
  }
  out += text.substr(last);
  return out;
}

bool IsSqlDataSource(const json& ds) {
  std::string text;
  if (ds.is_string()) text = ds.get<std::string>();
  if (ds.is_object()) text = ds.value("type", "") + " " + ds.value("uid", "");
  text = absl::AsciiStrToLower(text);
  return absl::StrContains(text, "postgres") || absl::StrContains(text, "sql");
}

std::string FirstValue(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array() && !v.empty() && v[0].is_string()) return v[0].get<std::string>();
  return "";
}

// The dashboard's value of each templating variable: its current value, else its first option,
// else the first item of its query (custom, interval, constant variables).
std::map<std::string, std::string> TemplateValues(const json& dashboard) {
  std::map<std::string, std::string> out;
  if (!dashboard.contains("templating") || !dashboard["templating"].contains("list")) return out;
  for (const json& v : dashboard["templating"]["list"]) {
    const std::string name = v.value("name", "");
    if (name.empty()) continue;
    std::string value;
    if (v.contains("current") && v["current"].is_object() && v["current"].contains("value")) {
      value = FirstValue(v["current"]["value"]);
    }
    if ((value.empty() || value == "$__all") && v.contains("options") && v["options"].is_array() &&
        !v["options"].empty()) {
      value = FirstValue(v["options"][0].value("value", json()));
    }
    if ((value.empty() || value == "$__all") && v.contains("query") && v["query"].is_string() &&
        v.value("type", "") != "query") {
      value = std::string(absl::StripAsciiWhitespace(
          std::vector<std::string>(absl::StrSplit(v["query"].get<std::string>(), ','))[0]));
    }
    if (value == "$__all") value = ".*";
    if (absl::StartsWith(value, "$__auto_interval")) value = "15s";
    out[name] = value;
  }
  return out;
}

void CollectPanels(const json& panels, const std::string& file, const json& inherited_ds,
                   const std::map<std::string, std::string>& variables, std::vector<PromExpression>* out) {
  if (!panels.is_array()) return;
  for (const json& panel : panels) {
    const json ds = panel.contains("datasource") ? panel["datasource"] : inherited_ds;
    const std::string title = panel.value("title", "(untitled)");
    if (panel.contains("targets") && panel["targets"].is_array()) {
      for (const json& target : panel["targets"]) {
        const json tds = target.contains("datasource") && !target["datasource"].is_null() ? target["datasource"] : ds;
        if (IsSqlDataSource(tds) || target.contains("rawSql")) continue;
        const std::string expr = target.value("expr", "");
        if (absl::StripAsciiWhitespace(expr).empty()) continue;
        PromExpression e;
        e.origin = absl::StrCat(file, " panel \"", title, "\" target ", target.value("refId", "?"));
        e.expr = expr;
        e.variables = variables;
        out->push_back(std::move(e));
      }
    }
    if (panel.contains("panels")) CollectPanels(panel["panels"], file, ds, variables, out);
  }
}

// Seconds of a Prometheus duration ("1h30m", "90s", "500ms"); -1 when it is not one.
double DurationSeconds(const std::string& text) {
  static const std::regex kPart(R"((\d+)(ms|s|m|h|d|w|y))");
  double total = 0;
  size_t consumed = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kPart); it != std::sregex_iterator(); ++it) {
    if (static_cast<size_t>(it->position(0)) != consumed) return -1;
    consumed += it->length(0);
    const double n = std::stod((*it)[1].str());
    const std::string unit = (*it)[2].str();
    total += unit == "ms" ? n / 1000 : unit == "s" ? n : unit == "m" ? n * 60 : unit == "h" ? n * 3600
           : unit == "d" ? n * 86400 : unit == "w" ? n * 604800 : n * 31536000;
  }
  return consumed == text.size() && consumed > 0 ? total : -1;
}

}  // namespace

std::vector<PromExpression> RuleExpressions(const std::string& yaml_text, std::string* error) {
  std::vector<PromExpression> out;
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    if (!root["groups"] || !root["groups"].IsSequence()) {
      *error = "no `groups:` list";
      return out;
    }
    for (const YAML::Node& group : root["groups"]) {
      const std::string group_name = group["name"] ? group["name"].as<std::string>() : "?";
      if (!group["rules"]) continue;
      for (const YAML::Node& rule : group["rules"]) {
        PromExpression e;
        e.expr = rule["expr"] ? rule["expr"].as<std::string>() : "";
        if (rule["alert"]) {
          e.is_alert = true;
          e.alert = rule["alert"].as<std::string>();
          e.origin = absl::StrCat("rules.yml group ", group_name, " alert ", e.alert);
        } else {
          e.origin = absl::StrCat("rules.yml group ", group_name, " record ",
                                  rule["record"] ? rule["record"].as<std::string>() : "?");
        }
        out.push_back(std::move(e));
      }
    }
  } catch (const YAML::Exception& e) {
    *error = e.what();
  }
  return out;
}

std::vector<PromExpression> DashboardExpressions(const std::string& json_text, const std::string& file,
                                                 std::string* error) {
  std::vector<PromExpression> out;
  json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    *error = "not a JSON object";
    return out;
  }
  const json& dashboard = root.contains("dashboard") && root["dashboard"].is_object() ? root["dashboard"] : root;
  const std::map<std::string, std::string> variables = TemplateValues(dashboard);
  const json none;
  CollectPanels(dashboard.value("panels", json::array()), file, none, variables, &out);
  if (dashboard.contains("rows") && dashboard["rows"].is_array()) {
    for (const json& row : dashboard["rows"]) CollectPanels(row.value("panels", json::array()), file, none, variables, &out);
  }
  // Query variables: label_values(selector, label) must find series; query_result(expr) is PromQL.
  if (dashboard.contains("templating") && dashboard["templating"].contains("list")) {
    static const std::regex kLabelValues(R"(^\s*label_values\s*\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$)");
    static const std::regex kQueryResult(R"(^\s*query_result\s*\((.*)\)\s*$)");
    for (const json& v : dashboard["templating"]["list"]) {
      if (v.value("type", "") != "query" || (v.contains("datasource") && IsSqlDataSource(v["datasource"]))) continue;
      std::string query;
      if (v.contains("query") && v["query"].is_string()) query = v["query"].get<std::string>();
      if (v.contains("query") && v["query"].is_object()) query = v["query"].value("query", "");
      std::smatch m;
      PromExpression e;
      e.origin = absl::StrCat(file, " variable $", v.value("name", "?"));
      e.variables = variables;
      if (std::regex_match(query, m, kLabelValues)) {
        e.expr = absl::StrCat("count by (", m[2].str(), ") (", m[1].str(), ")");
      } else if (std::regex_match(query, m, kQueryResult)) {
        e.expr = m[1].str();
      } else {
        continue;  // label_values(label), label_names(), metrics(): no PromQL to run
      }
      out.push_back(std::move(e));
    }
  }
  return out;
}

std::string ExpandGrafanaVariables(const std::string& expr, const std::map<std::string, std::string>& variables,
                                   const std::function<std::string(const std::string&)>& label_value) {
  // Label matchers first: their variables become a regex or a real value of that label.
  static const std::regex kMatcher(R"(([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*\"((?:[^\"\\]|\\.)*)\")");
  std::string out;
  size_t last = 0;
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), kMatcher); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const std::string label = m[1].str();
    const std::string op = m[2].str();
    std::string value = m[3].str();
    if (std::regex_search(value, VariableRef())) {
      value = ReplaceRefs(value, [&](const std::string& name) -> std::string {
        const auto builtin = BuiltinVariables().find(name);
        if (builtin != BuiltinVariables().end()) return builtin->second;
        if (op == "=~") return ".*";
        if (op == "!~" || op == "!=") return "__matches_nothing__";
        return label_value(label);
      });
    }
    out += expr.substr(last, m.position(0) - last);
    out += absl::StrCat(label, op, "\"", value, "\"");
    last = m.position(0) + m.length(0);
  }
  out += expr.substr(last);
  // The rest: Grafana's own variables, then the dashboard's values.
  return ReplaceRefs(out, [&](const std::string& name) -> std::string {
    const auto builtin = BuiltinVariables().find(name);
    if (builtin != BuiltinVariables().end()) return builtin->second;
    const auto v = variables.find(name);
    if (v != variables.end()) return v->second;
    return "$" + name;  // unknown: left for Prometheus to refuse, so the report shows it
  });
}

JobRole RoleOfJob(const std::string& job_name) {
  const std::string name = absl::AsciiStrToLower(job_name);
  if (absl::StrContains(name, "coordinator")) return JobRole::kCoordinator;
  if (absl::StrContains(name, "agent")) return JobRole::kAgent;
  if (absl::StrContains(name, "prometheus")) return JobRole::kPrometheus;
  return JobRole::kUnknown;
}

TestConfig RewritePrometheusConfig(const std::string& yaml_text, const std::string& rules_path,
                                   const std::string& sd_dir, std::string* error) {
  TestConfig out;
  try {
    YAML::Node root = YAML::Load(yaml_text);
    if (!root.IsMap()) {
      *error = "not a YAML map";
      return out;
    }
    YAML::Node global = root["global"] ? root["global"] : YAML::Node(YAML::NodeType::Map);
    global["scrape_interval"] = "1s";
    global["scrape_timeout"] = "1s";
    global["evaluation_interval"] = "1s";
    root["global"] = global;
    YAML::Node rules(YAML::NodeType::Sequence);
    rules.push_back(rules_path);
    root["rule_files"] = rules;
    root.remove("alerting");
    root.remove("remote_write");
    root.remove("remote_read");
    if (!root["scrape_configs"] || !root["scrape_configs"].IsSequence()) {
      *error = "no `scrape_configs:` list";
      return out;
    }
    for (YAML::Node job : root["scrape_configs"]) {
      const std::string name = job["job_name"] ? job["job_name"].as<std::string>() : "";
      out.jobs[name] = RoleOfJob(name);
      std::map<std::string, std::string> labels;
      if (job["static_configs"]) {
        for (const YAML::Node& group : job["static_configs"]) {
          if (!group["labels"]) continue;
          for (const auto& kv : group["labels"]) labels[kv.first.as<std::string>()] = kv.second.as<std::string>();
        }
      }
      out.target_labels[name] = labels;
      // Every way of finding targets goes; the test's file replaces them.
      std::vector<std::string> sd_keys;
      for (const auto& kv : job) {
        const std::string key = kv.first.as<std::string>();
        if (key == "static_configs" || absl::EndsWith(key, "_sd_configs")) sd_keys.push_back(key);
      }
      for (const std::string& key : sd_keys) job.remove(key);
      for (const char* key : {"tls_config", "basic_auth", "authorization", "oauth2", "bearer_token", "bearer_token_file"}) {
        job.remove(key);
      }
      job["scheme"] = "http";
      job["scrape_interval"] = "1s";
      job["scrape_timeout"] = "1s";
      const std::string file = absl::StrCat(sd_dir, "/", name, ".json");
      YAML::Node sd(YAML::NodeType::Map);
      YAML::Node files(YAML::NodeType::Sequence);
      files.push_back(file);
      sd["files"] = files;
      sd["refresh_interval"] = "1s";
      YAML::Node sds(YAML::NodeType::Sequence);
      sds.push_back(sd);
      job["file_sd_configs"] = sds;
      out.target_files[name] = file;
    }
    YAML::Emitter emitter;
    emitter << root;
    out.prometheus_yml = emitter.c_str();
  } catch (const YAML::Exception& e) {
    *error = e.what();
  }
  return out;
}

std::string RewriteRules(const std::string& yaml_text, const std::string& max_for, std::string* error) {
  try {
    YAML::Node root = YAML::Load(yaml_text);
    const double limit = DurationSeconds(max_for);
    if (root["groups"]) {
      for (YAML::Node group : root["groups"]) {
        if (group["interval"]) group["interval"] = "1s";
        if (!group["rules"]) continue;
        for (YAML::Node rule : group["rules"]) {
          if (rule["for"] && DurationSeconds(rule["for"].as<std::string>()) > limit) rule["for"] = max_for;
        }
      }
    }
    YAML::Emitter emitter;
    emitter << root;
    return emitter.c_str();
  } catch (const YAML::Exception& e) {
    *error = e.what();
    return "";
  }
}

std::string FileSdTargets(const std::vector<std::string>& targets, const std::map<std::string, std::string>& labels) {
  json group;
  group["targets"] = targets;
  group["labels"] = json::object();
  for (const auto& [k, v] : labels) group["labels"][k] = v;
  return json::array({group}).dump(2);
}

}  // namespace benchfleet::testing
