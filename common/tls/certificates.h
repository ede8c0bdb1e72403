// X.509 building blocks of the fleet's security contract (coordinator/auth/README.md): P-256 keys,
// certificates signed by the fleet CA, enrollment CSRs, and their verification. PEM in, PEM out;
// OpenSSL 3 stays inside certificates.cc. Owned by common/; every function is thread-safe.
#ifndef BENCHFLEET_COMMON_TLS_CERTIFICATES_H_
#define BENCHFLEET_COMMON_TLS_CERTIFICATES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::tls {

// What a new certificate says. Issuing validates it: INVALID_ARGUMENT on a bad field.
struct CertificateSpec {
  // 1 to 64 characters (the X.509 upper bound).
  std::string common_name;
  // Both required (a default-constructed absl::Time counts as unset), not_after > not_before,
  // years 1950..9999. Stored with whole-second precision (fractions are dropped).
  absl::Time not_before;
  absl::Time not_after;
  // basicConstraints CA:TRUE (critical) and keyUsage keyCertSign, cRLSign. Otherwise CA:FALSE.
  bool is_ca = false;
  // extendedKeyUsage serverAuth (and keyUsage digitalSignature).
  bool server = false;
  // extendedKeyUsage clientAuth (and keyUsage digitalSignature, which ECDSA client auth needs).
  bool client = false;
  // Each a DNS name (letters, digits, '-', labels separated by '.', optional leading "*.") or an
  // IPv4/IPv6 literal, which becomes an IP address SAN.
  std::vector<std::string> subject_alt_names;
};

// Returns a new P-256 (prime256v1) private key as PKCS#8 PEM ("BEGIN PRIVATE KEY").
absl::StatusOr<std::string> NewPrivateKeyPem();

// Returns a certificate for key_pem's public key, signed by key_pem itself (a root CA).
absl::StatusOr<std::string> SelfSignedCertificatePem(const std::string& key_pem,
                                                     const CertificateSpec& spec);

// Returns a certificate for the public key in subject_public_or_private_key_pem (a private key PEM
// or a "BEGIN PUBLIC KEY" PEM), issued by the CA. INVALID_ARGUMENT when ca_cert_pem is not a CA
// certificate or ca_key_pem is not its key.
absl::StatusOr<std::string> IssueCertificatePem(const std::string& subject_public_or_private_key_pem,
                                                const CertificateSpec& spec,
                                                const std::string& ca_cert_pem,
                                                const std::string& ca_key_pem);

// Returns a PKCS#10 request for key_pem's public key with subject CN common_name, signed by key_pem.
absl::StatusOr<std::string> NewCsrPem(const std::string& key_pem, const std::string& common_name);

struct CsrInfo {
  std::string common_name;     // empty when the subject has none
  std::string public_key_pem;  // "BEGIN PUBLIC KEY" PEM
};

// Parses a CSR and checks its self-signature. INVALID_ARGUMENT on garbage or a bad signature.
absl::StatusOr<CsrInfo> ParseCsr(const std::string& csr_pem);

// Returns a certificate for a CSR's public key, issued by the CA. The subject CN is
// spec.common_name, never the CSR's; nothing else of the CSR (extensions, SANs) is copied.
absl::StatusOr<std::string> SignCsrPem(const std::string& csr_pem, const CertificateSpec& spec,
                                       const std::string& ca_cert_pem,
                                       const std::string& ca_key_pem);

struct CertificateInfo {
  std::string common_name;         // empty when the subject has none
  std::string issuer_common_name;  // empty when the issuer has none
  // Lower-case hex of the serial's big-endian bytes, even length (e.g. "0a3f...").
  std::string serial_hex;
  absl::Time not_before;
  absl::Time not_after;
  // Lower-case hex SHA-256 of the DER certificate, no separators (64 characters).
  std::string sha256_fingerprint_hex;
  bool is_ca = false;  // basicConstraints CA:TRUE
  // DNS names as written; IP addresses in inet_ntop form ("127.0.0.1", "::1"). Other kinds skipped.
  std::vector<std::string> subject_alt_names;
};

// Parses the first certificate of cert_pem. INVALID_ARGUMENT on garbage.
absl::StatusOr<CertificateInfo> ParseCertificate(const std::string& cert_pem);

// Returns OK when cert_pem is signed by ca_pem (a root) and both are valid at `at`. Otherwise
// UNAUTHENTICATED naming the cause: "expired", "not yet valid", "not issued by this CA",
// "signature does not verify", or OpenSSL's own reason. INVALID_ARGUMENT when a PEM does not parse.
absl::Status VerifyCertificate(const std::string& cert_pem, const std::string& ca_pem, absl::Time at);

// Returns OK when key_pem is the private key of cert_pem; INVALID_ARGUMENT otherwise.
absl::Status CheckKeyMatchesCertificate(const std::string& key_pem, const std::string& cert_pem);

}  // namespace benchfleet::tls

#endif  // BENCHFLEET_COMMON_TLS_CERTIFICATES_H_
