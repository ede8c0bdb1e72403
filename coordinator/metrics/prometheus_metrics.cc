#include "coordinator/metrics/prometheus_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "absl/strings/str_cat.h"

namespace benchfleet::coordinator {

PrometheusMetrics::PrometheusMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& records = prometheus::BuildCounter()
                      .Name("benchfleet_coordinator_records_total")
                      .Help("Records received from agents, by what became of them")
                      .Register(*registry_);
  stored_ = &records.Add({{"result", "stored"}});
  duplicated_ = &records.Add({{"result", "duplicate"}});
  rejected_ = &prometheus::BuildCounter()
                   .Name("benchfleet_coordinator_records_rejected_total")
                   .Help("Records refused, by reason")
                   .Register(*registry_);
  agents_connected_ = &prometheus::BuildGauge()
                           .Name("benchfleet_coordinator_agents_connected")
                           .Help("Agent streams open now")
                           .Register(*registry_)
                           .Add({});
  commits_ = &prometheus::BuildCounter()
                  .Name("benchfleet_coordinator_group_commits_total")
                  .Help("Transactions that stored a group of runs")
                  .Register(*registry_)
                  .Add({});
  committed_runs_ = &prometheus::BuildCounter()
                         .Name("benchfleet_coordinator_group_commit_runs_total")
                         .Help("Runs written by group commits (stored, duplicate or refused)")
                         .Register(*registry_)
                         .Add({});
  regression_checks_ = &prometheus::BuildCounter()
                            .Name("benchfleet_coordinator_regression_checks_total")
                            .Help("Runs of scheduled series checked against their baseline, by agent, task and "
                                  "verdict (regression or ok)")
                            .Register(*registry_);
}

PrometheusMetrics::~PrometheusMetrics() = default;

void PrometheusMetrics::RecordsStored(uint64_t count) { stored_->Increment(static_cast<double>(count)); }

void PrometheusMetrics::RecordsDuplicated(uint64_t count) {
  duplicated_->Increment(static_cast<double>(count));
}

void PrometheusMetrics::RecordRejected(std::string_view reason) {
  // Family::Add returns the existing counter for labels it has seen: safe from any thread.
  rejected_->Add({{"reason", std::string(reason)}}).Increment();
}

void PrometheusMetrics::RegressionChecked(std::string_view agent_id, std::string_view task, bool regression) {
  // Both verdicts exist from the first check of an (agent, task), so increase() alerts see the first
  // regression.
  auto& ok = regression_checks_->Add({{"agent", std::string(agent_id)}, {"task", std::string(task)}, {"verdict", "ok"}});
  auto& bad = regression_checks_->Add(
      {{"agent", std::string(agent_id)}, {"task", std::string(task)}, {"verdict", "regression"}});
  (regression ? bad : ok).Increment();
}

void PrometheusMetrics::AgentConnected() { agents_connected_->Increment(); }

void PrometheusMetrics::AgentDisconnected() { agents_connected_->Decrement(); }

void PrometheusMetrics::GroupCommitted(uint64_t runs) {
  commits_->Increment();
  committed_runs_->Increment(static_cast<double>(runs));
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry) {
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  try {
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(address, /*num_threads=*/1);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serve metrics on ", address, ": ", e.what()));
  }
  endpoint->registry_ = std::move(registry);
  endpoint->exposer_->RegisterCollectable(endpoint->registry_);
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  endpoint->port_ = ports.empty() ? 0 : ports.front();
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() = default;

}  // namespace benchfleet::coordinator
