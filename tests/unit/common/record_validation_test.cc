#include "common/record_validation.h"

#include <limits>

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

// A run of 2 s (start, end and wall agree), one metric and one request: inside every bound.
v1::RunRecord Timed() {
  auto r = Valid();
  r.set_call_index(3);
  r.set_repetition(2);
  r.mutable_start_time()->set_seconds(1767225600);
  r.mutable_end_time()->set_seconds(1767225602);
  r.mutable_wall_duration()->set_seconds(2);
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(41.5);
  auto* q = r.add_requests();
  q->set_latency_seconds(1.5);
  q->set_time_to_first_token_seconds(0.25);
  q->add_inter_token_seconds(0.01);
  return r;
}

TEST(RecordValidationTest, ARecordInsideEveryBoundIsAccepted) {
  EXPECT_TRUE(ValidateRecord(Timed()).ok());
  auto r = Timed();
  r.set_call_index(kMaxCallIndex);
  r.set_repetition(kMaxRepetition);
  r.mutable_wall_duration()->set_seconds(2 + kMaxClockDisagreementSeconds);  // a clock step of 1 h
  EXPECT_TRUE(ValidateRecord(r).ok());
}

TEST(RecordValidationTest, NonFiniteFiguresAreOutOfRange) {
  auto r = Timed();
  r.mutable_metrics(0)->set_value(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("metric \"tokens_per_second\" is nan, not a finite number"));
  r.mutable_metrics(0)->set_value(-std::numeric_limits<double>::infinity());
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("metric \"tokens_per_second\" is -inf, not a finite number"));
  r = Timed();
  r.mutable_requests(0)->set_latency_seconds(std::numeric_limits<double>::infinity());
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("request 1 latency_seconds is inf, not a finite number"));
  r = Timed();
  r.mutable_requests(0)->set_inter_token_seconds(0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("request 1 inter_token_seconds is nan, not a finite number"));
}

// RunRecord.warm_stop (runs.warm.until): its numbers are figures too.
TEST(RecordValidationTest, NonFiniteWarmStopNumbersAreOutOfRange) {
  auto r = Timed();
  r.mutable_warm_stop()->set_reason(v1::WarmStop::REASON_STABLE);
  r.mutable_warm_stop()->set_median(52);
  r.mutable_warm_stop()->set_ci_halfwidth(0.018);
  EXPECT_TRUE(ValidateRecord(r).ok());
  r.mutable_warm_stop()->set_ci_halfwidth(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("warm_stop.ci_halfwidth is nan, not a finite number"));
  r.mutable_warm_stop()->set_ci_halfwidth(0.018);
  r.mutable_warm_stop()->set_ci_low(-std::numeric_limits<double>::infinity());
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("warm_stop.ci_low is -inf, not a finite number"));
}

TEST(RecordValidationTest, CallIndexAndRepetitionPastTheirMaximumAreOutOfRange) {
  auto r = Timed();
  r.set_call_index(4294967295u);
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("call_index 4294967295 is over the maximum of 100000"));
  r.set_call_index(kMaxCallIndex + 1);
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("call_index 100001 is over the maximum of 100000"));
  r = Timed();
  r.set_repetition(kMaxRepetition + 1);
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("repetition 10001 is over the maximum of 10000"));
}

TEST(RecordValidationTest, NegativeAndInvertedTimesAreOutOfRange) {
  auto r = Timed();
  r.mutable_wall_duration()->set_seconds(-1);
  r.mutable_wall_duration()->set_nanos(-500000000);
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("wall_duration -1.5 s is negative"));
  r = Timed();
  r.mutable_end_time()->set_seconds(1767225600 - 3);
  r.clear_wall_duration();
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("end_time is 3 s before start_time"));
  r = Timed();
  r.mutable_requests(0)->set_time_to_first_token_seconds(-0.5);
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("request 1 time_to_first_token_seconds -0.5 is negative"));
}

TEST(RecordValidationTest, TimesFarOutsideTheRunsWindowAreOutOfRange) {
  auto r = Timed();
  r.mutable_wall_duration()->set_seconds(kMaxRunSeconds + 1);
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError("wall_duration 604801 s is over the maximum of 604800 s"));
  r = Timed();
  r.clear_wall_duration();
  r.mutable_end_time()->set_seconds(1767225600 + kMaxRunSeconds + 1);
  EXPECT_EQ(ValidateRecord(r),
            absl::OutOfRangeError("end_time - start_time is 604801 s, over the maximum of 604800 s"));
  r = Timed();
  r.mutable_wall_duration()->set_seconds(2 + kMaxClockDisagreementSeconds + 1);
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError(
                                   "end_time - start_time (2 s) and wall_duration (3603 s) differ by more than 3600 s"));
  r = Timed();
  r.mutable_requests(0)->set_latency_seconds(2 + kMaxClockDisagreementSeconds + 1);
  EXPECT_EQ(ValidateRecord(r), absl::OutOfRangeError(
                                   "request 1 latency_seconds 3603 s is longer than the run's window (2 s) plus 3600 s"));
}

TEST(RecordValidationTest, OutOfRangeRecordsAreRefusedFromTheirBytesWithTheirRunId) {
  auto r = Timed();
  r.set_call_index(4294967295u);
  v1::RunRecord parsed;
  std::string run_id;
  EXPECT_EQ(ParseAndValidateRecord(r.SerializeAsString(), &parsed, &run_id),
            absl::OutOfRangeError("call_index 4294967295 is over the maximum of 100000"));
  EXPECT_EQ(run_id, "123e4567-e89b-42d3-a456-426614174000");
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
