// AgentGateway and Admin over real gRPC on loopback: an in-process CoordinatorServer (port 0) on
// a fresh database per test, a SimulatedClock, and a TCP proxy in front of PostgreSQL so a test
// can take the database away.
#include <grpcpp/grpcpp.h>
#include <prometheus/registry.h>

#include <limits>

#include "absl/strings/str_cat.h"
#include "benchfleet/v1/admin.grpc.pb.h"
#include "benchfleet/v1/gateway.grpc.pb.h"
#include "common/conditions_fingerprint.h"
#include "common/version.h"
#include "coordinator/metrics/prometheus_metrics.h"
#include "coordinator/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/pg_test_db.h"
#include "tests/unit/coordinator/tcp_proxy.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>;

v1::AgentMessage HelloMessage(uint32_t revision = kApiRevision, const std::string& agent = testing::kAgentId) {
  v1::AgentMessage m;
  v1::Hello& hello = *m.mutable_hello();
  hello.set_agent_id(agent);
  hello.set_agent_version("0.1.0");
  hello.set_api_revision(revision);
  *hello.mutable_conditions() = testing::MakeConditions("host-1", {{"class", "a100"}});
  return m;
}

v1::AgentMessage RecordsMessage(const v1::RecordBatch& batch) {
  v1::AgentMessage m;
  *m.mutable_records() = batch;
  return m;
}

// Returns the value of a counter or gauge sample with `label`=`value` ("" for none).
double MetricValue(prometheus::Registry& registry, const std::string& name, const std::string& label = "",
                   const std::string& value = "") {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& m : family.metric) {
      bool match = label.empty();
      for (const auto& l : m.label) match = match || (l.name == label && l.value == value);
      if (match) return family.type == prometheus::MetricType::Gauge ? m.gauge.value : m.counter.value;
    }
  }
  return -1;
}

class ServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!db_.available()) GTEST_SKIP() << "BENCHFLEET_TEST_DATABASE_URL is not set";
    auto [host, port] = testing::HostPort(db_.url());
    proxy_ = std::make_unique<testing::TcpProxy>(host, port);
    CoordinatorServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.database_url = testing::WithHostPort(db_.url(), "127.0.0.1", proxy_->port());
    options.clock = &clock_;
    server_ = std::make_unique<CoordinatorServer>(options);
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
    EXPECT_EQ(server_->address(), "127.0.0.1:" + std::to_string(server_->port()));
    auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    gateway_ = v1::AgentGateway::NewStub(channel);
    admin_ = v1::Admin::NewStub(channel);
  }

  void TearDown() override {
    if (server_ == nullptr) return;
    // Moves the clock meanwhile, so a committer waiting to retry does not hold shutdown up.
    std::atomic<bool> stopped{false};
    std::thread stopper([&] {
      server_->Shutdown();
      stopped = true;
    });
    while (!stopped) {
      clock_.Advance(absl::Seconds(1));
      std::this_thread::yield();
    }
    stopper.join();
  }

  // Opens a stream, says Hello and returns it with the Welcome read.
  std::unique_ptr<Stream> Connect(grpc::ClientContext* context) {
    auto stream = gateway_->Connect(context);
    EXPECT_TRUE(stream->Write(HelloMessage()));
    v1::CoordinatorMessage welcome;
    EXPECT_TRUE(stream->Read(&welcome));
    EXPECT_TRUE(welcome.welcome().accepted()) << welcome.DebugString();
    return stream;
  }

  v1::Ack ReadAck(Stream& stream) {
    v1::CoordinatorMessage m;
    EXPECT_TRUE(stream.Read(&m));
    EXPECT_TRUE(m.has_ack()) << m.DebugString();
    return m.ack();
  }

  std::string RunCount() { return db_.QueryValue("SELECT count(*) FROM runs"); }

  testing::PgTestDb db_;
  SimulatedClock clock_;
  std::unique_ptr<testing::TcpProxy> proxy_;
  std::unique_ptr<CoordinatorServer> server_;
  std::unique_ptr<v1::AgentGateway::Stub> gateway_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

TEST_F(ServicesTest, RecordsBeforeHelloEndTheStream) {
  grpc::ClientContext context;
  auto stream = gateway_->Connect(&context);
  stream->Write(RecordsMessage(testing::MakeBatch(1, {testing::Serialize(testing::MakeRecord())})));
  v1::CoordinatorMessage m;
  EXPECT_FALSE(stream->Read(&m));
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "the first message on Connect must be Hello");
  EXPECT_EQ(RunCount(), "0");
}

TEST_F(ServicesTest, ATooOldAgentIsToldWhyAndTheStreamEnds) {
  grpc::ClientContext context;
  auto stream = gateway_->Connect(&context);
  stream->Write(HelloMessage(/*revision=*/0));
  v1::CoordinatorMessage m;
  ASSERT_TRUE(stream->Read(&m));
  const std::string reason = "agent speaks API revision 0; this coordinator accepts 1..1; upgrade the agent";
  EXPECT_FALSE(m.welcome().accepted());
  EXPECT_EQ(m.welcome().reason(), reason);
  EXPECT_EQ(m.welcome().min_agent_api_revision(), kMinAgentApiRevision);
  EXPECT_FALSE(stream->Read(&m));
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), reason);
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM machines"), "0");
}

TEST_F(ServicesTest, StoresTheGoodRecordsOfABatchAndRejectsTheOthersOnce) {
  grpc::ClientContext context;
  auto stream = Connect(&context);
  const v1::RunRecord a = testing::MakeRecord(1), b = testing::MakeRecord(2), c = testing::MakeRecord(3);
  v1::RunRecord bad_utf8 = testing::MakeRecord(4);
  const v1::RecordBatch batch = testing::MakeBatch(
      7, {testing::Serialize(a), "\x0a\xff", testing::Serialize(b),
          testing::WithInvalidUtf8(testing::Serialize(bad_utf8)), testing::Serialize(c)});
  const std::string malformed = "not a valid RunRecord (malformed bytes or invalid UTF-8 in a string field)";

  ASSERT_TRUE(stream->Write(RecordsMessage(batch)));
  v1::Ack ack = ReadAck(*stream);
  EXPECT_EQ(ack.batch_id(), 7u);
  EXPECT_THAT(ack.stored_run_ids(), ElementsAre(a.run_id(), b.run_id(), c.run_id()));
  EXPECT_THAT(ack.duplicate_run_ids(), IsEmpty());
  ASSERT_EQ(ack.rejections_size(), 2);
  EXPECT_EQ(ack.rejections(0).index(), 1u);
  EXPECT_EQ(ack.rejections(0).run_id(), "");
  EXPECT_EQ(ack.rejections(0).reason(), malformed);
  EXPECT_EQ(ack.rejections(1).index(), 3u);
  EXPECT_EQ(ack.rejections(1).run_id(), bad_utf8.run_id());
  EXPECT_EQ(ack.rejections(1).reason(), malformed);
  EXPECT_EQ(RunCount(), "3");

  // A re-send after a lost Ack: nothing stored twice, the same rejections.
  ASSERT_TRUE(stream->Write(RecordsMessage(batch)));
  ack = ReadAck(*stream);
  EXPECT_THAT(ack.stored_run_ids(), IsEmpty());
  EXPECT_THAT(ack.duplicate_run_ids(), ElementsAre(a.run_id(), b.run_id(), c.run_id()));
  EXPECT_EQ(ack.rejections_size(), 2);
  EXPECT_EQ(RunCount(), "3");

  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  prometheus::Registry& registry = *server_->metrics().registry();
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_records_total", "result", "stored"), 3);
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_records_total", "result", "duplicate"), 3);
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_records_rejected_total", "reason", "malformed"), 4);
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_agents_connected"), 0);
}

TEST_F(ServicesTest, RecordsPastABoundAreRejectedWithTheirReasonAndTheRestOfTheBatchIsStored) {
  grpc::ClientContext context;
  auto stream = Connect(&context);
  const v1::RunRecord a = testing::MakeRecord(1), b = testing::MakeRecord(2);
  const v1::RunRecord huge_index = testing::MakeRecord(4294967295u);
  v1::RunRecord nan = testing::MakeRecord(3);
  nan.mutable_metrics(0)->set_value(std::numeric_limits<double>::quiet_NaN());
  v1::RunRecord infinite = testing::MakeRecord(4);
  infinite.mutable_metrics(0)->set_value(std::numeric_limits<double>::infinity());
  v1::RunRecord negative = testing::MakeRecord(5);
  negative.mutable_wall_duration()->set_seconds(-2);
  v1::RunRecord inverted = testing::MakeRecord(6);
  inverted.mutable_end_time()->set_seconds(inverted.start_time().seconds() - 60);
  v1::RunRecord repetition = testing::MakeRecord(7);
  repetition.set_repetition(4294967295u);
  v1::RunRecord outside = testing::MakeRecord(8);  // stamped a day after it started, for a 1 s run
  outside.mutable_end_time()->set_seconds(outside.start_time().seconds() + 86400);
  const v1::RecordBatch batch = testing::MakeBatch(
      9, {testing::Serialize(a), testing::Serialize(huge_index), testing::Serialize(nan), testing::Serialize(infinite),
          testing::Serialize(negative), testing::Serialize(inverted), testing::Serialize(repetition),
          testing::Serialize(outside), testing::Serialize(b)});
  ASSERT_TRUE(stream->Write(RecordsMessage(batch)));
  const v1::Ack ack = ReadAck(*stream);
  EXPECT_THAT(ack.stored_run_ids(), ElementsAre(a.run_id(), b.run_id()));
  std::vector<std::string> rejections;
  for (const v1::Rejection& r : ack.rejections()) {
    rejections.push_back(absl::StrCat(r.index(), " ", r.run_id() == "" ? "?" : "id", " ", r.reason()));
  }
  EXPECT_THAT(rejections,
              ElementsAre("1 id call_index 4294967295 is over the maximum of 100000",
                          "2 id metric \"tokens_per_second\" is nan, not a finite number",
                          "3 id metric \"tokens_per_second\" is inf, not a finite number",
                          "4 id wall_duration -2 s is negative", "5 id end_time is 60 s before start_time",
                          "6 id repetition 4294967295 is over the maximum of 10000",
                          "7 id end_time - start_time (86400 s) and wall_duration (1 s) differ by more than 3600 s"));
  EXPECT_EQ(RunCount(), "2");
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  prometheus::Registry& registry = *server_->metrics().registry();
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_records_rejected_total", "reason", "out_of_bounds"), 7);
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_records_total", "result", "stored"), 2);
}

TEST_F(ServicesTest, ARunIdReSentWithOtherContentIsRejectedAsAConflictCountedAndNotStored) {
  grpc::ClientContext context;
  auto stream = Connect(&context);
  const v1::RunRecord a = testing::MakeRecord(1), b = testing::MakeRecord(2);
  ASSERT_TRUE(stream->Write(RecordsMessage(testing::MakeBatch(1, {testing::Serialize(a), testing::Serialize(b)}))));
  EXPECT_THAT(ReadAck(*stream).stored_run_ids(), ElementsAre(a.run_id(), b.run_id()));

  v1::RunRecord changed = a;
  changed.mutable_metrics(0)->set_value(1000);
  const v1::RunRecord c = testing::MakeRecord(3);
  ASSERT_TRUE(stream->Write(RecordsMessage(
      testing::MakeBatch(2, {testing::Serialize(changed), testing::Serialize(b), testing::Serialize(c)}))));
  v1::Ack ack = ReadAck(*stream);
  EXPECT_THAT(ack.stored_run_ids(), ElementsAre(c.run_id()));
  EXPECT_THAT(ack.duplicate_run_ids(), ElementsAre(b.run_id()));
  ASSERT_EQ(ack.rejections_size(), 1);
  EXPECT_EQ(ack.rejections(0).index(), 0u);
  EXPECT_EQ(ack.rejections(0).run_id(), a.run_id());
  EXPECT_EQ(ack.rejections(0).reason(), "conflict: run_id " + a.run_id() + " already stored with different content");
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());

  // The same through an import: answered as a rejection with the same reason.
  v1::ImportRunsRequest request;
  *request.add_runs() = changed;
  *request.add_runs() = b;
  v1::ImportRunsResponse response;
  grpc::ClientContext import_context;
  ASSERT_TRUE(admin_->ImportRuns(&import_context, request, &response).ok());
  EXPECT_THAT(response.stored_run_ids(), IsEmpty());
  EXPECT_THAT(response.duplicate_run_ids(), ElementsAre(b.run_id()));
  EXPECT_THAT(response.rejections(),
              ElementsAre(a.run_id() + ": conflict: run_id " + a.run_id() + " already stored with different content"));

  EXPECT_EQ(RunCount(), "3");
  EXPECT_EQ(db_.QueryValue("SELECT metrics::text FROM runs WHERE run_id = '" + a.run_id() + "'"),
            "{\"tokens_per_second\": 41}");
  prometheus::Registry& registry = *server_->metrics().registry();
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_run_conflicts_total"), 2);
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_records_total", "result", "duplicate"), 1);
}

TEST_F(ServicesTest, PipelinedBatchesAreAllAcknowledgedBeforeTheStreamCloses) {
  grpc::ClientContext context;
  auto stream = Connect(&context);
  std::set<std::string> sent;
  for (uint64_t id = 1; id <= 5; ++id) {
    std::vector<std::string> records;
    for (int i = 0; i < 20; ++i) {
      v1::RunRecord r = testing::MakeRecord(i + 1);
      sent.insert(r.run_id());
      records.push_back(testing::Serialize(r));
    }
    ASSERT_TRUE(stream->Write(RecordsMessage(testing::MakeBatch(id, records))));
  }
  stream->WritesDone();  // the coordinator still answers every batch sent
  std::set<uint64_t> acked;
  std::set<std::string> stored;
  v1::CoordinatorMessage m;
  while (stream->Read(&m)) {
    acked.insert(m.ack().batch_id());
    stored.insert(m.ack().stored_run_ids().begin(), m.ack().stored_run_ids().end());
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_THAT(acked, ElementsAre(1u, 2u, 3u, 4u, 5u));
  EXPECT_EQ(stored, sent);
  EXPECT_EQ(RunCount(), "100");
}

TEST_F(ServicesTest, HeartbeatsAreAnsweredWithTheCoordinatorsTime) {
  grpc::ClientContext context;
  auto stream = Connect(&context);
  v1::AgentMessage heartbeat;
  heartbeat.mutable_heartbeat()->set_outbox_depth(3);
  clock_.Advance(absl::Seconds(90));
  ASSERT_TRUE(stream->Write(heartbeat));
  v1::CoordinatorMessage m;
  ASSERT_TRUE(stream->Read(&m));
  ASSERT_TRUE(m.has_heartbeat_ack());
  EXPECT_EQ(m.heartbeat_ack().receive_time().seconds(), 1767225600 + 90);
  EXPECT_EQ(m.heartbeat_ack().receive_time().nanos(), 0);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(ServicesTest, AStreamSpeaksForOneAgent) {
  grpc::ClientContext context;
  auto stream = Connect(&context);
  stream->Write(HelloMessage(kApiRevision, "agent-2"));
  v1::CoordinatorMessage m;
  EXPECT_FALSE(stream->Read(&m));
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(),
            "this stream is agent agent-1's; a Hello for agent agent-2 needs a stream of its own");
}

TEST_F(ServicesTest, RecordsWaitUnacknowledgedWhileTheDatabaseIsAway) {
  grpc::ClientContext context;
  auto stream = Connect(&context);
  proxy_->Cut();
  const v1::RunRecord a = testing::MakeRecord(1), b = testing::MakeRecord(2);
  ASSERT_TRUE(stream->Write(RecordsMessage(
      testing::MakeBatch(1, {testing::Serialize(a), testing::Serialize(b)}))));
  // The committer failed and waits to retry: no Ack, nothing stored.
  while (clock_.sleepers() == 0) std::this_thread::yield();
  EXPECT_EQ(RunCount(), "0");
  // The stream still serves meanwhile.
  v1::AgentMessage heartbeat;
  heartbeat.mutable_heartbeat();
  ASSERT_TRUE(stream->Write(heartbeat));
  v1::CoordinatorMessage m;
  ASSERT_TRUE(stream->Read(&m));
  EXPECT_TRUE(m.has_heartbeat_ack()) << m.DebugString();

  // A new agent is welcomed meanwhile; its machine is recorded once the database is back.
  grpc::ClientContext other_context;
  auto other = gateway_->Connect(&other_context);
  ASSERT_TRUE(other->Write(HelloMessage(kApiRevision, "agent-2")));
  ASSERT_TRUE(other->Read(&m));
  EXPECT_TRUE(m.welcome().accepted());

  proxy_->Restore();
  clock_.Advance(absl::Seconds(1));
  v1::Ack ack = ReadAck(*stream);
  EXPECT_THAT(ack.stored_run_ids(), ElementsAre(a.run_id(), b.run_id()));
  EXPECT_EQ(RunCount(), "2");
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  // The machine upsert follows the runs in the committer's same round.
  while (db_.QueryValue("SELECT count(*) FROM machines WHERE agent_id = 'agent-2'") != "1") {
    std::this_thread::yield();
  }
  other->WritesDone();
  EXPECT_TRUE(other->Finish().ok());
  // One failed group commit (then the retry after the clock moved) and agent-2's Hello.
  prometheus::Registry& registry = *server_->metrics().registry();
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_database_errors_total", "operation", "store_runs"), 1);
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_database_errors_total", "operation", "upsert_machine"), 1);
  EXPECT_EQ(MetricValue(registry, "benchfleet_coordinator_database_errors_total", "operation", "touch_machine"), 0);
}

TEST_F(ServicesTest, ListMachinesShowsConditionsAndWhoIsConnected) {
  grpc::ClientContext context;
  auto stream = Connect(&context);
  auto list = [&](std::map<std::string, std::string> labels) {
    grpc::ClientContext c;
    v1::ListMachinesRequest request;
    request.mutable_labels()->insert(labels.begin(), labels.end());
    v1::ListMachinesResponse response;
    EXPECT_TRUE(admin_->ListMachines(&c, request, &response).ok());
    return response;
  };
  v1::ListMachinesResponse response = list({});
  ASSERT_EQ(response.machines_size(), 1);
  const v1::Machine& machine = response.machines(0);
  EXPECT_EQ(machine.agent_id(), testing::kAgentId);
  EXPECT_TRUE(machine.connected());
  EXPECT_EQ(machine.conditions().hostname(), "host-1");
  // The Hello carried no fingerprint: the coordinator computed it.
  EXPECT_EQ(machine.conditions().fingerprint(),
            ConditionsFingerprint(testing::MakeConditions("host-1", {{"class", "a100"}})));
  EXPECT_EQ(machine.first_seen_time().seconds(), 1767225600);
  EXPECT_EQ(list({{"class", "m1"}}).machines_size(), 0);
  EXPECT_EQ(list({{"class", "a100"}}).machines_size(), 1);

  stream->WritesDone();
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_FALSE(list({}).machines(0).connected());
}

TEST_F(ServicesTest, ListRunsAppliesFiltersAndPages) {
  grpc::ClientContext context;
  auto stream = Connect(&context);
  std::vector<std::string> records;
  std::vector<std::string> ids;
  for (int i = 1; i <= 5; ++i) {
    v1::RunRecord r = testing::MakeRecord(i);
    r.set_backend(i <= 2 ? "comfyui" : "llama-server");
    ids.push_back(r.run_id());
    records.push_back(testing::Serialize(r));
  }
  ASSERT_TRUE(stream->Write(RecordsMessage(testing::MakeBatch(1, records))));
  ReadAck(*stream);

  auto list = [&](const v1::ListRunsRequest& request, grpc::Status* status = nullptr) {
    grpc::ClientContext c;
    v1::ListRunsResponse response;
    grpc::Status s = admin_->ListRuns(&c, request, &response);
    if (status != nullptr) *status = s;
    else EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  };
  v1::ListRunsRequest request;
  request.set_backend("llama-server");
  request.mutable_since()->set_seconds(1767225600 + 4);
  request.add_agent_ids(testing::kAgentId);
  (*request.mutable_labels())["class"] = "a100";
  v1::ListRunsResponse response = list(request);
  ASSERT_EQ(response.runs_size(), 2);
  EXPECT_EQ(response.runs(0).run_id(), ids[4]);
  EXPECT_EQ(response.runs(1).run_id(), ids[3]);
  EXPECT_EQ(response.next_page_token(), "");

  request.Clear();
  request.mutable_until()->set_seconds(1767225600 + 3);
  request.set_page_size(1);
  response = list(request);
  ASSERT_EQ(response.runs_size(), 1);
  EXPECT_EQ(response.runs(0).run_id(), ids[1]);
  request.set_page_token(response.next_page_token());
  response = list(request);
  ASSERT_EQ(response.runs_size(), 1);
  EXPECT_EQ(response.runs(0).run_id(), ids[0]);
  EXPECT_EQ(response.next_page_token(), "");

  request.set_page_token("not-a-token");
  grpc::Status status;
  list(request, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "page_token is not valid: pass the next_page_token of the previous page unchanged");
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

}  // namespace
}  // namespace benchfleet::coordinator
