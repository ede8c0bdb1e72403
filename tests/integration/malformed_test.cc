// Bad input at the gateway, over real gRPC to a coordinator process: malformed records are
// rejected with their reasons while the valid records of the same batch are stored, and a stream
// that sends records before Hello is closed with a clear status.
#include <grpcpp/grpcpp.h>

#include "benchfleet/v1/gateway.grpc.pb.h"
#include "common/hashing.h"
#include "common/record_validation.h"
#include "common/version.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::testing {
namespace {

v1::RunRecord ValidRecord(const std::string& agent_id) {
  v1::RunRecord r;
  r.set_run_id(NewUuid());
  r.set_agent_id(agent_id);
  r.set_backend("llama-server");
  r.set_task("llama-qwen2.5-3b-q4km");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(1);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.set_simulated(true);
  return r;
}

class MalformedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!db_.available()) GTEST_SKIP() << "BENCHFLEET_TEST_DATABASE_URL is not set";
    work_ = MakeTempDir("malformed");
    coordinator_ = std::make_unique<CoordinatorProcess>(db_.url(), work_);
    ASSERT_TRUE(coordinator_->Start()) << coordinator_->log();
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(64 << 20);
    stub_ = v1::AgentGateway::NewStub(grpc::CreateCustomChannel(
        coordinator_->address(), grpc::InsecureChannelCredentials(), args));
  }

  PgTestDb db_;
  std::string work_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<v1::AgentGateway::Stub> stub_;
};

TEST_F(MalformedTest, BadRecordsAreRejectedWithReasonsAndTheRestOfTheBatchIsStored) {
  const std::string agent_id = NewUuid();
  grpc::ClientContext context;
  auto stream = stub_->Connect(&context);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id(agent_id);
  hello.mutable_hello()->set_agent_version("test");
  hello.mutable_hello()->set_api_revision(kApiRevision);
  hello.mutable_hello()->mutable_conditions()->set_hostname("malformed-test-host");
  ASSERT_TRUE(stream->Write(hello));
  v1::CoordinatorMessage reply;
  ASSERT_TRUE(stream->Read(&reply));
  ASSERT_TRUE(reply.has_welcome());
  EXPECT_TRUE(reply.welcome().accepted()) << reply.welcome().reason();

  v1::AgentMessage batch;
  batch.mutable_records()->set_batch_id(7);
  std::vector<std::string> valid_ids;
  auto add_valid = [&] {
    auto r = ValidRecord(agent_id);
    valid_ids.push_back(r.run_id());
    batch.mutable_records()->add_records(r.SerializeAsString());
  };
  add_valid();                                               // 0
  auto no_id = ValidRecord(agent_id);                         // 1: no run id
  no_id.clear_run_id();
  batch.mutable_records()->add_records(no_id.SerializeAsString());
  add_valid();                                               // 2
  auto bad_phase = ValidRecord(agent_id);                     // 3: unknown phase
  bad_phase.set_phase(static_cast<v1::Phase>(7));
  batch.mutable_records()->add_records(bad_phase.SerializeAsString());
  auto bad_utf8 = ValidRecord(agent_id);                      // 4: invalid UTF-8 in `mode`
  bad_utf8.set_mode("gpu-XX");
  std::string bytes = bad_utf8.SerializeAsString();
  size_t at = bytes.find("gpu-XX");
  bytes[at + 4] = static_cast<char>(0xc3);
  bytes[at + 5] = static_cast<char>(0x28);
  batch.mutable_records()->add_records(bytes);
  auto big = ValidRecord(agent_id);                           // 5: over the size limit
  big.mutable_status()->set_log_tail(std::string(kMaxRecordBytes + 10, 'x'));
  batch.mutable_records()->add_records(big.SerializeAsString());
  batch.mutable_records()->add_records("\xff\xff\xff garbage");  // 6: not a record at all
  add_valid();                                               // 7
  auto unknown_flag = ValidRecord(agent_id);                  // 8: an unknown flag is stored
  unknown_flag.add_flags()->set_code("FLAG_FROM_A_NEWER_AGENT");
  valid_ids.push_back(unknown_flag.run_id());
  batch.mutable_records()->add_records(unknown_flag.SerializeAsString());
  ASSERT_TRUE(stream->Write(batch));

  ASSERT_TRUE(stream->Read(&reply));
  ASSERT_TRUE(reply.has_ack()) << reply.DebugString();
  const auto& ack = reply.ack();
  EXPECT_EQ(ack.batch_id(), 7u);
  std::vector<std::string> stored(ack.stored_run_ids().begin(), ack.stored_run_ids().end());
  std::sort(stored.begin(), stored.end());
  std::sort(valid_ids.begin(), valid_ids.end());
  EXPECT_EQ(stored, valid_ids);
  EXPECT_EQ(ack.duplicate_run_ids_size(), 0);
  ASSERT_EQ(ack.rejections_size(), 5);
  std::map<uint32_t, v1::Rejection> by_index;
  for (const auto& r : ack.rejections()) by_index[r.index()] = r;
  EXPECT_EQ(by_index[1].reason(), "run_id is missing");
  EXPECT_EQ(by_index[3].reason(), "phase 7 is unknown");
  EXPECT_EQ(by_index[3].run_id(), bad_phase.run_id());
  EXPECT_EQ(by_index[4].reason(),
            "not a valid RunRecord (malformed bytes or invalid UTF-8 in a string field)");
  EXPECT_EQ(by_index[4].run_id(), bad_utf8.run_id());
  EXPECT_EQ(by_index[5].reason(), "record is " + std::to_string(big.ByteSizeLong()) +
                                      " bytes, over the limit of " + std::to_string(kMaxRecordBytes));
  EXPECT_EQ(by_index[6].reason(),
            "not a valid RunRecord (malformed bytes or invalid UTF-8 in a string field)");
  EXPECT_EQ(by_index[6].run_id(), "");

  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs"), "4");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs WHERE flag_details @> "
                           "'[{\"code\":\"FLAG_FROM_A_NEWER_AGENT\"}]'"),
            "1");
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(MalformedTest, RecordsBeforeHelloCloseTheStreamWithFailedPrecondition) {
  grpc::ClientContext context;
  auto stream = stub_->Connect(&context);
  v1::AgentMessage batch;
  batch.mutable_records()->add_records(ValidRecord(NewUuid()).SerializeAsString());
  stream->Write(batch);
  stream->WritesDone();
  v1::CoordinatorMessage reply;
  EXPECT_FALSE(stream->Read(&reply));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "the first message on Connect must be Hello");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs"), "0");
}

TEST_F(MalformedTest, AnAgentFromTheFutureIsToldWhyNotCutOffSilently) {
  grpc::ClientContext context;
  auto stream = stub_->Connect(&context);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id(NewUuid());
  hello.mutable_hello()->set_api_revision(kApiRevision + 5);
  ASSERT_TRUE(stream->Write(hello));
  v1::CoordinatorMessage reply;
  ASSERT_TRUE(stream->Read(&reply));
  ASSERT_TRUE(reply.has_welcome());
  EXPECT_FALSE(reply.welcome().accepted());
  EXPECT_NE(reply.welcome().reason().find(std::to_string(kApiRevision + 5)), std::string::npos)
      << reply.welcome().reason();
  stream->WritesDone();
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), reply.welcome().reason());
}

}  // namespace
}  // namespace benchfleet::testing
