// The access table covers every method the coordinator serves, and nothing is open by accident.
#include "coordinator/auth/authorizer.h"

#include <google/protobuf/descriptor.h>

#include "absl/strings/str_cat.h"
#include "benchfleet/v1/admin.grpc.pb.h"
#include "benchfleet/v1/auth.grpc.pb.h"
#include "benchfleet/v1/fleet.grpc.pb.h"
#include "benchfleet/v1/gateway.grpc.pb.h"
#include "coordinator/auth/auth_admin.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet::coordinator {
namespace {

TEST(AuthorizerTest, EveryServedMethodHasARule) {
  // A service's descriptor is registered by its file's generated object, which this test's link
  // (the auth and ingest libraries, not the whole server) would leave out: name a message of each.
  for (const google::protobuf::Descriptor* linked :
       {v1::ListRunsRequest::descriptor(), v1::SubmitSeriesRequest::descriptor(), v1::AgentMessage::descriptor(),
        v1::RenewRequest::descriptor()}) {
    ASSERT_NE(linked, nullptr);
  }
  const auto& table = MethodAccessTable();
  size_t served = 0;
  for (const char* service : {"benchfleet.v1.AgentGateway", "benchfleet.v1.Admin", "benchfleet.v1.Fleet",
                              "benchfleet.v1.Enrollment"}) {
    const google::protobuf::ServiceDescriptor* descriptor =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
    ASSERT_NE(descriptor, nullptr) << service;
    for (int i = 0; i < descriptor->method_count(); ++i) {
      const std::string name = absl::StrCat("/", service, "/", descriptor->method(i)->name());
      EXPECT_TRUE(table.count(name) == 1) << name << " has no access rule";
      ++served;
    }
  }
  EXPECT_EQ(table.size(), served + 2);  // and the two health methods
}

TEST(AuthorizerTest, OnlyHealthAndEnrollmentAreOpen) {
  std::vector<std::string> open;
  for (const auto& [method, access] : MethodAccessTable()) {
    if (access == Access::kAnyone) open.push_back(method);
  }
  EXPECT_THAT(open, ::testing::UnorderedElementsAre("/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch",
                                                    "/benchfleet.v1.Enrollment/Enroll"));
}

TEST(AuthorizerTest, EveryChangeNeedsAnOperator) {
  for (const char* method :
       {"/benchfleet.v1.Fleet/SubmitSeries", "/benchfleet.v1.Fleet/CancelSeries", "/benchfleet.v1.Fleet/AddSchedule",
        "/benchfleet.v1.Fleet/RemoveSchedule", "/benchfleet.v1.Fleet/InvalidateRuns", "/benchfleet.v1.Admin/ImportRuns",
        "/benchfleet.v1.Admin/CreateEnrollmentToken", "/benchfleet.v1.Admin/RevokeAgent",
        "/benchfleet.v1.Admin/CreateApiToken", "/benchfleet.v1.Admin/RevokeApiToken", "/benchfleet.v1.Admin/ListAudit"}) {
    EXPECT_EQ(MethodAccessTable().at(method), Access::kOperator) << method;
  }
}

TEST(AuthorizerTest, TokensAreLongRandomAndSayWhatTheyAre) {
  const std::string a = NewSecretToken(kApiTokenPrefix);
  const std::string b = NewSecretToken(kApiTokenPrefix);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("bft_", 0), 0u);
  EXPECT_EQ(a.size(), 4u + 43u);
  EXPECT_EQ(NewSecretToken(kEnrollmentTokenPrefix).rfind("bfe_", 0), 0u);
}

TEST(AuthorizerTest, AgentIdsFitTheCertificateName) {
  EXPECT_TRUE(ValidAgentId("4188c602-05e3-45d3-bcc1-442f1064585a"));
  EXPECT_TRUE(ValidAgentId("gpu-node_1.lab:a"));
  EXPECT_FALSE(ValidAgentId(""));
  EXPECT_FALSE(ValidAgentId(std::string(59, 'a')));
  EXPECT_FALSE(ValidAgentId("a/b"));
  EXPECT_FALSE(ValidAgentId("a b"));
  EXPECT_EQ(AgentCommonName("x"), "agent:x");
}

}  // namespace
}  // namespace benchfleet::coordinator
