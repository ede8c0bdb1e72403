// The coordinator's real /metrics over HTTP: a CoordinatorServer on a fresh PostgreSQL database
// (gRPC and /metrics on port 0, a short tick and fleet snapshot interval), driven through gRPC
// as an agent and an operator would, then scraped until every expected sample is there: gRPC
// call counts (unary, the agent's bidi stream and a cancelled server stream, which the
// interceptor must let run), the fleet gauges read from the database, a stored run's figures and
// the flag counters of its task.
#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "benchfleet/v1/admin.grpc.pb.h"
#include "benchfleet/v1/fleet.grpc.pb.h"
#include "benchfleet/v1/gateway.grpc.pb.h"
#include "common/version.h"
#include "coordinator/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/pg_test_db.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::HasSubstr;

constexpr char kSpec[] =
    "series: nightly\ntask: chat-7b\nbackend: llama-server\nruns:\n  cold: 1\n  warm: 2\ntargets: all\n";

// Returns the body of GET /metrics, or "" when the request failed.
std::string Scrape(int port) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  client.set_read_timeout(5);
  httplib::Result response = client.Get("/metrics");
  if (!response || response->status != 200) return "";
  return response->body;
}

// Scrapes until every line of `expected` is in the exposition or 20 s passed (figures follow an
// Ack on another thread; fleet gauges follow the next snapshot), and returns the last scrape.
std::string ScrapeUntil(int port, const std::vector<std::string>& expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    text = Scrape(port);
    bool all = true;
    for (const std::string& line : expected) all = all && text.find(line + "\n") != std::string::npos;
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return text;
}

TEST(MetricsEndpointTest, ServesRpcCountsFleetGaugesAndRunFigures) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  CoordinatorServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.database_url = db.url();
  options.metrics_listen_address = "127.0.0.1:0";
  options.tick_interval = absl::Milliseconds(20);
  options.fleet_snapshot_interval = absl::Milliseconds(50);
  CoordinatorServer server(options);
  ASSERT_TRUE(server.Start().ok());
  ASSERT_GT(server.metrics_port(), 0);

  auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto gateway = v1::AgentGateway::NewStub(channel);
  auto admin = v1::Admin::NewStub(channel);
  auto fleet = v1::Fleet::NewStub(channel);

  // An agent's stream (bidi, through the interceptor): Hello, then a series' task comes down it.
  grpc::ClientContext agent_context;
  auto stream = gateway->Connect(&agent_context);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id(testing::kAgentId);
  hello.mutable_hello()->set_agent_version("0.1.0");
  hello.mutable_hello()->set_api_revision(kApiRevision);
  *hello.mutable_hello()->mutable_conditions() = testing::MakeConditions("host-1", {});
  ASSERT_TRUE(stream->Write(hello));
  v1::CoordinatorMessage m;
  ASSERT_TRUE(stream->Read(&m));
  ASSERT_TRUE(m.welcome().accepted());

  v1::SubmitSeriesResponse submitted;
  {
    grpc::ClientContext c;
    v1::SubmitSeriesRequest request;
    request.set_spec_yaml(kSpec);
    ASSERT_TRUE(fleet->SubmitSeries(&c, request, &submitted).ok());
  }
  ASSERT_TRUE(stream->Read(&m));
  ASSERT_TRUE(m.has_assign_task()) << m.DebugString();

  // One stored run of that task.
  const v1::RunRecord run = testing::MakeRecord(1);  // chat-7b, gpu, warm, main figure 41 tokens/s, 1 s
  v1::AgentMessage records;
  *records.mutable_records() = testing::MakeBatch(1, {testing::Serialize(run)});
  ASSERT_TRUE(stream->Write(records));
  do {
    ASSERT_TRUE(stream->Read(&m));
  } while (!m.has_ack());
  ASSERT_EQ(m.ack().stored_run_ids_size(), 1);

  // Unary calls: one OK, one NOT_FOUND.
  {
    grpc::ClientContext c;
    v1::ListRunsResponse response;
    ASSERT_TRUE(admin->ListRuns(&c, v1::ListRunsRequest(), &response).ok());
    EXPECT_EQ(response.runs_size(), 1);
  }
  {
    grpc::ClientContext c;
    v1::GetSeriesRequest request;
    request.set_series_id("7d0c7a4e-0000-4000-8000-000000000000");
    v1::SeriesStatus status;
    EXPECT_EQ(fleet->GetSeries(&c, request, &status).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  // A server stream the client gives up on: the first status arrives, the cancel ends it.
  {
    grpc::ClientContext c;
    v1::GetSeriesRequest request;
    request.set_series_id(submitted.series_id());
    auto watch = fleet->WatchSeries(&c, request);
    v1::SeriesStatus status;
    ASSERT_TRUE(watch->Read(&status));
    EXPECT_EQ(status.series_id(), submitted.series_id());
    c.TryCancel();
    EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  stream->WritesDone();
  ASSERT_TRUE(stream->Finish().ok());

  const std::string run_labels =
      R"(agent="agent-1",backend="llama-server",mode="gpu",phase="warm",simulated="false",task="chat-7b",variant="none")";
  const std::vector<std::string> expected = {
      // gRPC calls by method and code; every method exists at 0 with OK.
      R"(benchfleet_coordinator_grpc_requests_total{code="OK",method="/benchfleet.v1.AgentGateway/Connect"} 1)",
      R"(benchfleet_coordinator_grpc_requests_total{code="OK",method="/benchfleet.v1.Fleet/SubmitSeries"} 1)",
      R"(benchfleet_coordinator_grpc_requests_total{code="OK",method="/benchfleet.v1.Admin/ListRuns"} 1)",
      R"(benchfleet_coordinator_grpc_requests_total{code="NOT_FOUND",method="/benchfleet.v1.Fleet/GetSeries"} 1)",
      R"(benchfleet_coordinator_grpc_requests_total{code="CANCELLED",method="/benchfleet.v1.Fleet/WatchSeries"} 1)",
      R"(benchfleet_coordinator_grpc_requests_total{code="OK",method="/benchfleet.v1.Admin/GetConditions"} 0)",
      R"(benchfleet_coordinator_grpc_requests_total{code="OK",method="/benchfleet.v1.Fleet/InvalidateRuns"} 0)",
      // Fleet gauges from the database: one machine, its task RUNNING (every state present).
      "benchfleet_fleet_agents_known 1",
      R"(benchfleet_fleet_tasks{state="running"} 1)",
      R"(benchfleet_fleet_tasks{state="pending"} 0)",
      R"(benchfleet_fleet_tasks{state="cancelled"} 0)",
      "benchfleet_coordinator_agents_connected 0",
      R"(benchfleet_coordinator_agent_connected{agent="agent-1"} 0)",
      // Ingest.
      R"(benchfleet_coordinator_records_total{result="stored"} 1)",
      "benchfleet_coordinator_ingest_batch_records_count 1",
      "benchfleet_coordinator_group_commit_runs_total 1",
      R"(benchfleet_coordinator_database_errors_total{operation="store_runs"} 0)",
      // The run's figures and its task's flags.
      // Its main figure, labelled as its declaration stamped it (the text format sorts labels).
      R"(benchfleet_run_last_figure{agent="agent-1",backend="llama-server",better="higher",figure="output tokens/s",)"
      R"(headline="1",mode="gpu",phase="warm",simulated="false",task="chat-7b",unit="tokens/s",variant="none"} 41)",
      "benchfleet_run_last_wall_seconds{" + run_labels + "} 1",
      "benchfleet_run_wall_seconds_count{" + run_labels + "} 1",
      R"(benchfleet_runs_flagged_total{agent="agent-1",flag="cache_hit",task="chat-7b"} 0)",
      R"(benchfleet_runs_flagged_total{agent="agent-1",flag="failed",task="chat-7b"} 0)",
  };
  const std::string text = ScrapeUntil(server.metrics_port(), expected);
  for (const std::string& line : expected) EXPECT_THAT(text, HasSubstr(line + "\n"));
  EXPECT_THAT(text, HasSubstr("# HELP benchfleet_fleet_tasks Tasks in the database by state"));
  server.Shutdown();
}

}  // namespace
}  // namespace benchfleet::coordinator
