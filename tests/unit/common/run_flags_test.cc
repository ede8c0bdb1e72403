// The accepted-run rule of common/run_flags.h, which the agent, the scheduler, the CLI and the guide
// all call.
#include "common/run_flags.h"

#include "gtest/gtest.h"

namespace benchfleet {
namespace {

v1::RunRecord RecordWith(v1::RunStatus::Code code, std::initializer_list<std::string_view> flags) {
  v1::RunRecord r;
  r.mutable_status()->set_code(code);
  for (const std::string_view f : flags) r.add_flags()->set_code(std::string(f));
  return r;
}

TEST(RunFlagsTest, AnAcceptedRunIsOkWithNoExcludingFlagAndNotInvalidated) {
  EXPECT_TRUE(IsAcceptedRun(RecordWith(v1::RunStatus::CODE_OK, {})));
  EXPECT_TRUE(IsAcceptedRun(RecordWith(v1::RunStatus::CODE_OK, {"THROUGHPUT_DROP", "SOMETHING_NEW"})));
  EXPECT_FALSE(IsAcceptedRun(RecordWith(v1::RunStatus::CODE_FAILED, {})));
  EXPECT_FALSE(IsAcceptedRun(RecordWith(v1::RunStatus::CODE_UNSPECIFIED, {})));
  for (const std::string_view code : kExcludingFlags) {
    EXPECT_FALSE(IsAcceptedRun(RecordWith(v1::RunStatus::CODE_OK, {"THROUGHPUT_DROP", code}))) << code;
    EXPECT_TRUE(ExcludesRun(code)) << code;
  }
  EXPECT_FALSE(IsAcceptedRun(RecordWith(v1::RunStatus::CODE_OK, {kInvalidatedCode})));
  EXPECT_TRUE(ExcludesRun(kInvalidatedCode));
  EXPECT_FALSE(IsExcludingFlag(kInvalidatedCode));  // an annotation, not a flag an agent raises
  EXPECT_FALSE(ExcludesRun("THROUGHPUT_DROP"));
}

}  // namespace
}  // namespace benchfleet
