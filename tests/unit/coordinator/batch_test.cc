// PrepareBatch / BuildAck / CheckHello: what a batch and a Hello turn into, without gRPC or a
// database.
#include "common/record_validation.h"
#include "common/version.h"
#include "coordinator/ingest/batch.h"
#include "coordinator/ingest/hello.h"
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;

struct RejectionView {
  uint32_t index;
  std::string run_id;
  std::string reason;
  bool operator==(const RejectionView&) const = default;
};

std::vector<RejectionView> Rejections(const google::protobuf::RepeatedPtrField<v1::Rejection>& rs) {
  std::vector<RejectionView> out;
  for (const auto& r : rs) out.push_back({r.index(), r.run_id(), r.reason()});
  return out;
}

class BatchTest : public ::testing::Test {
 protected:
  testing::FakeRunStore store_;
};

TEST_F(BatchTest, RejectsOnlyWhatCannotBeStoredWithExactReasons) {
  v1::RunRecord ok1 = testing::MakeRecord(1);
  v1::RunRecord no_id = testing::MakeRecord(2);
  no_id.clear_run_id();
  v1::RunRecord phase7 = testing::MakeRecord(3);
  phase7.set_phase(static_cast<v1::Phase>(7));
  v1::RunRecord bad_utf8 = testing::MakeRecord(4);
  v1::RunRecord oversized = testing::MakeRecord(5);
  oversized.mutable_status()->set_log_tail(std::string(kMaxRecordBytes, 'x'));
  v1::RunRecord new_flag = testing::MakeRecord(6);
  new_flag.add_flags()->set_code("SOMETHING_NEW");

  const std::string oversized_bytes = testing::Serialize(oversized);
  const v1::RecordBatch batch = testing::MakeBatch(
      9, {testing::Serialize(ok1), testing::Serialize(no_id), testing::Serialize(phase7),
          testing::WithInvalidUtf8(testing::Serialize(bad_utf8)), oversized_bytes,
          testing::Serialize(new_flag), "\xff\xff\xff"});
  const PreparedBatch prepared = PrepareBatch(batch, store_);

  EXPECT_EQ(prepared.batch_id, 9u);
  EXPECT_THAT(prepared.run_ids, ElementsAre(ok1.run_id(), new_flag.run_id()));
  EXPECT_THAT(prepared.indexes, ElementsAre(0u, 5u));
  ASSERT_EQ(prepared.runs.runs.size(), 2u);
  std::vector<RejectionView> rejections;
  for (const auto& r : prepared.rejections) rejections.push_back({r.index(), r.run_id(), r.reason()});
  const std::string malformed =
      "not a valid RunRecord (malformed bytes or invalid UTF-8 in a string field)";
  EXPECT_THAT(rejections,
              ElementsAre(RejectionView{1, "", "run_id is missing"},
                          RejectionView{2, phase7.run_id(), "phase 7 is unknown"},
                          RejectionView{3, bad_utf8.run_id(), malformed},
                          RejectionView{4, oversized.run_id(),
                                        "record is " + std::to_string(oversized_bytes.size()) +
                                            " bytes, over the limit of 1048576"},
                          RejectionView{6, "", malformed}));
  EXPECT_THAT(prepared.rejection_codes,
              ElementsAre("missing_run_id", "unknown_phase", "malformed", "too_large", "malformed"));
}

TEST_F(BatchTest, AckListsStoredDuplicatesAndRefusalsByIndex) {
  v1::RunRecord a = testing::MakeRecord(1), b = testing::MakeRecord(2), c = testing::MakeRecord(3);
  v1::RunRecord bad = testing::MakeRecord(4);
  bad.clear_run_id();
  const PreparedBatch prepared = PrepareBatch(
      testing::MakeBatch(4, {testing::Serialize(a), testing::Serialize(bad), testing::Serialize(b),
                             testing::Serialize(c)}),
      store_);
  std::vector<RunStoreResult> results(3);
  results[1].outcome = StoreOutcome::kDuplicate;
  results[2].outcome = StoreOutcome::kRefused;
  results[2].reason = "the database refused the record: value too long";

  const v1::Ack ack = BuildAck(prepared, results);
  EXPECT_EQ(ack.batch_id(), 4u);
  EXPECT_THAT(ack.stored_run_ids(), ElementsAre(a.run_id()));
  EXPECT_THAT(ack.duplicate_run_ids(), ElementsAre(b.run_id()));
  EXPECT_THAT(Rejections(ack.rejections()),
              ElementsAre(RejectionView{1, "", "run_id is missing"},
                          RejectionView{3, c.run_id(), "the database refused the record: value too long"}));
}

TEST_F(BatchTest, RecordsPastABoundAreRejectedOneByOneAndAConflictIsARejection) {
  v1::RunRecord a = testing::MakeRecord(1), b = testing::MakeRecord(2), c = testing::MakeRecord(3);
  v1::RunRecord huge_index = testing::MakeRecord(4294967295u);
  v1::RunRecord nan = testing::MakeRecord(5);
  nan.mutable_metrics(0)->set_value(std::numeric_limits<double>::quiet_NaN());
  v1::RunRecord inverted = testing::MakeRecord(6);
  inverted.mutable_end_time()->set_seconds(inverted.start_time().seconds() - 10);
  const PreparedBatch prepared = PrepareBatch(
      testing::MakeBatch(5, {testing::Serialize(a), testing::Serialize(huge_index), testing::Serialize(b),
                             testing::Serialize(nan), testing::Serialize(inverted), testing::Serialize(c)}),
      store_);
  EXPECT_THAT(prepared.run_ids, ElementsAre(a.run_id(), b.run_id(), c.run_id()));
  EXPECT_THAT(prepared.rejection_codes, ElementsAre("out_of_bounds", "out_of_bounds", "out_of_bounds"));
  std::vector<RunStoreResult> results(3);
  results[1].outcome = StoreOutcome::kConflict;
  results[1].reason = "conflict: run_id " + b.run_id() + " already stored with different content";

  const v1::Ack ack = BuildAck(prepared, results);
  EXPECT_THAT(ack.stored_run_ids(), ElementsAre(a.run_id(), c.run_id()));
  EXPECT_THAT(ack.duplicate_run_ids(), ElementsAre());
  EXPECT_THAT(Rejections(ack.rejections()),
              ElementsAre(RejectionView{1, huge_index.run_id(), "call_index 4294967295 is over the maximum of 100000"},
                          RejectionView{2, b.run_id(), "conflict: run_id " + b.run_id() + " already stored with different content"},
                          RejectionView{3, nan.run_id(), "metric \"tokens_per_second\" is nan, not a finite number"},
                          RejectionView{4, inverted.run_id(), "end_time is 10 s before start_time"}));
}

TEST(RejectionCodeTest, NamesEveryReason) {
  EXPECT_EQ(RejectionCode(absl::OutOfRangeError("call_index 4294967295 is over the maximum of 100000")),
            "out_of_bounds");
  EXPECT_EQ(RejectionCode(absl::InvalidArgumentError("run_id \"x\" is not a UUID")), "invalid_run_id");
  EXPECT_EQ(RejectionCode(absl::InvalidArgumentError("status 9 is unknown")), "unknown_status");
  EXPECT_EQ(RejectionCode(absl::InvalidArgumentError("agent_id is missing")), "missing_agent_id");
  EXPECT_EQ(RejectionCode(absl::InvalidArgumentError("the database refused the record: x")),
            "refused_by_database");
  EXPECT_EQ(RejectionCode(absl::InvalidArgumentError("cannot write x as JSON")), "unrepresentable");
}

TEST(HelloTest, AcceptsTheRevisionsOfThisBuild) {
  v1::Hello hello;
  hello.set_agent_id("a");
  hello.set_api_revision(kApiRevision);
  EXPECT_TRUE(CheckHello(hello).ok());
  const v1::Welcome welcome = MakeWelcome(hello, absl::OkStatus());
  EXPECT_TRUE(welcome.accepted());
  EXPECT_EQ(welcome.reason(), "");
  EXPECT_EQ(welcome.agent_id(), "a");
  EXPECT_EQ(welcome.api_revision(), kApiRevision);
  EXPECT_EQ(welcome.min_agent_api_revision(), kMinAgentApiRevision);
  EXPECT_EQ(welcome.coordinator_version(), kVersion);
}

TEST(HelloTest, RefusesOtherRevisionsAndSaysWhatToUpgrade) {
  v1::Hello hello;
  hello.set_agent_id("a");
  hello.set_api_revision(kMinAgentApiRevision - 1);
  EXPECT_EQ(CheckHello(hello),
            absl::FailedPreconditionError(
                "agent speaks API revision 0; this coordinator accepts 1..1; upgrade the agent"));
  hello.set_api_revision(kApiRevision + 1);
  EXPECT_EQ(CheckHello(hello),
            absl::FailedPreconditionError(
                "agent speaks API revision 2; this coordinator accepts 1..1; upgrade the coordinator"));
  const v1::Welcome welcome = MakeWelcome(hello, CheckHello(hello));
  EXPECT_FALSE(welcome.accepted());
  EXPECT_EQ(welcome.reason(),
            "agent speaks API revision 2; this coordinator accepts 1..1; upgrade the coordinator");
  hello.set_api_revision(kApiRevision);
  hello.clear_agent_id();
  EXPECT_EQ(CheckHello(hello), absl::InvalidArgumentError("Hello has no agent_id"));
}

}  // namespace
}  // namespace benchfleet::coordinator
