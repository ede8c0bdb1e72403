// The secure path end to end with the built programs, as an operator would run it: `ca init`, a
// TLS coordinator with an operator token from a file, `benchfleet agents enroll`, `benchfleet-agent
// enroll`, an agent streaming over TLS with its certificate, a viewer's token that reads and may
// not change, `benchfleet import` by the operator, revocation and the audit log.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The first line of `text` that starts with `prefix` (a token the CLI printed), or "".
std::string LineStartingWith(const std::string& text, const std::string& prefix) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.substr(0, prefix.size()) == prefix) return std::string(line);
  }
  return "";
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path) << contents;
  ::chmod(path.c_str(), 0600);
}

class SecurityCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!db_.available()) GTEST_SKIP() << "BENCHFLEET_TEST_DATABASE_URL is not set";
    work_ = MakeTempDir("security-cli");
    tls_ = work_ + "/tls";
    ASSERT_EQ(Run("benchfleet-coordinator", {"ca", "init", "--out", tls_, "--server-name", "127.0.0.1"}), 0) << out_;
    WriteFile(work_ + "/operator-token", "bft_the-operators-token-from-a-file\n");
    address_ = "127.0.0.1:" + std::to_string(FreePort());
    coordinator_ = std::make_unique<Subprocess>(
        std::vector<std::string>{BinaryPath("benchfleet-coordinator"), "--listen", address_, "--tls-cert",
                                 tls_ + "/server.pem", "--tls-key", tls_ + "/server-key.pem", "--tls-client-ca",
                                 tls_ + "/ca.pem", "--ca-key", tls_ + "/ca-key.pem", "--operator-token-file",
                                 work_ + "/operator-token"},
        std::map<std::string, std::string>{{"BENCHFLEET_DATABASE_URL", db_.url()}}, work_ + "/coordinator.log");
    ASSERT_TRUE(PollUntil([&] { return ReadAll(work_ + "/coordinator.log").find("listening on") != std::string::npos; },
                          absl::Seconds(60)))
        << ReadAll(work_ + "/coordinator.log");
    EXPECT_THAT(ReadAll(work_ + "/coordinator.log"), HasSubstr("(TLS, client certificates and API tokens)"));
  }

  void TearDown() override {
    if (coordinator_ != nullptr) {
      coordinator_->Signal(SIGTERM);
      coordinator_->Wait();
    }
  }

  // Runs a built program to its end; output (stdout and stderr) in out_.
  int Run(const std::string& program, std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    const std::string log = work_ + "/run-" + std::to_string(++calls_) + ".log";
    args.insert(args.begin(), BinaryPath(program));
    Subprocess p(args, env, log);
    const int rc = p.Wait();
    out_ = ReadAll(log);
    return rc;
  }
  // `benchfleet` with the fleet CA and the token in `token_file`.
  int Cli(std::vector<std::string> args, const std::string& token_file) {
    args.insert(args.end(), {"--coordinator", address_, "--ca-cert", tls_ + "/ca.pem"});
    return Run("benchfleet", args, {{"BENCHFLEET_TOKEN_FILE", token_file}});
  }

  PgTestDb db_;
  std::string work_, tls_, address_, out_;
  std::unique_ptr<Subprocess> coordinator_;
  int calls_ = 0;
};

TEST_F(SecurityCliTest, EnrollStreamReadRefuseImportRevokeAndAudit) {
  const std::string op = work_ + "/operator-token";
  const std::string state = work_ + "/agent-state";

  // The agent's id is made on first use: `conditions` does not need one, so read it after enrolling.
  ASSERT_EQ(Cli({"agents", "enroll", "--uses", "1"}, op), 0) << out_;
  const std::string token = LineStartingWith(out_, "bfe_");
  ASSERT_FALSE(token.empty()) << out_;

  // Without the token: refused; with it: a certificate in the state directory.
  EXPECT_EQ(Run("benchfleet-agent", {"enroll", "--coordinator", address_, "--ca-cert", tls_ + "/ca.pem", "--state-dir",
                                     state},
                {{"BENCHFLEET_ENROLL_TOKEN", "bfe_wrong"}}),
            1)
      << out_;
  EXPECT_THAT(out_, HasSubstr("unknown enrollment token"));
  ASSERT_EQ(Run("benchfleet-agent", {"enroll", "--coordinator", address_, "--ca-cert", tls_ + "/ca.pem", "--state-dir",
                                     state},
                {{"BENCHFLEET_ENROLL_TOKEN", token}}),
            0)
      << out_;
  struct stat key_stat {};
  ASSERT_EQ(::stat((state + "/tls/agent-key.pem").c_str(), &key_stat), 0);
  EXPECT_EQ(key_stat.st_mode & 0777, 0600u);
  const std::string agent_id(absl::StripAsciiWhitespace(ReadAll(state + "/agent_id")));
  ASSERT_FALSE(agent_id.empty());

  // The enrolled agent streams over TLS with its certificate (the CA comes from its state dir).
  ASSERT_EQ(Run("benchfleet-agent", {"simulate", "--runs", "4", "--out", work_ + "/series", "--state-dir", state,
                                     "--coordinator", address_}),
            0)
      << out_;
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs"), "4");

  // serve renews the certificate when less than --renew-before of it is left (here: at once, the
  // 90-day certificate being younger than that), then streams with the new one.
  const std::string first_cert = ReadAll(state + "/tls/agent.pem");
  ASSERT_EQ(Run("benchfleet-agent", {"simulate", "--runs", "2", "--out", work_ + "/queued", "--state-dir", state}), 0)
      << out_;
  ASSERT_EQ(Run("benchfleet-agent", {"serve", "--coordinator", address_, "--state-dir", state, "--exit-when-drained",
                                     "--renew-before", "2200h"}),
            0)
      << out_;
  EXPECT_THAT(out_, HasSubstr("agent certificate renewed"));
  const std::string renewed_cert = ReadAll(state + "/tls/agent.pem");
  EXPECT_NE(renewed_cert, first_cert);
  EXPECT_EQ(::access((state + "/tls/agent.next.pem").c_str(), F_OK), -1);
  EXPECT_EQ(::access((state + "/tls/agent-key.next.pem").c_str(), F_OK), -1);
  ASSERT_EQ(::stat((state + "/tls/agent-key.pem").c_str(), &key_stat), 0);
  EXPECT_EQ(key_stat.st_mode & 0777, 0600u);
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs"), "6");
  // The new pair works on its own: a later run streams with it.
  ASSERT_EQ(Run("benchfleet-agent", {"simulate", "--runs", "1", "--out", work_ + "/after-renewal", "--state-dir", state,
                                     "--coordinator", address_}),
            0)
      << out_;
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs"), "7");
  // A bad --renew-before is a usage error.
  EXPECT_EQ(Run("benchfleet-agent", {"serve", "--coordinator", address_, "--state-dir", state, "--renew-before", "soon"}),
            2)
      << out_;
  EXPECT_THAT(out_, HasSubstr("--renew-before"));

  // A viewer reads, and may not change anything.
  ASSERT_EQ(Cli({"tokens", "create", "--name", "reader", "--role", "viewer"}, op), 0) << out_;
  WriteFile(work_ + "/viewer-token", LineStartingWith(out_, "bft_"));
  ASSERT_EQ(Cli({"runs", "--format", "csv"}, work_ + "/viewer-token"), 0) << out_;
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(out_, '\n', absl::SkipEmpty())).size(), 8u) << out_;
  EXPECT_EQ(Cli({"agents", "revoke", agent_id}, work_ + "/viewer-token"), 1) << out_;
  EXPECT_THAT(out_, HasSubstr("viewer"));
  EXPECT_EQ(Cli({"agents", "enroll"}, work_ + "/viewer-token"), 1) << out_;

  // Without the CA, a non-loopback address would be refused; without a token, calls are.
  EXPECT_EQ(Run("benchfleet", {"runs", "--coordinator", address_, "--ca-cert", tls_ + "/ca.pem"}), 1) << out_;
  EXPECT_THAT(out_, HasSubstr("needs an API token"));
  EXPECT_EQ(Run("benchfleet", {"runs", "--coordinator", "10.0.0.1:7443"}), 2) << out_;
  EXPECT_THAT(out_, HasSubstr("plaintext is only for loopback addresses"));

  // The operator imports another machine's folder; the agent could not have.
  ASSERT_EQ(Run("benchfleet-agent", {"simulate", "--runs", "3", "--out", work_ + "/other-series", "--state-dir",
                                     work_ + "/other-state"}),
            0)
      << out_;
  ASSERT_EQ(Cli({"import", work_ + "/other-series"}, op), 0) << out_;
  EXPECT_THAT(out_, HasSubstr("imported 3 records: 3 stored"));
  EXPECT_EQ(Run("benchfleet-agent", {"import", work_ + "/other-series", "--state-dir", state, "--coordinator", address_,
                                     "--connect-attempts", "2"}),
            1)
      << out_;
  EXPECT_THAT(out_, HasSubstr("may not write a record of agent"));

  // Revocation: the agent's next connection is refused.
  ASSERT_EQ(Cli({"agents", "revoke", agent_id}, op), 0) << out_;
  EXPECT_THAT(out_, HasSubstr("2 certificate(s)"));  // the enrolled one and its renewal
  EXPECT_EQ(Run("benchfleet-agent", {"simulate", "--runs", "1", "--out", work_ + "/after-revoke", "--state-dir", state,
                                     "--coordinator", address_, "--connect-attempts", "2", "--timeout", "20"}),
            1)
      << out_;
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs"), "10");

  ASSERT_EQ(Cli({"audit", "--format", "json"}, op), 0) << out_;
  for (const char* action : {"Admin/CreateEnrollmentToken", "Enrollment/Enroll", "Enrollment/Renew", "Admin/CreateApiToken",
                             "Admin/ImportRuns", "Admin/RevokeAgent"}) {
    EXPECT_THAT(out_, HasSubstr(action));
  }
  // No secret in the coordinator's log.
  const std::string log = ReadAll(work_ + "/coordinator.log");
  EXPECT_THAT(log, Not(HasSubstr(token)));
  EXPECT_THAT(log, Not(HasSubstr("bft_the-operators-token")));
}

// Issue 19, case 9: a token typed on the command line (by mistake: it belongs in a file) once came
// back in the error; now every form of it is refused with exit 2 and "<hidden>" in its place.
TEST_F(SecurityCliTest, ATokenOnTheCommandLineIsNeverEchoed) {
  const std::string secret = "bft_typed-on-the-command-line-by-mistake";
  const std::vector<std::vector<std::string>> mistakes = {
      {"runs", "--token", secret},
      {"runs", "--token=" + secret},
      {"runs", "--api-token", "hunter2-is-not-a-benchfleet-token"},
      {"runs", secret},
      {"--token-file", secret, "runs"},
      {"--token-file=" + secret, "runs"},
  };
  for (std::vector<std::string> args : mistakes) {
    const std::string shown = absl::StrJoin(args, " ");
    args.insert(args.end(), {"--coordinator", address_, "--ca-cert", tls_ + "/ca.pem"});
    EXPECT_EQ(Run("benchfleet", args), 2) << shown << "\n" << out_;
    EXPECT_THAT(out_, Not(HasSubstr("typed-on-the-command-line"))) << shown;
    EXPECT_THAT(out_, Not(HasSubstr("hunter2"))) << shown;
    EXPECT_THAT(out_, Not(HasSubstr("libprotobuf"))) << shown;
  }
  EXPECT_EQ(Run("benchfleet", {"--token-file", secret, "runs", "--coordinator", address_, "--ca-cert", tls_ + "/ca.pem"}), 2);
  EXPECT_EQ(out_,
            "benchfleet: the API token file (--token-file / BENCHFLEET_TOKEN_FILE): the name given looks like a token "
            "itself (not shown); give the name of a file that holds it\n");
  EXPECT_EQ(Run("benchfleet", {"runs", "--token", secret, "--coordinator", address_}), 2);
  EXPECT_THAT(out_, HasSubstr("<hidden>"));
  // The agent reads its enrollment token file the same way.
  EXPECT_EQ(Run("benchfleet-agent", {"enroll", "--coordinator", address_, "--ca-cert", tls_ + "/ca.pem", "--state-dir",
                                     work_ + "/mistaken-state", "--token-file", "bfe_an-enrollment-token-by-mistake"}),
            2)
      << out_;
  EXPECT_THAT(out_, Not(HasSubstr("an-enrollment-token-by-mistake")));
  EXPECT_THAT(out_, HasSubstr("looks like a token itself (not shown)"));
}

}  // namespace
}  // namespace benchfleet::testing
