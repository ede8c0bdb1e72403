// Who may connect, read and write (coordinator/auth/README.md), against a real coordinator with
// TLS on loopback and a real PostgreSQL: each refusal comes with the right gRPC code and writes
// nothing; enrollment, tokens, revocation and the audit log work; strings with SQL and HTML in
// them round-trip intact.
#include <grpcpp/grpcpp.h>
#include <grpcpp/generic/generic_stub.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "benchfleet/v1/admin.grpc.pb.h"
#include "benchfleet/v1/auth.grpc.pb.h"
#include "benchfleet/v1/fleet.grpc.pb.h"
#include "benchfleet/v1/gateway.grpc.pb.h"
#include "common/grpc_channel.h"
#include "common/hashing.h"
#include "common/tls/certificates.h"
#include "common/version.h"
#include "coordinator/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/pg_test_db.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet {
namespace {

using ::testing::HasSubstr;

// A fleet CA with a server certificate for 127.0.0.1, and helpers to make agent certificates the
// way enrollment does (or not).
struct Pki {
  std::string ca_key, ca_cert, server_key, server_cert;

  static Pki Make(const std::string& ca_name = "test fleet CA") {
    Pki pki;
    const absl::Time now = absl::Now();
    pki.ca_key = *tls::NewPrivateKeyPem();
    tls::CertificateSpec ca;
    ca.common_name = ca_name;
    ca.not_before = now - absl::Hours(1);
    ca.not_after = now + absl::Hours(24 * 365);
    ca.is_ca = true;
    pki.ca_cert = *tls::SelfSignedCertificatePem(pki.ca_key, ca);
    pki.server_key = *tls::NewPrivateKeyPem();
    tls::CertificateSpec server;
    server.common_name = "127.0.0.1";
    server.not_before = now - absl::Hours(1);
    server.not_after = now + absl::Hours(24 * 30);
    server.server = true;
    server.subject_alt_names = {"127.0.0.1", "localhost"};
    pki.server_cert = *tls::IssueCertificatePem(pki.server_key, server, pki.ca_cert, pki.ca_key);
    return pki;
  }

  // A client certificate signed by this CA directly (not by enrollment: the coordinator does not
  // know it).
  std::pair<std::string, std::string> ClientCert(const std::string& cn, absl::Time not_after) const {
    const std::string key = *tls::NewPrivateKeyPem();
    tls::CertificateSpec spec;
    spec.common_name = cn;
    spec.not_before = std::min(absl::Now(), not_after) - absl::Hours(2);
    spec.not_after = not_after;
    spec.client = true;
    return {*tls::IssueCertificatePem(key, spec, ca_cert, ca_key), key};
  }
};

constexpr char kOperatorToken[] = "bft_operator-token-for-the-security-test";

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!db_.available()) GTEST_SKIP() << "no test PostgreSQL (BENCHFLEET_TEST_DATABASE_URL)";
    pki_ = Pki::Make();
    coordinator::CoordinatorServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.database_url = db_.url();
    options.tick_interval = absl::ZeroDuration();
    options.tls.server_cert_pem = pki_.server_cert;
    options.tls.server_key_pem = pki_.server_key;
    options.tls.client_ca_pem = pki_.ca_cert;
    options.tls.ca_key_pem = pki_.ca_key;
    options.bootstrap_operator_token = kOperatorToken;
    options.health_listen_address = "127.0.0.1:0";
    server_ = std::make_unique<coordinator::CoordinatorServer>(options);
    const absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
  }

  std::shared_ptr<grpc::Channel> Channel(ChannelSecurity security) {
    if (security.ca_cert_pem.empty()) security.ca_cert_pem = pki_.ca_cert;
    auto channel = NewCoordinatorChannel(server_->address(), security);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return *channel;
  }
  std::shared_ptr<grpc::Channel> TokenChannel(const std::string& token) {
    ChannelSecurity s;
    s.bearer_token = token;
    return Channel(s);
  }
  std::shared_ptr<grpc::Channel> CertChannel(const std::string& cert, const std::string& key) {
    ChannelSecurity s;
    s.cert_pem = cert;
    s.key_pem = key;
    return Channel(s);
  }

  static std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  std::string CreateToken(const std::string& name, v1::Role role) {
    auto stub = v1::Admin::NewStub(TokenChannel(kOperatorToken));
    v1::CreateApiTokenRequest request;
    request.set_name(name);
    request.set_role(role);
    v1::CreateApiTokenResponse response;
    auto context = Context();
    EXPECT_TRUE(stub->CreateApiToken(context.get(), request, &response).ok());
    return response.token();
  }

  std::string EnrollmentToken(const std::string& agent_id, uint32_t uses = 1, uint64_t ttl = 3600) {
    auto stub = v1::Admin::NewStub(TokenChannel(kOperatorToken));
    v1::CreateEnrollmentTokenRequest request;
    request.set_agent_id(agent_id);
    request.set_uses(uses);
    request.set_ttl_seconds(ttl);
    v1::CreateEnrollmentTokenResponse response;
    auto context = Context();
    const grpc::Status status = stub->CreateEnrollmentToken(context.get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.token();
  }

  struct Enrolled {
    grpc::Status status;
    std::string cert, key;
  };
  Enrolled Enroll(const std::string& token, const std::string& agent_id) {
    Enrolled out;
    out.key = *tls::NewPrivateKeyPem();
    v1::EnrollRequest request;
    request.set_token(token);
    request.set_agent_id(agent_id);
    request.set_csr_pem(*tls::NewCsrPem(out.key, "whatever the agent asks for"));
    v1::EnrollResponse response;
    auto stub = v1::Enrollment::NewStub(Channel({}));
    auto context = Context();
    out.status = stub->Enroll(context.get(), request, &response);
    out.cert = response.certificate_pem();
    return out;
  }
  Enrolled EnrollNew(const std::string& agent_id) {
    Enrolled e = Enroll(EnrollmentToken(agent_id), agent_id);
    EXPECT_TRUE(e.status.ok()) << e.status.error_message();
    return e;
  }

  // One Connect stream of an agent: Hello, then whatever the test sends.
  struct Stream {
    std::unique_ptr<grpc::ClientContext> context;
    std::unique_ptr<v1::AgentGateway::Stub> stub;
    std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>> rw;
  };
  Stream Open(std::shared_ptr<grpc::Channel> channel, const std::string& hello_agent_id) {
    Stream s;
    s.stub = v1::AgentGateway::NewStub(channel);
    s.context = Context();
    s.rw = s.stub->Connect(s.context.get());
    v1::AgentMessage hello;
    hello.mutable_hello()->set_agent_id(hello_agent_id);
    hello.mutable_hello()->set_api_revision(kApiRevision);
    *hello.mutable_hello()->mutable_conditions() = testing::MakeConditions("host-" + hello_agent_id, {});
    s.rw->Write(hello);
    return s;
  }
  // Sends one record and returns the Ack (after the Welcome).
  static v1::Ack SendRecord(Stream& s, const v1::RunRecord& record) {
    v1::AgentMessage batch;
    *batch.mutable_records() = testing::MakeBatch(1, {testing::Serialize(record)});
    s.rw->Write(batch);
    v1::CoordinatorMessage message;
    while (s.rw->Read(&message)) {
      if (message.has_ack()) return message.ack();
    }
    return v1::Ack();
  }

  // Revokes the agent as the operator, on this coordinator.
  bool Revoke(const std::string& agent_id, v1::RevokeAgentResponse* response) {
    auto admin = v1::Admin::NewStub(TokenChannel(kOperatorToken));
    v1::RevokeAgentRequest request;
    request.set_agent_id(agent_id);
    auto context = Context();
    return admin->RevokeAgent(context.get(), request, response).ok();
  }

  // Reads the stream to its end; returns its status and how long that took.
  static grpc::Status ReadToEnd(Stream& s, absl::Duration* took) {
    const absl::Time start = absl::Now();
    v1::CoordinatorMessage message;
    while (s.rw->Read(&message)) {
    }
    *took = absl::Now() - start;
    return s.rw->Finish();
  }

  std::string Count(const std::string& table) const { return db_.QueryValue("SELECT count(*) FROM " + table); }

  testing::PgTestDb db_;
  Pki pki_;
  std::unique_ptr<coordinator::CoordinatorServer> server_;
};

// grpc.health.v1.Health/Check for the server as a whole (an empty request): the status field of
// the answer, 1 being SERVING. Raw bytes through a generic stub: Debian ships no health client.
int HealthStatus(const std::shared_ptr<grpc::Channel>& channel, grpc::Status* status) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::ByteBuffer request, response;
  grpc::Slice empty;
  request = grpc::ByteBuffer(&empty, 1);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  *status = done.get_future().get();
  std::vector<grpc::Slice> slices;
  if (!status->ok() || !response.Dump(&slices).ok()) return -1;
  std::string bytes;
  for (const grpc::Slice& slice : slices) bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  // Field 1, varint: 0x08 then the value.
  return bytes.size() == 2 && bytes[0] == 0x08 ? bytes[1] : -1;
}

TEST_F(SecurityTest, HealthAndEnrollmentNeedNoCredentials) {
  grpc::Status status;
  EXPECT_EQ(HealthStatus(Channel({}), &status), 1) << status.error_message();  // SERVING

  const Enrolled enrolled = EnrollNew("agent-a");
  auto info = tls::ParseCertificate(enrolled.cert);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->common_name, "agent:agent-a");  // the coordinator's CN, not the CSR's
  EXPECT_TRUE(tls::VerifyCertificate(enrolled.cert, pki_.ca_cert, absl::Now()).ok());
}

TEST_F(SecurityTest, ThePlaintextHealthPortServesHealthAndNothingElse) {
  const std::string address = absl::StrCat("127.0.0.1:", server_->health_port());
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::Status status;
  EXPECT_EQ(HealthStatus(channel, &status), 1) << status.error_message();
  auto admin = v1::Admin::NewStub(channel);
  v1::ListRunsResponse response;
  auto context = Context();
  EXPECT_EQ(admin->ListRuns(context.get(), {}, &response).error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(SecurityTest, AnEnrollmentTokenWorksOnceForItsAgentOnly) {
  const std::string token = EnrollmentToken("agent-a");
  EXPECT_EQ(Enroll(token, "agent-b").status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Enroll(token, "agent-a").status.ok());
  const Enrolled again = Enroll(token, "agent-a");
  EXPECT_EQ(again.status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(again.status.error_message(), HasSubstr("used"));
  EXPECT_EQ(Enroll("bfe_not-a-token", "agent-a").status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Count("agent_certificates"), "1");
  // The token itself is never stored, only its SHA-256.
  EXPECT_EQ(db_.QueryValue(absl::StrCat("SELECT count(*) FROM enrollment_tokens WHERE token_sha256 = '",
                                        Sha256Hex(token), "'")),
            "1");
  EXPECT_EQ(db_.QueryValue(absl::StrCat("SELECT count(*) FROM enrollment_tokens WHERE token_sha256 = '", token, "'")),
            "0");
}

TEST_F(SecurityTest, AFleetTokenBindsEachAgentThatUsesIt) {
  const std::string token = EnrollmentToken("", 2);
  EXPECT_TRUE(Enroll(token, "node-1").status.ok());
  EXPECT_TRUE(Enroll(token, "node-2").status.ok());
  EXPECT_EQ(Enroll(token, "node-3").status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(SecurityTest, AnExpiredEnrollmentTokenIsRefused) {
  const std::string token = EnrollmentToken("agent-a", 1, 60);
  // The coordinator runs in another process on the real clock: rather than wait a minute, the
  // token's stored expiry (created + ttl, checked as written) is moved to a second ago.
  EXPECT_EQ(db_.QueryValue(absl::StrCat("SELECT round(extract(epoch FROM expires_at - created_at)) FROM "
                                        "enrollment_tokens WHERE token_sha256 = '",
                                        Sha256Hex(token), "'")),
            "60");
  db_.QueryValue(absl::StrCat(
      "UPDATE enrollment_tokens SET expires_at = now() - interval '1 second' WHERE token_sha256 = '", Sha256Hex(token),
      "'"));
  const Enrolled late = Enroll(token, "agent-a");
  EXPECT_EQ(late.status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(late.status.error_message(), HasSubstr("expired"));
}

TEST_F(SecurityTest, AnAgentWithoutACertificateIsRefusedAndWritesNothing) {
  Stream s = Open(Channel({}), "agent-a");
  v1::CoordinatorMessage message;
  EXPECT_FALSE(s.rw->Read(&message));
  const grpc::Status status = s.rw->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Count("machines"), "0");
}

TEST_F(SecurityTest, ACertificateOfAnotherCaFailsTheHandshake) {
  const Pki other = Pki::Make("another CA");
  const auto [cert, key] = other.ClientCert("agent:agent-a", absl::Now() + absl::Hours(1));
  Stream s = Open(CertChannel(cert, key), "agent-a");
  v1::CoordinatorMessage message;
  EXPECT_FALSE(s.rw->Read(&message));
  EXPECT_EQ(s.rw->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Count("machines"), "0");

  // And a client that trusts another CA does not talk to this coordinator at all.
  ChannelSecurity wrong;
  wrong.ca_cert_pem = other.ca_cert;
  wrong.bearer_token = kOperatorToken;
  auto stub = v1::Admin::NewStub(Channel(wrong));
  v1::ListMachinesResponse response;
  auto context = Context();
  EXPECT_EQ(stub->ListMachines(context.get(), {}, &response).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(SecurityTest, AnExpiredCertificateFailsTheHandshake) {
  const auto [cert, key] = pki_.ClientCert("agent:agent-a", absl::Now() - absl::Minutes(5));
  Stream s = Open(CertChannel(cert, key), "agent-a");
  v1::CoordinatorMessage message;
  EXPECT_FALSE(s.rw->Read(&message));
  EXPECT_EQ(s.rw->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Count("machines"), "0");
}

TEST_F(SecurityTest, ACertificateTheCoordinatorNeverIssuedIsRefused) {
  // Signed by the right CA, but not by enrollment (say, a copy of the CA key misused).
  const auto [cert, key] = pki_.ClientCert("agent:agent-a", absl::Now() + absl::Hours(1));
  Stream s = Open(CertChannel(cert, key), "agent-a");
  v1::CoordinatorMessage message;
  EXPECT_FALSE(s.rw->Read(&message));
  EXPECT_EQ(s.rw->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(SecurityTest, AnAgentWritesItsOwnRecordsOnly) {
  const Enrolled a = EnrollNew("agent-a");
  Stream s = Open(CertChannel(a.cert, a.key), "agent-a");
  v1::CoordinatorMessage welcome;
  ASSERT_TRUE(s.rw->Read(&welcome));
  ASSERT_TRUE(welcome.welcome().accepted()) << welcome.welcome().reason();

  v1::RunRecord own = testing::MakeRecord(1);
  own.set_agent_id("agent-a");
  EXPECT_EQ(SendRecord(s, own).stored_run_ids_size(), 1);

  v1::RunRecord foreign = testing::MakeRecord(2);
  foreign.set_agent_id("agent-b");
  const v1::Ack ack = SendRecord(s, foreign);
  EXPECT_EQ(ack.stored_run_ids_size(), 0);
  ASSERT_EQ(ack.rejections_size(), 1);
  EXPECT_THAT(ack.rejections(0).reason(), HasSubstr("may not write a record of agent agent-b"));
  EXPECT_EQ(Count("runs"), "1");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs WHERE agent_id = 'agent-b'"), "0");
}

TEST_F(SecurityTest, AnAgentCannotSpeakForAnotherAgentOrReadItsTasks) {
  const Enrolled a = EnrollNew("agent-a");
  Stream s = Open(CertChannel(a.cert, a.key), "agent-b");
  v1::CoordinatorMessage message;
  ASSERT_TRUE(s.rw->Read(&message));
  EXPECT_FALSE(message.welcome().accepted());
  EXPECT_FALSE(s.rw->Read(&message));
  const grpc::Status status = s.rw->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("agent agent-a's, not agent agent-b's"));
  EXPECT_EQ(Count("machines"), "0");
}

TEST_F(SecurityTest, RevokingAnAgentClosesItsStreamAndRefusesItsCertificate) {
  const Enrolled a = EnrollNew("agent-a");
  Stream s = Open(CertChannel(a.cert, a.key), "agent-a");
  v1::CoordinatorMessage welcome;
  ASSERT_TRUE(s.rw->Read(&welcome));
  ASSERT_TRUE(welcome.welcome().accepted());

  v1::RevokeAgentResponse response;
  ASSERT_TRUE(Revoke("agent-a", &response));
  EXPECT_EQ(response.certificates_revoked(), 1u);
  EXPECT_EQ(response.streams_closed(), 1u);

  // The open stream ends at once (its deadline is 10 s away).
  absl::Duration took;
  EXPECT_EQ(ReadToEnd(s, &took).error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(took, absl::Seconds(5));
  v1::CoordinatorMessage message;

  Stream again = Open(CertChannel(a.cert, a.key), "agent-a");
  EXPECT_FALSE(again.rw->Read(&message));
  EXPECT_EQ(again.rw->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(SecurityTest, AnAgentRenewsItsCertificateWithTheCurrentOne) {
  const Enrolled a = EnrollNew("agent-a");
  const std::string new_key = *tls::NewPrivateKeyPem();
  v1::RenewRequest request;
  request.set_csr_pem(*tls::NewCsrPem(new_key, "agent:someone-else"));  // the subject is ignored
  v1::EnrollResponse response;
  auto stub = v1::Enrollment::NewStub(CertChannel(a.cert, a.key));
  auto context = Context();
  const grpc::Status status = stub->Renew(context.get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();

  auto old_info = tls::ParseCertificate(a.cert);
  auto new_info = tls::ParseCertificate(response.certificate_pem());
  ASSERT_TRUE(old_info.ok() && new_info.ok());
  EXPECT_EQ(new_info->common_name, "agent:agent-a");
  EXPECT_NE(new_info->sha256_fingerprint_hex, old_info->sha256_fingerprint_hex);
  EXPECT_GE(new_info->not_after, old_info->not_after);
  EXPECT_TRUE(tls::CheckKeyMatchesCertificate(new_key, response.certificate_pem()).ok());
  EXPECT_EQ(response.ca_certificate_pem(), pki_.ca_cert);
  EXPECT_EQ(Count("agent_certificates"), "2");

  // Both certificates stream until the old one expires; the renewal is audited.
  for (const std::string* key : {&a.key, &new_key}) {
    const std::string& cert = key == &a.key ? a.cert : response.certificate_pem();
    Stream s = Open(CertChannel(cert, *key), "agent-a");
    v1::CoordinatorMessage welcome;
    ASSERT_TRUE(s.rw->Read(&welcome));
    EXPECT_TRUE(welcome.welcome().accepted());
    s.context->TryCancel();
  }
  EXPECT_EQ(db_.QueryValue("SELECT actor || ' ' || action || ' ' || target FROM audit_log "
                           "WHERE action LIKE '%Renew'"),
            "agent:agent-a /benchfleet.v1.Enrollment/Renew agent-a");

  // Revoking the agent revokes both.
  v1::RevokeAgentResponse revoked;
  ASSERT_TRUE(Revoke("agent-a", &revoked));
  EXPECT_EQ(revoked.certificates_revoked(), 2u);
}

TEST_F(SecurityTest, RenewalNeedsAValidAgentCertificate) {
  const std::string key = *tls::NewPrivateKeyPem();
  v1::RenewRequest request;
  request.set_csr_pem(*tls::NewCsrPem(key, "agent:x"));
  v1::EnrollResponse response;
  {
    // No certificate: an operator's token is no agent's credential.
    auto stub = v1::Enrollment::NewStub(TokenChannel(kOperatorToken));
    auto context = Context();
    EXPECT_EQ(stub->Renew(context.get(), request, &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    // A revoked agent cannot get a new certificate.
    const Enrolled a = EnrollNew("agent-a");
    v1::RevokeAgentResponse revoked;
    ASSERT_TRUE(Revoke("agent-a", &revoked));
    auto stub = v1::Enrollment::NewStub(CertChannel(a.cert, a.key));
    auto context = Context();
    EXPECT_EQ(stub->Renew(context.get(), request, &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    // A malformed CSR.
    const Enrolled b = EnrollNew("agent-b");
    request.set_csr_pem("not a CSR");
    auto stub = v1::Enrollment::NewStub(CertChannel(b.cert, b.key));
    auto context = Context();
    EXPECT_EQ(stub->Renew(context.get(), request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  EXPECT_EQ(Count("agent_certificates"), "2");  // a's and b's from enrollment, nothing renewed
}

TEST_F(SecurityTest, RevokingOnOneCoordinatorClosesTheStreamOnAnother) {
  coordinator::CoordinatorServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.database_url = db_.url();
  options.tick_interval = absl::ZeroDuration();
  options.tls = {pki_.server_cert, pki_.server_key, pki_.ca_cert, pki_.ca_key};
  coordinator::CoordinatorServer other(options);
  ASSERT_TRUE(other.Start().ok());
  const absl::Time listen_deadline = absl::Now() + absl::Seconds(10);
  while (!other.listening_for_revocations() && absl::Now() < listen_deadline) absl::SleepFor(absl::Milliseconds(20));
  ASSERT_TRUE(other.listening_for_revocations());

  // The agent streams to the other coordinator; the operator revokes it on this one.
  const Enrolled a = EnrollNew("agent-a");
  ChannelSecurity security;
  security.ca_cert_pem = pki_.ca_cert;
  security.cert_pem = a.cert;
  security.key_pem = a.key;
  Stream s = Open(*NewCoordinatorChannel(other.address(), security), "agent-a");
  v1::CoordinatorMessage message;
  ASSERT_TRUE(s.rw->Read(&message));
  ASSERT_TRUE(message.welcome().accepted());

  v1::RevokeAgentResponse response;
  ASSERT_TRUE(Revoke("agent-a", &response));
  EXPECT_EQ(response.streams_closed(), 0u);  // not on this coordinator

  absl::Duration took;
  EXPECT_EQ(ReadToEnd(s, &took).error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(took, absl::Seconds(5));
  other.Shutdown();
}

TEST_F(SecurityTest, TokensAndRolesGuardTheAdminAndFleetServices) {
  // No token, an unknown token.
  for (const std::string& token : {std::string(), std::string("bft_unknown")}) {
    auto stub = v1::Admin::NewStub(TokenChannel(token));
    v1::ListRunsResponse response;
    auto context = Context();
    EXPECT_EQ(stub->ListRuns(context.get(), {}, &response).error_code(), grpc::StatusCode::UNAUTHENTICATED) << token;
  }
  // A viewer reads, and may not submit.
  const std::string viewer = CreateToken("viewer-1", v1::ROLE_VIEWER);
  {
    auto stub = v1::Admin::NewStub(TokenChannel(viewer));
    v1::ListRunsResponse response;
    auto context = Context();
    EXPECT_TRUE(stub->ListRuns(context.get(), {}, &response).ok());
  }
  {
    auto fleet = v1::Fleet::NewStub(TokenChannel(viewer));
    v1::SubmitSeriesRequest request;
    request.set_spec_yaml("series: s\ntask: t\nbackend: llama-server\n");
    v1::SubmitSeriesResponse response;
    auto context = Context();
    const grpc::Status status = fleet->SubmitSeries(context.get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(status.error_message(), HasSubstr("viewer"));
    EXPECT_EQ(Count("series"), "0");
  }
  // An agent's certificate is no API token.
  {
    const Enrolled a = EnrollNew("agent-a");
    auto stub = v1::Admin::NewStub(CertChannel(a.cert, a.key));
    v1::ListRunsResponse response;
    auto context = Context();
    EXPECT_EQ(stub->ListRuns(context.get(), {}, &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  // A revoked token stops working on the next call.
  {
    auto admin = v1::Admin::NewStub(TokenChannel(kOperatorToken));
    v1::RevokeApiTokenRequest request;
    request.set_name("viewer-1");
    v1::RevokeApiTokenResponse response;
    auto context = Context();
    ASSERT_TRUE(admin->RevokeApiToken(context.get(), request, &response).ok());
    auto stub = v1::Admin::NewStub(TokenChannel(viewer));
    v1::ListRunsResponse runs;
    auto context2 = Context();
    EXPECT_EQ(stub->ListRuns(context2.get(), {}, &runs).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  // A viewer may not import either; nothing is written.
  {
    const std::string viewer2 = CreateToken("viewer-2", v1::ROLE_VIEWER);
    auto stub = v1::Admin::NewStub(TokenChannel(viewer2));
    v1::ImportRunsRequest request;
    *request.add_runs() = testing::MakeRecord(1);
    v1::ImportRunsResponse response;
    auto context = Context();
    EXPECT_EQ(stub->ImportRuns(context.get(), request, &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(Count("runs"), "0");
  }
}

TEST_F(SecurityTest, EveryChangeIsAudited) {
  CreateToken("viewer-1", v1::ROLE_VIEWER);
  EnrollNew("agent-a");
  auto admin = v1::Admin::NewStub(TokenChannel(kOperatorToken));
  {
    v1::ImportRunsRequest request;
    *request.add_runs() = testing::MakeRecord(1);
    v1::ImportRunsResponse response;
    auto context = Context();
    ASSERT_TRUE(admin->ImportRuns(context.get(), request, &response).ok());
    EXPECT_EQ(response.stored_run_ids_size(), 1);
  }
  v1::ListAuditRequest request;
  v1::ListAuditResponse response;
  auto context = Context();
  ASSERT_TRUE(admin->ListAudit(context.get(), request, &response).ok());
  std::vector<std::string> actions;
  for (const v1::AuditEntry& e : response.entries()) actions.push_back(e.actor() + " " + e.action() + " " + e.target());
  EXPECT_THAT(actions, ::testing::ElementsAre("token:bootstrap /benchfleet.v1.Admin/ImportRuns 1 records",
                                              "agent:agent-a /benchfleet.v1.Enrollment/Enroll agent-a",
                                              "token:bootstrap /benchfleet.v1.Admin/CreateEnrollmentToken agent-a",
                                              "token:bootstrap /benchfleet.v1.Admin/CreateApiToken viewer-1"));
  EXPECT_EQ(response.entries(3).role(), v1::ROLE_OPERATOR);
}

TEST_F(SecurityTest, SqlAndHtmlInEveryStringFieldRoundTripIntact) {
  const std::string nasty = "x'); DROP TABLE runs; -- <script>alert(\"1\")</script> & $1 \\ %s";
  v1::RunRecord record = testing::MakeRecord(1);
  record.set_agent_id("agent-a");
  // Every string field of the record, top level and in its metrics and flags.
  const google::protobuf::Descriptor* descriptor = record.GetDescriptor();
  const google::protobuf::Reflection* reflection = record.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (field->type() != google::protobuf::FieldDescriptor::TYPE_STRING || field->is_repeated()) continue;
    const std::string name = field->name();
    if (name == "run_id" || name == "agent_id" || name == "phase" || name == "status") continue;  // validated keys
    reflection->SetString(&record, field, nasty + " " + name);
  }
  record.mutable_metrics(0)->set_name(nasty);
  record.add_flags()->set_code(nasty);

  const Enrolled a = EnrollNew("agent-a");
  Stream s = Open(CertChannel(a.cert, a.key), "agent-a");
  v1::CoordinatorMessage welcome;
  ASSERT_TRUE(s.rw->Read(&welcome));
  const v1::Ack ack = SendRecord(s, record);
  ASSERT_EQ(ack.stored_run_ids_size(), 1) << (ack.rejections_size() > 0 ? ack.rejections(0).reason() : "");
  EXPECT_EQ(Count("runs"), "1");  // the table is still there

  auto admin = v1::Admin::NewStub(TokenChannel(kOperatorToken));
  v1::ListRunsResponse runs;
  auto context = Context();
  ASSERT_TRUE(admin->ListRuns(context.get(), {}, &runs).ok());
  ASSERT_EQ(runs.runs_size(), 1);
  v1::RunRecord back = runs.runs(0);
  back.clear_provenance();
  record.clear_provenance();
  EXPECT_EQ(back.DebugString(), record.DebugString());
}

}  // namespace
}  // namespace benchfleet
