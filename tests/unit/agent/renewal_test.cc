// The agent side of certificate renewal (agent/uplink/enrollment.h): when it is due, and how a
// renewal staged on disk is completed or dropped so that the key and certificate always match.
// The renewal call itself runs against a real TLS coordinator in security_cli_test.
#include <fstream>
#include <sstream>
#include <string>

#include "agent/uplink/enrollment.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

void Write(const std::string& path, const std::string& contents) { std::ofstream(path) << contents; }

// The file's content, or "(none)" when it does not exist.
std::string Read(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "(none)";
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(RenewalTest, DueWhenLessThanRenewBeforeIsLeft) {
  const absl::Time not_after = absl::FromUnixSeconds(1800000000);
  const absl::Duration thirty_days = absl::Hours(720);
  EXPECT_FALSE(RenewalDue(not_after, not_after - absl::Hours(721), thirty_days));
  EXPECT_FALSE(RenewalDue(not_after, not_after - thirty_days, thirty_days));  // exactly: not yet
  EXPECT_TRUE(RenewalDue(not_after, not_after - absl::Hours(719), thirty_days));
  EXPECT_TRUE(RenewalDue(not_after, not_after + absl::Hours(1), thirty_days));  // expired
  EXPECT_FALSE(RenewalDue(not_after, not_after - absl::Seconds(1), absl::ZeroDuration()));
}

TEST(RenewalTest, NothingStagedChangesNothing) {
  testing::ScopedTempDir dir;
  Write(dir.path() + "/agent.pem", "cert-1");
  Write(dir.path() + "/agent-key.pem", "key-1");
  ASSERT_TRUE(FinishStagedRenewal(Env::Default(), dir.path()).ok());
  EXPECT_EQ(Read(dir.path() + "/agent.pem"), "cert-1");
  EXPECT_EQ(Read(dir.path() + "/agent-key.pem"), "key-1");
}

TEST(RenewalTest, AFullyStagedPairReplacesTheCurrentOne) {
  testing::ScopedTempDir dir;
  Write(dir.path() + "/agent.pem", "cert-1");
  Write(dir.path() + "/agent-key.pem", "key-1");
  Write(dir.path() + "/agent-key.next.pem", "key-2");
  Write(dir.path() + "/agent.next.pem", "cert-2");
  ASSERT_TRUE(FinishStagedRenewal(Env::Default(), dir.path()).ok());
  EXPECT_EQ(Read(dir.path() + "/agent.pem"), "cert-2");
  EXPECT_EQ(Read(dir.path() + "/agent-key.pem"), "key-2");
  EXPECT_EQ(Read(dir.path() + "/agent.next.pem"), "(none)");
  EXPECT_EQ(Read(dir.path() + "/agent-key.next.pem"), "(none)");
}

TEST(RenewalTest, ACrashBetweenTheRenamesIsCompleted) {
  testing::ScopedTempDir dir;
  // The key was renamed already, the certificate not yet.
  Write(dir.path() + "/agent.pem", "cert-1");
  Write(dir.path() + "/agent-key.pem", "key-2");
  Write(dir.path() + "/agent.next.pem", "cert-2");
  ASSERT_TRUE(FinishStagedRenewal(Env::Default(), dir.path()).ok());
  EXPECT_EQ(Read(dir.path() + "/agent.pem"), "cert-2");
  EXPECT_EQ(Read(dir.path() + "/agent-key.pem"), "key-2");
  EXPECT_EQ(Read(dir.path() + "/agent.next.pem"), "(none)");
}

TEST(RenewalTest, AKeyWhoseCertificateNeverCameIsDropped) {
  testing::ScopedTempDir dir;
  Write(dir.path() + "/agent.pem", "cert-1");
  Write(dir.path() + "/agent-key.pem", "key-1");
  Write(dir.path() + "/agent-key.next.pem", "key-2");
  ASSERT_TRUE(FinishStagedRenewal(Env::Default(), dir.path()).ok());
  EXPECT_EQ(Read(dir.path() + "/agent.pem"), "cert-1");
  EXPECT_EQ(Read(dir.path() + "/agent-key.pem"), "key-1");
  EXPECT_EQ(Read(dir.path() + "/agent-key.next.pem"), "(none)");
}

TEST(RenewalTest, RenewingWithoutACertificateIsAPreconditionError) {
  RenewalRequest request;
  request.coordinator = "127.0.0.1:1";
  EXPECT_EQ(RenewCertificate(request).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace benchfleet::agent
