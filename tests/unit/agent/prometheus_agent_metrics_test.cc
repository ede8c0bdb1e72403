// The agent's own /metrics (agent/metrics/): the exact exposition of a fresh PrometheusAgentMetrics
// and after known calls, the current task's sample removed when the task ends, the outbox depth
// read at scrape time, the uplink's calls against the fake gateway, and the HTTP endpoint (one per
// test binary: its shutdown takes about 2 s).
#include "agent/metrics/prometheus_agent_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/metric_family.h>

#include <optional>

#include "absl/strings/str_cat.h"
#include "agent/http/http_client.h"
#include "agent/outbox/memory_queue.h"
#include "agent/uplink/uplink.h"
#include "tests/unit/agent/fake_gateway.h"

namespace benchfleet::agent {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::FakeGateway;

constexpr char kAgentId[] = "1b4e28ba-2fa1-41d2-883f-0016d3cca427";

// The HELP and TYPE lines of each family. prometheus-cpp 1.0 serves counters first, then gauges,
// each in registration order; a family without samples (current_task when no task runs) is left
// out altogether.
constexpr char kOutboxHeader[] =
    "# HELP benchfleet_agent_outbox_records Records waiting in the agent's outbox for the coordinator's Ack\n"
    "# TYPE benchfleet_agent_outbox_records gauge\n";
constexpr char kConnectedHeader[] =
    "# HELP benchfleet_agent_coordinator_connected 1 while the agent's stream to the coordinator is open "
    "(accepted), else 0\n"
    "# TYPE benchfleet_agent_coordinator_connected gauge\n";
constexpr char kReconnectsHeader[] =
    "# HELP benchfleet_agent_reconnects_total Streams to the coordinator accepted again after the first one\n"
    "# TYPE benchfleet_agent_reconnects_total counter\n";
constexpr char kRecordsSentHeader[] =
    "# HELP benchfleet_agent_records_sent_total Records sent to the coordinator, re-sends after a reconnect "
    "included\n"
    "# TYPE benchfleet_agent_records_sent_total counter\n";
constexpr char kTaskRunningHeader[] =
    "# HELP benchfleet_agent_task_running 1 while a task from the coordinator runs, else 0\n"
    "# TYPE benchfleet_agent_task_running gauge\n";
constexpr char kCurrentTaskHeader[] =
    "# HELP benchfleet_agent_current_task 1 for the task name now running; no sample when no task runs\n"
    "# TYPE benchfleet_agent_current_task gauge\n";

v1::RunRecord Record(const std::string& run_id) {
  v1::RunRecord record;
  record.set_run_id(run_id);
  return record;
}

// Returns the value of the sample of family `name` whose labels are exactly `labels`; nullopt
// when there is none.
std::optional<double> Value(const PrometheusAgentMetrics& metrics, const std::string& name,
                            const std::vector<std::pair<std::string, std::string>>& labels = {}) {
  for (const prometheus::MetricFamily& family : metrics.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::vector<std::pair<std::string, std::string>> have;
      for (const auto& label : metric.label) have.emplace_back(label.name, label.value);
      if (have != labels) continue;
      return family.type == prometheus::MetricType::Counter ? metric.counter.value : metric.gauge.value;
    }
  }
  return std::nullopt;
}

TEST(AgentMetricsTest, EveryFamilyExistsAtZeroFromTheStart) {
  MemoryRecordQueue outbox;
  const PrometheusAgentMetrics metrics(&outbox);
  // All but current_task, which has a sample only while a task runs.
  EXPECT_EQ(metrics.Exposition(), absl::StrCat(kReconnectsHeader, "benchfleet_agent_reconnects_total 0\n",
                                               kRecordsSentHeader, "benchfleet_agent_records_sent_total 0\n",
                                               kOutboxHeader, "benchfleet_agent_outbox_records 0\n",
                                               kConnectedHeader, "benchfleet_agent_coordinator_connected 0\n",
                                               kTaskRunningHeader, "benchfleet_agent_task_running 0\n"));
}

TEST(AgentMetricsTest, ExpositionAfterKnownCalls) {
  MemoryRecordQueue outbox;
  for (const char* id : {"run-1", "run-2", "run-3"}) outbox.Add(Record(id));
  PrometheusAgentMetrics metrics(&outbox);
  metrics.CoordinatorConnected(/*reconnect=*/false);
  metrics.RecordsSent(3);
  metrics.CoordinatorDisconnected();
  metrics.CoordinatorConnected(/*reconnect=*/true);
  metrics.RecordsSent(2);  // re-sends count too
  metrics.TaskStarted("llama-qwen2.5-3b-q4km");

  EXPECT_EQ(metrics.Exposition(),
            absl::StrCat(kReconnectsHeader, "benchfleet_agent_reconnects_total 1\n",
                         kRecordsSentHeader, "benchfleet_agent_records_sent_total 5\n",
                         kOutboxHeader, "benchfleet_agent_outbox_records 3\n",
                         kConnectedHeader, "benchfleet_agent_coordinator_connected 1\n",
                         kTaskRunningHeader, "benchfleet_agent_task_running 1\n",
                         kCurrentTaskHeader, "benchfleet_agent_current_task{task=\"llama-qwen2.5-3b-q4km\"} 1\n"));
}

TEST(AgentMetricsTest, TheCurrentTaskSampleIsRemovedWhenTheTaskEnds) {
  MemoryRecordQueue outbox;
  PrometheusAgentMetrics metrics(&outbox);
  metrics.TaskStarted("llama-gen");
  EXPECT_EQ(Value(metrics, "benchfleet_agent_current_task", {{"task", "llama-gen"}}), 1.0);
  EXPECT_EQ(Value(metrics, "benchfleet_agent_task_running"), 1.0);

  metrics.TaskEnded();
  EXPECT_EQ(Value(metrics, "benchfleet_agent_task_running"), 0.0);
  EXPECT_EQ(Value(metrics, "benchfleet_agent_current_task", {{"task", "llama-gen"}}), std::nullopt);
  EXPECT_THAT(metrics.Exposition(), Not(HasSubstr("benchfleet_agent_current_task")));

  // The next task has its own label set; the previous one does not come back.
  metrics.TaskStarted("txt2img");
  EXPECT_EQ(Value(metrics, "benchfleet_agent_current_task", {{"task", "txt2img"}}), 1.0);
  EXPECT_EQ(Value(metrics, "benchfleet_agent_current_task", {{"task", "llama-gen"}}), std::nullopt);
  EXPECT_EQ(Value(metrics, "benchfleet_agent_task_running"), 1.0);
}

TEST(AgentMetricsTest, TheCertificateExpiryHasASampleOnlyWithACertificate) {
  MemoryRecordQueue outbox;
  PrometheusAgentMetrics metrics(&outbox);
  constexpr char kName[] = "benchfleet_agent_certificate_expiry_timestamp_seconds";
  EXPECT_EQ(Value(metrics, kName), std::nullopt);
  metrics.SetCertificateExpiry(absl::FromUnixSeconds(1803456000));
  EXPECT_EQ(Value(metrics, kName), 1803456000.0);
  EXPECT_THAT(metrics.Exposition(),
              HasSubstr("# TYPE benchfleet_agent_certificate_expiry_timestamp_seconds gauge\n"
                        "benchfleet_agent_certificate_expiry_timestamp_seconds 1803456000\n"));
  metrics.SetCertificateExpiry(absl::FromUnixSeconds(1811232000));  // renewed
  EXPECT_EQ(Value(metrics, kName), 1811232000.0);
  metrics.SetCertificateExpiry(std::nullopt);
  EXPECT_EQ(Value(metrics, kName), std::nullopt);
}

TEST(AgentMetricsTest, TheOutboxDepthIsReadAtEveryScrape) {
  MemoryRecordQueue outbox;
  const PrometheusAgentMetrics metrics(&outbox);
  EXPECT_EQ(Value(metrics, "benchfleet_agent_outbox_records"), 0.0);
  outbox.Add(Record("run-1"));
  outbox.Add(Record("run-2"));
  EXPECT_EQ(Value(metrics, "benchfleet_agent_outbox_records"), 2.0);
  ASSERT_TRUE(outbox.Ack({"run-1"}).ok());
  EXPECT_EQ(Value(metrics, "benchfleet_agent_outbox_records"), 1.0);
  ASSERT_TRUE(outbox.Reject("run-2", "bad record").ok());
  EXPECT_EQ(Value(metrics, "benchfleet_agent_outbox_records"), 0.0);
}

TEST(AgentMetricsTest, TheUplinkReportsConnectionsReconnectsAndRecordsSent) {
  FakeGateway gateway;
  MemoryRecordQueue outbox;
  for (int i = 1; i <= 5; ++i) outbox.Add(Record(absl::StrCat("run-", i)));
  PrometheusAgentMetrics metrics(&outbox);
  UplinkOptions options;
  options.target = gateway.address();
  options.agent_id = kAgentId;
  options.backoff = BackoffPolicy{absl::Milliseconds(1), absl::Milliseconds(10)};
  options.metrics = &metrics;
  Uplink uplink(options, &outbox);
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  EXPECT_EQ(Value(metrics, "benchfleet_agent_outbox_records"), 0.0);
  EXPECT_EQ(Value(metrics, "benchfleet_agent_coordinator_connected"), 1.0);
  EXPECT_EQ(Value(metrics, "benchfleet_agent_reconnects_total"), 0.0);
  EXPECT_TRUE(gateway.WaitFor([&] { return Value(metrics, "benchfleet_agent_records_sent_total") == 5.0; }))
      << *Value(metrics, "benchfleet_agent_records_sent_total");

  // A coordinator restart: the stream is accepted again, which is one reconnect.
  gateway.DropCurrentStream();
  ASSERT_TRUE(gateway.WaitFor([&] { return gateway.hellos() == 2; }));
  ASSERT_TRUE(gateway.WaitFor([&] { return uplink.stats().sessions == 2 && uplink.stats().connected; }));
  EXPECT_EQ(Value(metrics, "benchfleet_agent_reconnects_total"), 1.0);
  EXPECT_EQ(Value(metrics, "benchfleet_agent_coordinator_connected"), 1.0);

  outbox.Add(Record("run-6"));
  outbox.Add(Record("run-7"));
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  // The uplink counts a batch once its write returns, and the Ack that drains the outbox can come
  // back before that: the count settles a moment after the drain.
  EXPECT_TRUE(gateway.WaitFor([&] { return Value(metrics, "benchfleet_agent_records_sent_total") == 7.0; }))
      << *Value(metrics, "benchfleet_agent_records_sent_total");

  uplink.Stop();
  EXPECT_EQ(Value(metrics, "benchfleet_agent_coordinator_connected"), 0.0);
  EXPECT_EQ(Value(metrics, "benchfleet_agent_reconnects_total"), 1.0);
}

TEST(AgentMetricsEndpointTest, AMalformedAddressIsRefusedBeforeBinding) {
  MemoryRecordQueue outbox;
  const PrometheusAgentMetrics metrics(&outbox);
  for (const char* address : {"9101", "127.0.0.1", "127.0.0.1:", ":9101", "127.0.0.1:http", "127.0.0.1:65536",
                              "999.1.1.1:0"}) {
    auto endpoint = AgentMetricsEndpoint::Start(address, metrics);
    EXPECT_EQ(endpoint.status(),
              absl::InvalidArgumentError(absl::StrCat("metrics address '", address,
                                                      "' is not HOST:PORT (e.g. 127.0.0.1:9101; port 0 picks a "
                                                      "free one)")));
  }
}

// The only test here that starts an HTTP server (its shutdown takes about 2 s).
TEST(AgentMetricsEndpointTest, ServesTheExpositionOnTheBoundPortAndRefusesAPortInUse) {
  MemoryRecordQueue outbox;
  outbox.Add(Record("run-1"));
  PrometheusAgentMetrics metrics(&outbox);
  metrics.TaskStarted("llama-gen");
  auto endpoint = AgentMetricsEndpoint::Start("127.0.0.1:0", metrics);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const int port = (*endpoint)->port();
  ASSERT_GT(port, 0);

  HttpRequest request;
  request.url = absl::StrCat("http://127.0.0.1:", port, "/metrics");
  request.total_timeout = absl::Seconds(10);
  auto response = NewCurlHttpClient()->Send(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  // prometheus-cpp's Exposer puts its own exposer_* families (scrapes, bytes, latency) first.
  EXPECT_THAT(response->body, StartsWith("# HELP exposer_"));
  EXPECT_THAT(response->body, EndsWith(metrics.Exposition()));
  EXPECT_THAT(response->body, HasSubstr("\nbenchfleet_agent_outbox_records 1\n"));
  EXPECT_THAT(response->body, HasSubstr("\nbenchfleet_agent_current_task{task=\"llama-gen\"} 1\n"));

  const std::string taken = absl::StrCat("127.0.0.1:", port);
  auto second = AgentMetricsEndpoint::Start(taken, metrics);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(second.status().message()), StartsWith(absl::StrCat("cannot serve metrics on ", taken, ": ")));
}

}  // namespace
}  // namespace benchfleet::agent
