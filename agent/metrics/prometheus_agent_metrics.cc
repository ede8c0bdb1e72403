#include "agent/metrics/prometheus_agent_metrics.h"

#include <arpa/inet.h>
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <exception>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace benchfleet::agent {

// Sets the outbox gauge from the outbox itself, then collects the registry: a scrape sees the
// depth of that moment, without the outbox having to report every change.
class PrometheusAgentMetrics::ScrapeView final : public prometheus::Collectable {
 public:
  ScrapeView(std::shared_ptr<prometheus::Registry> registry, prometheus::Gauge* outbox_records, RecordQueue* outbox)
      : registry_(std::move(registry)), outbox_records_(outbox_records), outbox_(outbox) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    outbox_records_->Set(static_cast<double>(outbox_->depth()));
    return registry_->Collect();
  }

 private:
  const std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge* const outbox_records_;
  RecordQueue* const outbox_;
};

PrometheusAgentMetrics::PrometheusAgentMetrics(RecordQueue* outbox)
    : registry_(std::make_shared<prometheus::Registry>()) {
  // The families of coordinator/metrics/README.md ("Agent"), in its order. (prometheus-cpp 1.0's
  // Registry lists counters before gauges, and leaves out a family without samples.)
  prometheus::Gauge& outbox_records = prometheus::BuildGauge()
                                          .Name("benchfleet_agent_outbox_records")
                                          .Help("Records waiting in the agent's outbox for the coordinator's Ack")
                                          .Register(*registry_)
                                          .Add({});
  connected_ = &prometheus::BuildGauge()
                    .Name("benchfleet_agent_coordinator_connected")
                    .Help("1 while the agent's stream to the coordinator is open (accepted), else 0")
                    .Register(*registry_)
                    .Add({});
  reconnects_ = &prometheus::BuildCounter()
                     .Name("benchfleet_agent_reconnects_total")
                     .Help("Streams to the coordinator accepted again after the first one")
                     .Register(*registry_)
                     .Add({});
  records_sent_ = &prometheus::BuildCounter()
                       .Name("benchfleet_agent_records_sent_total")
                       .Help("Records sent to the coordinator, re-sends after a reconnect included")
                       .Register(*registry_)
                       .Add({});
  task_running_ = &prometheus::BuildGauge()
                       .Name("benchfleet_agent_task_running")
                       .Help("1 while a task from the coordinator runs, else 0")
                       .Register(*registry_)
                       .Add({});
  current_task_family_ = &prometheus::BuildGauge()
                              .Name("benchfleet_agent_current_task")
                              .Help("1 for the task name now running; no sample when no task runs")
                              .Register(*registry_);
  certificate_expiry_family_ = &prometheus::BuildGauge()
                                    .Name("benchfleet_agent_certificate_expiry_timestamp_seconds")
                                    .Help("When the agent's client certificate expires (Unix seconds); no sample "
                                          "without a certificate")
                                    .Register(*registry_);
  scrape_view_ = std::make_shared<ScrapeView>(registry_, &outbox_records, outbox);
}

PrometheusAgentMetrics::~PrometheusAgentMetrics() = default;

void PrometheusAgentMetrics::CoordinatorConnected(bool reconnect) {
  connected_->Set(1);
  if (reconnect) reconnects_->Increment();
}

void PrometheusAgentMetrics::CoordinatorDisconnected() { connected_->Set(0); }

void PrometheusAgentMetrics::RecordsSent(uint64_t count) { records_sent_->Increment(static_cast<double>(count)); }

void PrometheusAgentMetrics::TaskStarted(std::string_view task) {
  std::lock_guard<std::mutex> l(mu_);
  // One task runs at a time; a start without the previous end still leaves a single sample.
  if (current_task_ != nullptr) current_task_family_->Remove(current_task_);
  current_task_ = &current_task_family_->Add({{"task", std::string(task)}});
  current_task_->Set(1);
  task_running_->Set(1);
}

void PrometheusAgentMetrics::TaskEnded() {
  std::lock_guard<std::mutex> l(mu_);
  if (current_task_ != nullptr) current_task_family_->Remove(current_task_);
  current_task_ = nullptr;
  task_running_->Set(0);
}

void PrometheusAgentMetrics::SetCertificateExpiry(std::optional<absl::Time> not_after) {
  std::lock_guard<std::mutex> l(mu_);
  if (!not_after.has_value()) {
    if (certificate_expiry_ != nullptr) certificate_expiry_family_->Remove(certificate_expiry_);
    certificate_expiry_ = nullptr;
    return;
  }
  if (certificate_expiry_ == nullptr) certificate_expiry_ = &certificate_expiry_family_->Add({});
  certificate_expiry_->Set(absl::ToDoubleSeconds(*not_after - absl::UnixEpoch()));
}

std::vector<prometheus::MetricFamily> PrometheusAgentMetrics::Collect() const { return scrape_view_->Collect(); }

std::string PrometheusAgentMetrics::Exposition() const { return prometheus::TextSerializer().Serialize(Collect()); }

namespace {

// Returns true when host is made of digits and dots only but is no IPv4 address ("999.1.1.1"):
// civetweb would bind such a host somewhere rather than fail.
bool IsBadIpv4(const std::string& host) {
  if (host.find_first_not_of("0123456789.") != std::string::npos) return false;
  in_addr parsed;
  return inet_pton(AF_INET, host.c_str(), &parsed) != 1;
}

// Checks that address is HOST:PORT with a port of 0 to 65535, so that a typo fails with a clear
// message rather than the HTTP server's "problem binding to port".
absl::Status CheckListenAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size() ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port > 65535 ||
      !absl::ascii_isdigit(static_cast<unsigned char>(address[colon + 1])) || IsBadIpv4(address.substr(0, colon))) {
    return absl::InvalidArgumentError(absl::StrCat("metrics address '", address,
                                                   "' is not HOST:PORT (e.g. 127.0.0.1:9101; port 0 picks a free one)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<AgentMetricsEndpoint>> AgentMetricsEndpoint::Start(
    const std::string& address, const PrometheusAgentMetrics& metrics) {
  if (absl::Status s = CheckListenAddress(address); !s.ok()) return s;
  std::unique_ptr<AgentMetricsEndpoint> endpoint(new AgentMetricsEndpoint());
  // prometheus-cpp (civetweb underneath) reports a failed bind by exception; none may leave here.
  try {
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(address, /*num_threads=*/1);
  } catch (const std::exception& e) {
    // civetweb's own words ("null context ... problem binding to port") do not say what to check.
    return absl::InvalidArgumentError(absl::StrCat("cannot serve metrics on ", address,
                                                   ": the port is in use or HOST is not an address of this "
                                                   "machine (", e.what(), ")"));
  }
  endpoint->exposer_->RegisterCollectable(metrics.scrape_view_);
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  if (ports.empty()) return absl::InvalidArgumentError(absl::StrCat("cannot serve metrics on ", address, ": no port bound"));
  endpoint->port_ = ports.front();
  return endpoint;
}

AgentMetricsEndpoint::~AgentMetricsEndpoint() = default;

}  // namespace benchfleet::agent
