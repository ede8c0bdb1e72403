// How clients choose their credentials: TLS with a CA, plaintext only to loopback.
#include "common/grpc_channel.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet {
namespace {

using ::testing::HasSubstr;

TEST(GrpcChannelTest, LoopbackTargets) {
  for (const char* target : {"127.0.0.1:7443", "127.1.2.3:1", "localhost:7443", "[::1]:7443", "::1",
                             "dns:///localhost:7443", "ipv4:127.0.0.1:7443"}) {
    EXPECT_TRUE(IsLoopbackTarget(target)) << target;
  }
  for (const char* target : {"10.0.0.1:7443", "0.0.0.0:7443", "coordinator.example:7443", "[::]:7443",
                             "128.0.0.1:7443", "localhost.example:7443", "[::1"}) {
    EXPECT_FALSE(IsLoopbackTarget(target)) << target;
  }
}

TEST(GrpcChannelTest, PlaintextOnlyToLoopbackUnlessAllowed) {
  EXPECT_TRUE(MakeChannelCredentials("127.0.0.1:7443", {}).ok());
  auto refused = MakeChannelCredentials("10.0.0.1:7443", {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("plaintext is only for loopback addresses"));
  ChannelSecurity allowed;
  allowed.allow_plaintext_off_loopback = true;
  EXPECT_TRUE(MakeChannelCredentials("10.0.0.1:7443", allowed).ok());
}

TEST(GrpcChannelTest, CredentialsNeedTls) {
  ChannelSecurity token_only;
  token_only.bearer_token = "bft_x";
  EXPECT_THAT(MakeChannelCredentials("127.0.0.1:7443", token_only).status().message(), HasSubstr("need TLS"));
  ChannelSecurity half;
  half.ca_cert_pem = "-----BEGIN CERTIFICATE-----\n";
  half.cert_pem = "cert";
  EXPECT_THAT(MakeChannelCredentials("10.0.0.1:7443", half).status().message(), HasSubstr("needs its key"));
  ChannelSecurity tls;
  tls.ca_cert_pem = "-----BEGIN CERTIFICATE-----\n";
  tls.bearer_token = "bft_x";
  EXPECT_TRUE(MakeChannelCredentials("coordinator.example:7443", tls).ok());
}

TEST(GrpcChannelTest, CredentialFilesAreTrimmedAndPemKeepsItsNewline) {
  const std::string dir = ::testing::TempDir();
  {
    FILE* f = std::fopen((dir + "/token").c_str(), "w");
    std::fputs("  bft_abc \n", f);
    std::fclose(f);
    f = std::fopen((dir + "/ca.pem").c_str(), "w");
    std::fputs("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----", f);
    std::fclose(f);
    f = std::fopen((dir + "/empty").c_str(), "w");
    std::fclose(f);
  }
  EXPECT_EQ(*ReadCredentialFile(dir + "/token", "token"), "bft_abc");
  EXPECT_EQ(ReadCredentialFile(dir + "/ca.pem", "ca")->back(), '\n');
  EXPECT_THAT(ReadCredentialFile(dir + "/empty", "the token").status().message(), HasSubstr("is empty"));
  EXPECT_THAT(ReadCredentialFile(dir + "/missing", "the token").status().message(),
              HasSubstr("the token: cannot read"));
}

}  // namespace
}  // namespace benchfleet
