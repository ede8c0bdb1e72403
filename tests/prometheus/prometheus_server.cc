#include "tests/prometheus/prometheus_server.h"

#include <signal.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "httplib.h"
#include "tests/integration/fleet.h"

namespace benchfleet::testing {

size_t QueryResult::size() const {
  if (!ok) return 0;
  if (type == "vector" || type == "matrix") return result.is_array() ? result.size() : 0;
  return 1;
}

std::optional<double> QueryResult::first_value() const {
  const nlohmann::json* sample = nullptr;
  if (type == "vector" && result.is_array() && !result.empty()) sample = &result[0]["value"];
  if (type == "scalar") sample = &result;
  if (sample == nullptr || !sample->is_array() || sample->size() != 2 || !(*sample)[1].is_string()) {
    return std::nullopt;
  }
  return std::strtod((*sample)[1].get<std::string>().c_str(), nullptr);
}

std::string PrometheusServer::BinaryPath() {
  const char* path = std::getenv("BENCHFLEET_PROMETHEUS");
  return path != nullptr ? path : "/usr/bin/prometheus";
}

bool PrometheusServer::Start(const std::string& config_path, const std::string& work_dir,
                             std::string* error) {
  port_ = FreePort();
  log_path_ = work_dir + "/prometheus.log";
  process_ = std::make_unique<Subprocess>(
      std::vector<std::string>{BinaryPath(), "--config.file=" + config_path,
                               "--storage.tsdb.path=" + work_dir + "/tsdb",
                               "--web.listen-address=" + address(), "--log.level=info"},
      std::map<std::string, std::string>{}, log_path_);
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(1);
  const bool ready = PollUntil(
      [&] {
        if (!process_->running()) return true;
        auto res = client.Get("/-/ready");
        return res && res->status == 200;
      },
      absl::Seconds(30));
  if (!ready || !process_->running()) {
    *error = absl::StrCat("prometheus did not become ready on ", address(), ":\n", log());
    return false;
  }
  return true;
}

PrometheusServer::~PrometheusServer() {
  if (process_ == nullptr) return;
  process_->Signal(SIGTERM);
  if (!PollUntil([&] { return !process_->running(); }, absl::Seconds(5))) process_->Signal(SIGKILL);
  process_->Wait();
}

std::string PrometheusServer::log() const { return ReadAll(log_path_); }

std::optional<nlohmann::json> PrometheusServer::GetJson(
    const std::string& path, const std::vector<std::pair<std::string, std::string>>& params,
    std::string* error) {
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(2);
  client.set_read_timeout(10);
  httplib::Params query(params.begin(), params.end());
  auto res = client.Get(path, query, httplib::Headers{});
  if (!res) {
    *error = absl::StrCat("GET ", path, ": ", httplib::to_string(res.error()));
    return std::nullopt;
  }
  nlohmann::json body = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    *error = absl::StrCat("GET ", path, ": HTTP ", res->status, ", not JSON: ", res->body);
    return std::nullopt;
  }
  return body;
}

QueryResult PrometheusServer::Query(const std::string& expr) {
  QueryResult out;
  std::optional<nlohmann::json> body = GetJson("/api/v1/query", {{"query", expr}}, &out.error);
  if (!body.has_value()) return out;
  if (body->value("status", "") != "success") {
    out.error = absl::StrCat(body->value("errorType", "?"), ": ", body->value("error", ""));
    return out;
  }
  out.ok = true;
  out.type = (*body)["data"].value("resultType", "");
  out.result = (*body)["data"]["result"];
  return out;
}

std::optional<std::vector<ActiveAlert>> PrometheusServer::Alerts() {
  std::string error;
  std::optional<nlohmann::json> body = GetJson("/api/v1/alerts", {}, &error);
  if (!body.has_value() || body->value("status", "") != "success") return std::nullopt;
  std::vector<ActiveAlert> out;
  for (const nlohmann::json& a : (*body)["data"]["alerts"]) {
    ActiveAlert alert;
    alert.state = a.value("state", "");
    alert.value = a.value("value", "");
    for (const auto& [k, v] : a["labels"].items()) alert.labels[k] = v.get<std::string>();
    alert.name = alert.labels["alertname"];
    out.push_back(std::move(alert));
  }
  return out;
}

std::optional<absl::Time> PrometheusServer::OldestRuleEvaluation() {
  std::string error;
  std::optional<nlohmann::json> body = GetJson("/api/v1/rules", {}, &error);
  if (!body.has_value() || body->value("status", "") != "success") return std::nullopt;
  std::optional<absl::Time> oldest;
  for (const nlohmann::json& g : (*body)["data"]["groups"]) {
    absl::Time t;
    std::string parse_error;
    if (!absl::ParseTime(absl::RFC3339_full, g.value("lastEvaluation", ""), &t, &parse_error)) return std::nullopt;
    if (t < absl::FromUnixSeconds(1)) return std::nullopt;  // "0001-01-01T00:00:00Z": not yet
    if (!oldest.has_value() || t < *oldest) oldest = t;
  }
  return oldest;
}

std::vector<std::string> PrometheusServer::LabelValues(const std::string& label) {
  std::string error;
  std::vector<std::string> out;
  std::optional<nlohmann::json> body = GetJson("/api/v1/label/" + label + "/values", {}, &error);
  if (!body.has_value() || body->value("status", "") != "success") return out;
  for (const nlohmann::json& v : (*body)["data"]) out.push_back(v.get<std::string>());
  return out;
}

std::map<std::string, std::string> PrometheusServer::TargetHealth() {
  std::string error;
  std::map<std::string, std::string> out;
  std::optional<nlohmann::json> body = GetJson("/api/v1/targets", {{"state", "active"}}, &error);
  if (!body.has_value() || body->value("status", "") != "success") return out;
  for (const nlohmann::json& t : (*body)["data"]["activeTargets"]) {
    const std::string health = t.value("health", "");
    const std::string last_error = t.value("lastError", "");
    out[t["discoveredLabels"].value("__address__", "")] = last_error.empty() ? health : health + ": " + last_error;
  }
  return out;
}

}  // namespace benchfleet::testing
