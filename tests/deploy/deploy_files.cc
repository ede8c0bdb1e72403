#include "tests/deploy/deploy_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::testing {
namespace {

std::string StringOr(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return fallback;
  return j[key].get<std::string>();
}

void AddPanels(const nlohmann::json& panels, std::vector<const nlohmann::json*>* out) {
  if (!panels.is_array()) return;
  for (const auto& p : panels) {
    out->push_back(&p);
    if (p.contains("panels")) AddPanels(p["panels"], out);
  }
}

// A target's query text: `rawSql` for SQL data sources, `expr` for Prometheus.
std::string TargetText(const nlohmann::json& target) {
  std::string sql = StringOr(target, "rawSql");
  return sql.empty() ? StringOr(target, "expr") : sql;
}

}  // namespace

std::string SourceDir() {
  const char* dir = std::getenv("BENCHFLEET_SOURCE_DIR");
  if (dir != nullptr && *dir != '\0') return dir;
  return BENCHFLEET_CONFIGURED_SOURCE_DIR;
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<std::vector<Dashboard>> LoadDashboards() {
  const std::filesystem::path dir = std::filesystem::path(SourceDir()) / "deploy/grafana/dashboards";
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  if (ec) return absl::NotFoundError(absl::StrCat("listing ", dir.string(), ": ", ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<Dashboard> out;
  for (const auto& file : files) {
    absl::StatusOr<std::string> text = ReadTextFile(file.string());
    if (!text.ok()) return text.status();
    Dashboard d;
    d.file = file.filename().string();
    try {
      d.json = nlohmann::json::parse(*text);
    } catch (const nlohmann::json::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(d.file, " is not valid JSON: ", e.what()));
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<const nlohmann::json*> Panels(const nlohmann::json& dashboard) {
  std::vector<const nlohmann::json*> out;
  if (dashboard.contains("panels")) AddPanels(dashboard["panels"], &out);
  return out;
}

std::vector<DashboardQuery> Queries(const Dashboard& dashboard) {
  std::vector<DashboardQuery> out;
  const nlohmann::json& d = dashboard.json;
  if (d.contains("templating") && d["templating"].contains("list")) {
    for (const auto& v : d["templating"]["list"]) {
      if (StringOr(v, "type") != "query") continue;
      DashboardQuery q;
      q.dashboard = dashboard.file;
      q.source = QuerySource::kVariable;
      q.name = StringOr(v, "name");
      q.datasource_type = StringOr(v.value("datasource", nlohmann::json::object()), "type");
      q.datasource_uid = StringOr(v.value("datasource", nlohmann::json::object()), "uid");
      // Grafana 10 keeps a Prometheus variable's query as an object, an SQL one as a string.
      const nlohmann::json& query = v.value("query", nlohmann::json());
      q.text = query.is_string() ? query.get<std::string>() : StringOr(query, "query");
      out.push_back(std::move(q));
    }
  }
  if (d.contains("annotations") && d["annotations"].contains("list")) {
    for (const auto& a : d["annotations"]["list"]) {
      if (a.contains("builtIn")) continue;
      DashboardQuery q;
      q.dashboard = dashboard.file;
      q.source = QuerySource::kAnnotation;
      q.name = StringOr(a, "name");
      const nlohmann::json ds = a.value("datasource", nlohmann::json::object());
      q.datasource_type = StringOr(ds, "type");
      q.datasource_uid = StringOr(ds, "uid");
      const nlohmann::json target = a.value("target", nlohmann::json::object());
      q.text = TargetText(target);
      q.format = StringOr(target, "format");
      out.push_back(std::move(q));
    }
  }
  for (const nlohmann::json* p : Panels(d)) {
    if (!p->contains("targets")) continue;
    const nlohmann::json panel_ds = p->value("datasource", nlohmann::json::object());
    for (const auto& t : (*p)["targets"]) {
      const nlohmann::json ds = t.value("datasource", panel_ds);
      DashboardQuery q;
      q.dashboard = dashboard.file;
      q.source = QuerySource::kPanel;
      q.name = StringOr(*p, "title");
      q.datasource_type = StringOr(ds, "type");
      q.datasource_uid = StringOr(ds, "uid");
      q.text = TargetText(t);
      q.format = StringOr(t, "format");
      out.push_back(std::move(q));
    }
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> ProvisionedDatasources() {
  const std::string path = SourceDir() + "/deploy/grafana/provisioning/datasources/benchfleet.yaml";
  std::map<std::string, std::string> out;
  try {
    const YAML::Node root = YAML::LoadFile(path);
    for (const auto& ds : root["datasources"]) {
      out[ds["uid"].as<std::string>()] = ds["type"].as<std::string>();
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
  return out;
}

absl::StatusOr<std::set<std::string>> CatalogueSeries() {
  const std::string path = SourceDir() + "/coordinator/metrics/README.md";
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  // Table rows `| name(s) | type(s) | ...`: "a / b" in the name cell pairs with "gauge / histogram".
  static const std::regex kName("`(benchfleet_[a-z0-9_]+)`");
  std::set<std::string> out;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (!absl::ConsumePrefix(&line, "|")) continue;
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() < 2) continue;
    std::vector<std::string> names;
    const std::string& name_cell = cells[0];
    for (auto it = std::sregex_iterator(name_cell.begin(), name_cell.end(), kName);
         it != std::sregex_iterator(); ++it) {
      names.push_back((*it)[1]);
    }
    if (names.empty()) continue;
    std::vector<std::string> types;
    for (absl::string_view t : absl::StrSplit(cells[1], '/')) {
      types.emplace_back(absl::StripAsciiWhitespace(t));
    }
    if (types.size() != names.size() && types.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": cannot pair names and types in |", line));
    }
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string& type = types.size() == 1 ? types[0] : types[i];
      if (type == "histogram") {
        for (const char* suffix : {"_bucket", "_sum", "_count"}) out.insert(names[i] + suffix);
      } else if (type == "counter" || type == "gauge") {
        out.insert(names[i]);
      } else {
        return absl::InvalidArgumentError(absl::StrCat(path, ": unknown type '", type, "' of ", names[i]));
      }
    }
  }
  return out;
}

absl::StatusOr<std::set<std::string>> RecordingRuleNames() {
  const std::string path = SourceDir() + "/deploy/prometheus/rules.yml";
  std::set<std::string> out;
  try {
    const YAML::Node root = YAML::LoadFile(path);
    for (const auto& group : root["groups"]) {
      for (const auto& rule : group["rules"]) {
        if (rule["record"]) out.insert(rule["record"].as<std::string>());
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
  return out;
}

}  // namespace benchfleet::testing
