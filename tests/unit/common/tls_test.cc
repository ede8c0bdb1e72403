#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/env.h"
#include "common/tls/certificates.h"
#include "common/tls/fleet_ca.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet::tls {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Every time in these tests is fixed: nothing depends on the wall clock.
const absl::Time kNow = absl::FromCivil(absl::CivilSecond(2026, 1, 15, 12, 0, 0), absl::UTCTimeZone());

const absl::Status& StatusOf(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

MATCHER_P2(StatusIs, code, message_part,
           absl::StrCat("has code ", absl::StatusCodeToString(code), " and a message containing \"",
                        message_part, "\"")) {
  const absl::Status& status = StatusOf(arg);
  *result_listener << "status is " << status;
  return status.code() == code && absl::StrContains(status.message(), message_part);
}

MATCHER(IsOk, "is OK") {
  const absl::Status& status = StatusOf(arg);
  *result_listener << "status is " << status;
  return status.ok();
}

std::string NewKey() {
  absl::StatusOr<std::string> key = NewPrivateKeyPem();
  EXPECT_THAT(key, IsOk());
  return key.value_or("");
}

CertificateSpec Spec(std::string common_name, absl::Time not_before, absl::Duration lifetime) {
  CertificateSpec spec;
  spec.common_name = std::move(common_name);
  spec.not_before = not_before;
  spec.not_after = not_before + lifetime;
  return spec;
}

struct TestCa {
  std::string key;
  std::string cert;
};

TestCa MakeCa(const std::string& common_name) {
  TestCa ca{.key = NewKey(), .cert = ""};
  CertificateSpec spec = Spec(common_name, kNow - absl::Hours(24 * 30), absl::Hours(24 * 3650));
  spec.is_ca = true;
  absl::StatusOr<std::string> cert = SelfSignedCertificatePem(ca.key, spec);
  EXPECT_THAT(cert, IsOk());
  ca.cert = cert.value_or("");
  return ca;
}

std::string Issue(const std::string& key, const CertificateSpec& spec, const TestCa& ca) {
  absl::StatusOr<std::string> cert = IssueCertificatePem(key, spec, ca.cert, ca.key);
  EXPECT_THAT(cert, IsOk());
  return cert.value_or("");
}

// A PEM block taken apart: its label and DER bytes, so a test can alter the bytes.
struct PemBlock {
  std::string label;
  std::string der;
};

PemBlock DecodePem(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  char* name = nullptr;
  char* header = nullptr;
  unsigned char* data = nullptr;
  long length = 0;
  PemBlock block;
  if (PEM_read_bio(bio.get(), &name, &header, &data, &length) == 1) {
    block.label = name;
    block.der.assign(reinterpret_cast<const char*>(data), static_cast<size_t>(length));
  }
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  return block;
}

std::string EncodePem(const PemBlock& block) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio(bio.get(), block.label.c_str(), "", reinterpret_cast<const unsigned char*>(block.der.data()),
                static_cast<long>(block.der.size()));
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(length));
}

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) absl::StrAppend(&hex, absl::Hex(digest[i], absl::kZeroPad2));
  return hex;
}

TEST(TlsKeysTest, NewPrivateKeyIsPkcs8P256) {
  const std::string pem = NewKey();
  EXPECT_THAT(pem, StartsWith("-----BEGIN PRIVATE KEY-----\n"));
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  ASSERT_NE(key, nullptr);
  char group[64] = {};
  size_t group_length = 0;
  ASSERT_EQ(EVP_PKEY_get_group_name(key.get(), group, sizeof group, &group_length), 1);
  EXPECT_EQ(std::string(group), "prime256v1");
  EXPECT_NE(NewKey(), pem);
}

TEST(TlsCertificatesTest, SelfSignedCaParsesAsCa) {
  const TestCa ca = MakeCa("test CA");
  absl::StatusOr<CertificateInfo> info = ParseCertificate(ca.cert);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "test CA");
  EXPECT_EQ(info->issuer_common_name, "test CA");
  EXPECT_TRUE(info->is_ca);
  EXPECT_EQ(info->not_before, kNow - absl::Hours(24 * 30));
  EXPECT_EQ(info->not_after, kNow + absl::Hours(24 * 3620));
  EXPECT_THAT(info->subject_alt_names, IsEmpty());
  EXPECT_EQ(info->sha256_fingerprint_hex, Sha256Hex(DecodePem(ca.cert).der));
  EXPECT_THAT(VerifyCertificate(ca.cert, ca.cert, kNow), IsOk());
  EXPECT_THAT(CheckKeyMatchesCertificate(ca.key, ca.cert), IsOk());
}

TEST(TlsCertificatesTest, IssuedServerCertificateVerifiesAndListsSans) {
  const TestCa ca = MakeCa("test CA");
  CertificateSpec spec = Spec("coordinator.example", kNow, absl::Hours(24 * 30));
  spec.server = true;
  spec.subject_alt_names = {"coordinator.example", "*.fleet.example", "127.0.0.1", "::1", "fd00::1:2"};
  const std::string key = NewKey();
  const std::string cert = Issue(key, spec, ca);

  absl::StatusOr<CertificateInfo> info = ParseCertificate(cert);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "coordinator.example");
  EXPECT_EQ(info->issuer_common_name, "test CA");
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->not_before, kNow);
  EXPECT_EQ(info->not_after, kNow + absl::Hours(24 * 30));
  EXPECT_THAT(info->subject_alt_names,
              ElementsAre("coordinator.example", "*.fleet.example", "127.0.0.1", "::1", "fd00::1:2"));
  EXPECT_THAT(VerifyCertificate(cert, ca.cert, kNow + absl::Hours(1)), IsOk());
  EXPECT_THAT(CheckKeyMatchesCertificate(key, cert), IsOk());
}

TEST(TlsCertificatesTest, IssuesForAPublicKeyPem) {
  const TestCa ca = MakeCa("test CA");
  const std::string key = NewKey();
  absl::StatusOr<CsrInfo> csr = ParseCsr(NewCsrPem(key, "x").value_or(""));
  ASSERT_THAT(csr, IsOk());
  ASSERT_THAT(csr->public_key_pem, StartsWith("-----BEGIN PUBLIC KEY-----\n"));
  const std::string cert = Issue(csr->public_key_pem, Spec("from public key", kNow, absl::Hours(1)), ca);
  EXPECT_THAT(CheckKeyMatchesCertificate(key, cert), IsOk());
  EXPECT_THAT(VerifyCertificate(cert, ca.cert, kNow), IsOk());
}

TEST(TlsCertificatesTest, CertificateFromAnotherCaIsNotIssuedByThisCa) {
  const TestCa ca = MakeCa("test CA");
  const TestCa other = MakeCa("other CA");
  const std::string cert = Issue(NewKey(), Spec("agent:a", kNow, absl::Hours(24)), other);
  EXPECT_THAT(VerifyCertificate(cert, ca.cert, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "certificate \"agent:a\" (issuer \"other CA\") is not issued by this CA (\"test CA\")"));
}

TEST(TlsCertificatesTest, CertificateFromAnotherCaWithTheSameNameIsNotIssuedByThisCa) {
  // Two fleets both call their CA "benchfleet fleet CA": the names match, the keys do not.
  const TestCa ca = MakeCa(kFleetCaCommonName);
  const TestCa other = MakeCa(kFleetCaCommonName);
  const std::string cert = Issue(NewKey(), Spec("agent:a", kNow, absl::Hours(24)), other);
  EXPECT_THAT(VerifyCertificate(cert, ca.cert, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated, "is not issued by this CA"));
  EXPECT_THAT(VerifyCertificate(cert, other.cert, kNow), IsOk());
}

TEST(TlsCertificatesTest, ExpiredCertificateFails) {
  const TestCa ca = MakeCa("test CA");
  const std::string cert = Issue(NewKey(), Spec("agent:a", kNow - absl::Hours(48), absl::Hours(24)), ca);
  EXPECT_THAT(VerifyCertificate(cert, ca.cert, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "certificate \"agent:a\" expired at 2026-01-14T12:00:00Z at 2026-01-15T12:00:00Z"));
  EXPECT_THAT(VerifyCertificate(cert, ca.cert, kNow - absl::Hours(30)), IsOk());
}

TEST(TlsCertificatesTest, NotYetValidCertificateFails) {
  const TestCa ca = MakeCa("test CA");
  const std::string cert = Issue(NewKey(), Spec("agent:a", kNow + absl::Hours(1), absl::Hours(24)), ca);
  EXPECT_THAT(VerifyCertificate(cert, ca.cert, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "certificate \"agent:a\" is not yet valid (valid from 2026-01-15T13:00:00Z)"));
}

TEST(TlsCertificatesTest, ExpiredCaFails) {
  const TestCa ca = MakeCa("test CA");  // valid until kNow + 3620 days
  const std::string cert = Issue(NewKey(), Spec("agent:a", kNow, absl::Hours(24 * 5000)), ca);
  EXPECT_THAT(VerifyCertificate(cert, ca.cert, kNow + absl::Hours(24 * 4000)),
              StatusIs(absl::StatusCode::kUnauthenticated, "CA certificate \"test CA\" expired"));
}

TEST(TlsCertificatesTest, AlteredCertificateParsesButDoesNotVerify) {
  const TestCa ca = MakeCa("test CA");
  PemBlock block = DecodePem(Issue(NewKey(), Spec("agent:a", kNow, absl::Hours(24)), ca));
  ASSERT_EQ(block.label, "CERTIFICATE");
  block.der.back() ^= 0x01;  // the last byte of the ECDSA signature's s
  const std::string altered = EncodePem(block);
  absl::StatusOr<CertificateInfo> info = ParseCertificate(altered);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "agent:a");
  EXPECT_THAT(VerifyCertificate(altered, ca.cert, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "certificate \"agent:a\": signature does not verify with the key of CA \"test CA\""));
}

TEST(TlsCertificatesTest, SpecIsValidated) {
  const std::string key = NewKey();
  CertificateSpec spec = Spec("ok", kNow, absl::Hours(1));

  CertificateSpec empty_name = spec;
  empty_name.common_name = "";
  EXPECT_THAT(SelfSignedCertificatePem(key, empty_name),
              StatusIs(absl::StatusCode::kInvalidArgument, "common name must be 1 to 64 characters, got 0"));
  CertificateSpec long_name = spec;
  long_name.common_name = std::string(65, 'a');
  EXPECT_THAT(SelfSignedCertificatePem(key, long_name),
              StatusIs(absl::StatusCode::kInvalidArgument, "common name must be 1 to 64 characters, got 65"));

  CertificateSpec backwards = spec;
  backwards.not_after = spec.not_before;
  EXPECT_THAT(SelfSignedCertificatePem(key, backwards),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "not_after 2026-01-15T12:00:00Z must be after not_before 2026-01-15T12:00:00Z"));

  CertificateSpec unset = spec;
  unset.not_before = absl::Time();
  EXPECT_THAT(SelfSignedCertificatePem(key, unset), StatusIs(absl::StatusCode::kInvalidArgument, "not_before is required"));
  CertificateSpec forever = spec;
  forever.not_after = absl::InfiniteFuture();
  EXPECT_THAT(SelfSignedCertificatePem(key, forever),
              StatusIs(absl::StatusCode::kInvalidArgument, "not_after must be finite"));

  for (std::string bad : {"bad name!", "", "-leading.example", "a..b", "1.2.3.4/8"}) {
    CertificateSpec bad_san = spec;
    bad_san.subject_alt_names = {"good.example", bad};
    EXPECT_THAT(SelfSignedCertificatePem(key, bad_san),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         absl::StrCat("subject alternative name \"", bad, "\" is neither a DNS name nor an IP address")));
  }
}

TEST(TlsCertificatesTest, IssuerMustBeACaWithItsKey) {
  const TestCa ca = MakeCa("test CA");
  const TestCa other = MakeCa("other CA");
  const std::string leaf_key = NewKey();
  const std::string leaf = Issue(leaf_key, Spec("leaf", kNow, absl::Hours(24)), ca);
  const CertificateSpec spec = Spec("agent:a", kNow, absl::Hours(1));
  EXPECT_THAT(IssueCertificatePem(NewKey(), spec, leaf, leaf_key),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "certificate \"leaf\" is not a CA certificate (no basicConstraints CA:TRUE)"));
  EXPECT_THAT(IssueCertificatePem(NewKey(), spec, ca.cert, other.key),
              StatusIs(absl::StatusCode::kInvalidArgument, "the CA key is not the key of CA certificate \"test CA\""));
}

TEST(TlsCertificatesTest, CheckKeyMatchesCertificate) {
  const TestCa ca = MakeCa("test CA");
  const std::string key = NewKey();
  const std::string cert = Issue(key, Spec("agent:a", kNow, absl::Hours(1)), ca);
  EXPECT_THAT(CheckKeyMatchesCertificate(key, cert), IsOk());
  EXPECT_THAT(CheckKeyMatchesCertificate(ca.key, cert),
              StatusIs(absl::StatusCode::kInvalidArgument, "the private key is not the key of certificate \"agent:a\""));
  EXPECT_THAT(CheckKeyMatchesCertificate(cert, cert),
              StatusIs(absl::StatusCode::kInvalidArgument, "key is not an unencrypted PEM private key"));
}

TEST(TlsCsrTest, RoundTripKeepsCommonNameAndKey) {
  const TestCa ca = MakeCa("test CA");
  const std::string key = NewKey();
  absl::StatusOr<std::string> csr = NewCsrPem(key, "agent:gpu-box-1");
  ASSERT_THAT(csr, IsOk());
  EXPECT_THAT(*csr, StartsWith("-----BEGIN CERTIFICATE REQUEST-----\n"));
  absl::StatusOr<CsrInfo> info = ParseCsr(*csr);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "agent:gpu-box-1");
  // The CSR's public key is key's: a certificate for it matches key and no other.
  const std::string cert = Issue(info->public_key_pem, Spec("agent:gpu-box-1", kNow, absl::Hours(1)), ca);
  EXPECT_THAT(CheckKeyMatchesCertificate(key, cert), IsOk());
  EXPECT_THAT(CheckKeyMatchesCertificate(NewKey(), cert), StatusIs(absl::StatusCode::kInvalidArgument, "not the key"));
}

TEST(TlsCsrTest, TamperedCsrIsRejected) {
  const std::string csr = NewCsrPem(NewKey(), "agent:one").value_or("");
  PemBlock block = DecodePem(csr);
  ASSERT_EQ(block.label, "CERTIFICATE REQUEST");
  const size_t at = block.der.find("agent:one");
  ASSERT_NE(at, std::string::npos);
  block.der.replace(at, 9, "agent:two");
  EXPECT_THAT(ParseCsr(EncodePem(block)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "CSR signature does not verify with its own public key (altered or forged)"));

  const TestCa ca = MakeCa("test CA");
  EXPECT_THAT(SignCsrPem(EncodePem(block), Spec("agent:two", kNow, absl::Hours(1)), ca.cert, ca.key),
              StatusIs(absl::StatusCode::kInvalidArgument, "CSR signature does not verify"));
}

TEST(TlsCsrTest, SignCsrUsesTheSpecCommonNameNotTheCsrs) {
  const TestCa ca = MakeCa(kFleetCaCommonName);
  const std::string key = NewKey();
  const std::string csr = NewCsrPem(key, "agent:i-claim-to-be-someone-else").value_or("");
  CertificateSpec spec = Spec("agent:gpu-box-1", kNow, absl::Hours(24 * 90));
  spec.client = true;
  absl::StatusOr<std::string> cert = SignCsrPem(csr, spec, ca.cert, ca.key);
  ASSERT_THAT(cert, IsOk());
  absl::StatusOr<CertificateInfo> info = ParseCertificate(*cert);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->common_name, "agent:gpu-box-1");
  EXPECT_EQ(info->issuer_common_name, kFleetCaCommonName);
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->not_after, kNow + absl::Hours(24 * 90));
  EXPECT_THAT(CheckKeyMatchesCertificate(key, *cert), IsOk());
  EXPECT_THAT(VerifyCertificate(*cert, ca.cert, kNow), IsOk());
}

TEST(TlsCsrTest, SerialsAreRandomPositive128BitNumbers) {
  const TestCa ca = MakeCa("test CA");
  const std::string csr = NewCsrPem(NewKey(), "x").value_or("");
  std::vector<std::string> serials;
  bool saw_full_width = false;
  for (int i = 0; i < 16; ++i) {
    absl::StatusOr<std::string> cert = SignCsrPem(csr, Spec("agent:a", kNow, absl::Hours(1)), ca.cert, ca.key);
    ASSERT_THAT(cert, IsOk());
    const std::string serial = ParseCertificate(*cert)->serial_hex;
    EXPECT_FALSE(absl::StartsWith(serial, "-")) << serial;
    EXPECT_LE(serial.size(), 32u) << serial;
    EXPECT_GE(serial.size(), 2u) << serial;
    EXPECT_THAT(serials, ::testing::Not(::testing::Contains(serial)));
    saw_full_width = saw_full_width || serial.size() == 32;  // all 16 bytes with a zero top byte: 2^-128
    serials.push_back(serial);
  }
  EXPECT_TRUE(saw_full_width);
}

TEST(TlsParsingTest, GarbageIsAnErrorNotACrash) {
  const TestCa ca = MakeCa("test CA");
  const std::string csr = NewCsrPem(NewKey(), "x").value_or("");
  std::string truncated_cert = ca.cert.substr(0, ca.cert.size() / 2) + "\n-----END CERTIFICATE-----\n";
  const std::vector<std::string> garbage = {"", "garbage", std::string("\0\xff\x01", 3), truncated_cert,
                                            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"};
  for (const std::string& input : garbage) {
    SCOPED_TRACE(input);
    EXPECT_THAT(ParseCertificate(input), StatusIs(absl::StatusCode::kInvalidArgument, "certificate"));
    EXPECT_THAT(ParseCsr(input), StatusIs(absl::StatusCode::kInvalidArgument, "CSR"));
    EXPECT_THAT(VerifyCertificate(input, ca.cert, kNow), StatusIs(absl::StatusCode::kInvalidArgument, "certificate"));
    EXPECT_THAT(VerifyCertificate(ca.cert, input, kNow),
                StatusIs(absl::StatusCode::kInvalidArgument, "CA certificate is not a PEM certificate"));
    EXPECT_THAT(IssueCertificatePem(input, Spec("a", kNow, absl::Hours(1)), ca.cert, ca.key),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "subject key is neither a PEM private key nor a PEM public key"));
    EXPECT_THAT(IssueCertificatePem(NewKey(), Spec("a", kNow, absl::Hours(1)), input, ca.key),
                StatusIs(absl::StatusCode::kInvalidArgument, "CA certificate is not a PEM certificate"));
    EXPECT_THAT(IssueCertificatePem(NewKey(), Spec("a", kNow, absl::Hours(1)), ca.cert, input),
                StatusIs(absl::StatusCode::kInvalidArgument, "CA key is not an unencrypted PEM private key"));
    EXPECT_THAT(SignCsrPem(input, Spec("a", kNow, absl::Hours(1)), ca.cert, ca.key),
                StatusIs(absl::StatusCode::kInvalidArgument, "CSR"));
    EXPECT_THAT(SignCsrPem(csr, Spec("a", kNow, absl::Hours(1)), ca.cert, input),
                StatusIs(absl::StatusCode::kInvalidArgument, "CA key is not an unencrypted PEM private key"));
    EXPECT_THAT(NewCsrPem(input, "x"), StatusIs(absl::StatusCode::kInvalidArgument, "key is not"));
    EXPECT_THAT(SelfSignedCertificatePem(input, Spec("a", kNow, absl::Hours(1))),
                StatusIs(absl::StatusCode::kInvalidArgument, "key is not"));
    EXPECT_THAT(CheckKeyMatchesCertificate(input, ca.cert), StatusIs(absl::StatusCode::kInvalidArgument, "key is not"));
  }
  // A CSR is not a certificate, nor a certificate a CSR.
  EXPECT_THAT(ParseCertificate(csr),
              StatusIs(absl::StatusCode::kInvalidArgument, "certificate is not a PEM certificate"));
  EXPECT_THAT(ParseCsr(ca.cert), StatusIs(absl::StatusCode::kInvalidArgument, "CSR is not a PEM certificate request"));
}

class FleetCaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "tls_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  static mode_t ModeOf(const std::string& path) {
    struct stat st = {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream contents;
    contents << in.rdbuf();
    return contents.str();
  }
  std::vector<std::string> Names(const std::string& dir) const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  FleetCaOptions Options(const std::string& dir) const {
    FleetCaOptions options;
    options.out_dir = dir;
    options.now = kNow;
    return options;
  }

  std::string root_;
};

TEST_F(FleetCaTest, WritesTheFleetCaWithModesAndRefusesASecondTime) {
  const std::string dir = root_ + "/tls";
  absl::StatusOr<FleetCaFiles> files = InitFleetCa(Options(dir));
  ASSERT_THAT(files, IsOk());
  EXPECT_EQ(files->ca_cert, dir + "/ca.pem");
  EXPECT_EQ(files->ca_key, dir + "/ca-key.pem");
  EXPECT_EQ(files->server_cert, dir + "/server.pem");
  EXPECT_EQ(files->server_key, dir + "/server-key.pem");
  EXPECT_THAT(Names(dir), ElementsAre("ca-key.pem", "ca.pem", "server-key.pem", "server.pem"));
  EXPECT_EQ(ModeOf(dir), 0700u);
  EXPECT_EQ(ModeOf(files->ca_key), 0600u);
  EXPECT_EQ(ModeOf(files->server_key), 0600u);
  EXPECT_EQ(ModeOf(files->ca_cert), 0644u);
  EXPECT_EQ(ModeOf(files->server_cert), 0644u);

  const std::string ca_cert = Read(files->ca_cert);
  const std::string server_cert = Read(files->server_cert);
  absl::StatusOr<CertificateInfo> ca = ParseCertificate(ca_cert);
  ASSERT_THAT(ca, IsOk());
  EXPECT_EQ(ca->common_name, "benchfleet fleet CA");
  EXPECT_TRUE(ca->is_ca);
  EXPECT_EQ(ca->not_before, kNow - absl::Hours(1));
  EXPECT_EQ(ca->not_after, kNow + absl::Hours(24 * 3650));
  absl::StatusOr<CertificateInfo> server = ParseCertificate(server_cert);
  ASSERT_THAT(server, IsOk());
  EXPECT_EQ(server->common_name, "localhost");
  EXPECT_EQ(server->issuer_common_name, "benchfleet fleet CA");
  EXPECT_FALSE(server->is_ca);
  EXPECT_THAT(server->subject_alt_names, ElementsAre("localhost", "127.0.0.1"));
  EXPECT_EQ(server->not_before, kNow - absl::Hours(1));
  EXPECT_EQ(server->not_after, kNow + absl::Hours(24 * 825));
  EXPECT_THAT(VerifyCertificate(server_cert, ca_cert, kNow), IsOk());
  EXPECT_THAT(CheckKeyMatchesCertificate(Read(files->ca_key), ca_cert), IsOk());
  EXPECT_THAT(CheckKeyMatchesCertificate(Read(files->server_key), server_cert), IsOk());

  EXPECT_THAT(InitFleetCa(Options(dir)),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       dir + "/ca-key.pem already exists: refusing to overwrite the fleet CA"));
  EXPECT_EQ(Read(files->ca_cert), ca_cert);
  EXPECT_EQ(Read(files->server_cert), server_cert);
}

TEST_F(FleetCaTest, ServerNamesAndDaysAreHonoured) {
  FleetCaOptions options = Options(root_);  // exists already: used as it is
  options.server_names = {"coordinator.fleet.internal", "10.0.0.5", "::1"};
  options.ca_days = 30;
  options.server_days = 825;  // longer than the CA: capped at its expiry
  absl::StatusOr<FleetCaFiles> files = InitFleetCa(options);
  ASSERT_THAT(files, IsOk());
  absl::StatusOr<CertificateInfo> server = ParseCertificate(Read(files->server_cert));
  ASSERT_THAT(server, IsOk());
  EXPECT_EQ(server->common_name, "coordinator.fleet.internal");
  EXPECT_THAT(server->subject_alt_names, ElementsAre("coordinator.fleet.internal", "10.0.0.5", "::1"));
  EXPECT_EQ(server->not_after, kNow + absl::Hours(24 * 30));
}

TEST_F(FleetCaTest, BadOptionsWriteNothing) {
  const std::string dir = root_ + "/tls";
  FleetCaOptions bad_name = Options(dir);
  bad_name.server_names = {"localhost", "not a name"};
  EXPECT_THAT(InitFleetCa(bad_name),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "subject alternative name \"not a name\" is neither a DNS name nor an IP address"));
  FleetCaOptions no_names = Options(dir);
  no_names.server_names.clear();
  EXPECT_THAT(InitFleetCa(no_names),
              StatusIs(absl::StatusCode::kInvalidArgument, "at least one server name is required"));
  FleetCaOptions no_now = Options(dir);
  no_now.now = absl::Time();
  EXPECT_THAT(InitFleetCa(no_now), StatusIs(absl::StatusCode::kInvalidArgument, "now is required"));
  FleetCaOptions zero_days = Options(dir);
  zero_days.ca_days = 0;
  EXPECT_THAT(InitFleetCa(zero_days), StatusIs(absl::StatusCode::kInvalidArgument, "ca_days must be positive, got 0"));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// Interoperability: the OpenSSL command line (a different consumer of the same standards) accepts
// what InitFleetCa and SignCsrPem make, under strict X.509 checks and the TLS purposes.
TEST_F(FleetCaTest, OpenSslCommandLineAcceptsTheCertificates) {
  const std::string openssl = "/usr/bin/openssl";
  if (::access(openssl.c_str(), X_OK) != 0) GTEST_SKIP() << openssl << " is not installed";

  absl::StatusOr<FleetCaFiles> files = InitFleetCa(Options(root_ + "/tls"));
  ASSERT_THAT(files, IsOk());
  CertificateSpec agent = Spec("agent:gpu-box-1", kNow, absl::Hours(24 * 90));
  agent.client = true;
  absl::StatusOr<std::string> agent_cert = SignCsrPem(NewCsrPem(NewKey(), "agent:x").value_or(""), agent,
                                                      Read(files->ca_cert), Read(files->ca_key));
  ASSERT_THAT(agent_cert, IsOk());
  const std::string agent_path = root_ + "/agent.pem";
  ASSERT_THAT(Env::Default()->WriteFileWithMode(agent_path, *agent_cert, 0644, /*exclusive=*/false), IsOk());
  const TestCa other = MakeCa(kFleetCaCommonName);
  const std::string other_path = root_ + "/other-ca.pem";
  ASSERT_THAT(Env::Default()->WriteFileWithMode(other_path, other.cert, 0644, /*exclusive=*/false), IsOk());

  const std::string output = root_ + "/openssl.out";
  auto verify = [&](const std::string& purpose, const std::string& ca, const std::string& cert) {
    const std::string command =
        absl::StrCat(openssl, " verify -x509_strict -purpose ", purpose, " -attime ", absl::ToUnixSeconds(kNow),
                     " -CAfile '", ca, "' '", cert, "' >'", output, "' 2>&1");
    int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(verify("sslserver", files->ca_cert, files->server_cert), 0) << Read(output);
  EXPECT_EQ(verify("sslclient", files->ca_cert, agent_path), 0) << Read(output);
  EXPECT_NE(verify("sslserver", other_path, files->server_cert), 0) << Read(output);
  EXPECT_NE(verify("sslserver", files->ca_cert, agent_path), 0) << "a client certificate is no server's";
}

}  // namespace
}  // namespace benchfleet::tls
