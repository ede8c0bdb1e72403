#include "common/record_validation.h"

#include "gtest/gtest.h"

namespace benchfleet {
namespace {

v1::RunRecord Valid() {
  v1::RunRecord r;
  r.set_run_id("123e4567-e89b-42d3-a456-426614174000");
  r.set_agent_id("agent-1");
  r.set_phase(v1::PHASE_WARM);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  return r;
}

TEST(RecordValidationTest, AcceptsAValidRecordWithAnUnknownFlag) {
  auto r = Valid();
  auto* flag = r.add_flags();
  flag->set_code("FLAG_FROM_THE_FUTURE");
  EXPECT_TRUE(ValidateRecord(r).ok());
}

TEST(RecordValidationTest, RejectsMissingOrMalformedRunId) {
  auto r = Valid();
  r.clear_run_id();
  EXPECT_EQ(ValidateRecord(r), absl::InvalidArgumentError("run_id is missing"));
  r.set_run_id("run-1");
  EXPECT_EQ(ValidateRecord(r), absl::InvalidArgumentError("run_id \"run-1\" is not a UUID"));
}

TEST(RecordValidationTest, RejectsUnknownPhaseAndStatus) {
  auto r = Valid();
  r.set_phase(static_cast<v1::Phase>(7));
  EXPECT_EQ(ValidateRecord(r), absl::InvalidArgumentError("phase 7 is unknown"));
  r = Valid();
  r.set_phase(v1::PHASE_UNSPECIFIED);
  EXPECT_EQ(ValidateRecord(r), absl::InvalidArgumentError("phase 0 is unknown"));
  r = Valid();
  r.mutable_status()->set_code(static_cast<v1::RunStatus::Code>(9));
  EXPECT_EQ(ValidateRecord(r), absl::InvalidArgumentError("status 9 is unknown"));
}

TEST(RecordValidationTest, InvalidUtf8IsRejectedButTheRunIdIsStillRead) {
  auto r = Valid();
  r.set_task("placeholder");
  std::string bytes = r.SerializeAsString();
  size_t at = bytes.find("placeholder");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = static_cast<char>(0xff);  // an invalid UTF-8 lead byte inside `task`
  v1::RunRecord parsed;
  std::string run_id;
  auto status = ParseAndValidateRecord(bytes, &parsed, &run_id);
  EXPECT_EQ(status, absl::InvalidArgumentError(
                        "not a valid RunRecord (malformed bytes or invalid UTF-8 in a string field)"));
  EXPECT_EQ(run_id, "123e4567-e89b-42d3-a456-426614174000");
}

TEST(RecordValidationTest, OversizedRecordIsRejected) {
  auto r = Valid();
  r.mutable_status()->set_log_tail(std::string(kMaxRecordBytes, 'x'));
  std::string bytes = r.SerializeAsString();
  v1::RunRecord parsed;
  std::string run_id;
  auto status = ParseAndValidateRecord(bytes, &parsed, &run_id);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "record is " + std::to_string(bytes.size()) +
                                  " bytes, over the limit of " + std::to_string(kMaxRecordBytes));
  EXPECT_EQ(run_id, "123e4567-e89b-42d3-a456-426614174000");
}

TEST(RecordValidationTest, ParsesAndValidatesGoodBytes) {
  v1::RunRecord parsed;
  std::string run_id;
  EXPECT_TRUE(ParseAndValidateRecord(Valid().SerializeAsString(), &parsed, &run_id).ok());
  EXPECT_EQ(run_id, "123e4567-e89b-42d3-a456-426614174000");
  EXPECT_EQ(parsed.phase(), v1::PHASE_WARM);
}

TEST(RecordValidationTest, NamesOfPhasesAndStatuses) {
  EXPECT_EQ(PhaseName(v1::PHASE_VALIDATION), "validation");
  EXPECT_EQ(PhaseName(v1::PHASE_COLD), "cold");
  EXPECT_EQ(PhaseName(v1::PHASE_WARM), "warm");
  EXPECT_EQ(StatusName(v1::RunStatus::CODE_OK), "ok");
  EXPECT_EQ(StatusName(v1::RunStatus::CODE_FAILED), "failed");
}

}  // namespace
}  // namespace benchfleet
