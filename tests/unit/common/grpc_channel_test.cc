// How clients choose their credentials: TLS with a CA, plaintext only to loopback.
#include "common/grpc_channel.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet {
namespace {

using ::testing::HasSubstr;

TEST(GrpcChannelTest, LoopbackTargets) {
  for (const char* target :
       {"127.0.0.1:7443", "127.1.2.3:1", "127.255.255.254:7443", "localhost:7443", "localhost", "[::1]:7443",
        "[::1]", "::1", "0:0:0:0:0:0:0:1", "dns:///localhost:7443", "dns:localhost:7443", "ipv4:127.0.0.1:7443",
        "ipv4:127.0.0.1:7443,127.0.0.2:7444", "ipv6:[::1]:7443", "127.0.0.1:7443,localhost:7444",
        " 127.0.0.1:1 , [::1]:2 "}) {
    EXPECT_TRUE(IsLoopbackTarget(target)) << target;
  }
  // Issue 19, case 9: a name that merely starts with "127." is not an address, and any list
  // with one address off loopback is not loopback.
  for (const char* target :
       {"10.0.0.1:7443", "0.0.0.0:7443", "coordinator.example:7443", "[::]:7443", "128.0.0.1:7443",
        "localhost.example:7443", "[::1", "127.example.com:7443", "127.0.0.1.nip.io:7443", "127.evil:7443",
        "127.1:7443", "127.0.0.256:7443", "127.0.0.1:http", "[::1]x", "::2", "127.0.0.1:7443,10.0.0.1:7443",
        "ipv4:127.0.0.1:7443,10.0.0.1:7443", "ipv6:[::1]:1,[2001:db8::1]:2", "dns://8.8.8.8/localhost:7443",
        "unix:/run/benchfleet.sock", "", " , "}) {
    EXPECT_FALSE(IsLoopbackTarget(target)) << target;
  }
}

TEST(GrpcChannelTest, SplitCoordinatorAddresses) {
  EXPECT_EQ(SplitCoordinatorAddresses("a:1"), std::vector<std::string>{"a:1"});
  EXPECT_EQ(SplitCoordinatorAddresses(" a:1, b:2 ,,"), (std::vector<std::string>{"a:1", "b:2"}));
  // One gRPC target with several addresses: gRPC picks among them.
  EXPECT_EQ(SplitCoordinatorAddresses("ipv4:10.0.0.1:1,10.0.0.2:1"),
            std::vector<std::string>{"ipv4:10.0.0.1:1,10.0.0.2:1"});
  EXPECT_TRUE(SplitCoordinatorAddresses(" ").empty());
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

TEST(GrpcChannelTest, ATokenGivenAsItsFileNameIsNotEchoed) {
  const absl::Status s = ReadCredentialFile("bft_a-secret-that-must-not-be-printed", "the API token file").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "the API token file: the name given looks like a token itself (not shown); give the name of a file "
            "that holds it");
}

}  // namespace
}  // namespace benchfleet
