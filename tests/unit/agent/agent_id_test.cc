#include "agent/identity/agent_id.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/hashing.h"
#include "tests/unit/agent/fault_injecting_env.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using testing::Fault;
using testing::FaultInjectingEnv;
using testing::FaultOp;
using testing::ScopedTempDir;

TEST(AgentIdTest, MadeOnceThenStableAcrossRestarts) {
  ScopedTempDir tmp;
  const std::string state = tmp.path() + "/state";
  auto first = LoadOrCreateAgentId(Env::Default(), state);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(IsUuid(*first));
  auto second = LoadOrCreateAgentId(Env::Default(), state);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(*Env::Default()->ReadFile(state + "/agent_id"), *first + "\n");
}

TEST(AgentIdTest, SomethingElseInTheFileIsNeverReplaced) {
  ScopedTempDir tmp;
  std::ofstream(tmp.path() + "/agent_id") << "not-an-id\n";
  auto id = LoadOrCreateAgentId(Env::Default(), tmp.path());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(id.status().message(), tmp.path() + "/agent_id does not hold a UUID (it holds 'not-an-id'); restore it "
                                                "from a backup, or delete it to make this agent a new one");
}

TEST(AgentIdTest, WriteFailureIsReported) {
  ScopedTempDir tmp;
  FaultInjectingEnv env(Env::Default());
  env.Inject(FaultOp::kAtomicWrite, Fault{.path_contains = "agent_id"});
  auto id = LoadOrCreateAgentId(&env, tmp.path());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(Env::Default()->FileExists(tmp.path() + "/agent_id"));
}

}  // namespace
}  // namespace benchfleet::agent
