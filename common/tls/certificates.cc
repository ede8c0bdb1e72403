#include "common/tls/certificates.h"

#include <arpa/inet.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <climits>
#include <ctime>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace benchfleet::tls {
namespace {

// unique_ptr deleters for OpenSSL's typed free functions.
template <auto kFree>
struct FreeWith {
  template <typename T>
  void operator()(T* p) const {
    kFree(p);
  }
};
struct OpenSslFree {
  void operator()(void* p) const { OPENSSL_free(p); }
};

using BioPtr = std::unique_ptr<BIO, FreeWith<BIO_free_all>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, FreeWith<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, FreeWith<X509_free>>;
using ReqPtr = std::unique_ptr<X509_REQ, FreeWith<X509_REQ_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, FreeWith<X509_EXTENSION_free>>;
using StorePtr = std::unique_ptr<X509_STORE, FreeWith<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, FreeWith<X509_STORE_CTX_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, FreeWith<BN_free>>;
using Asn1IntegerPtr = std::unique_ptr<ASN1_INTEGER, FreeWith<ASN1_INTEGER_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, FreeWith<GENERAL_NAMES_free>>;
using GeneralNamePtr = std::unique_ptr<GENERAL_NAME, FreeWith<GENERAL_NAME_free>>;
using OctetStringPtr = std::unique_ptr<ASN1_OCTET_STRING, FreeWith<ASN1_OCTET_STRING_free>>;

constexpr size_t kMaxCommonNameLength = 64;  // ub-common-name, RFC 5280
constexpr int kSerialBits = 128;

// Every public function runs with an empty OpenSSL error queue and leaves it empty, so a message
// never carries an earlier call's leftovers and nothing is left for other OpenSSL users in the
// process (gRPC reads the same thread-local queue).
class ErrorQueueScope {
 public:
  ErrorQueueScope() { ERR_clear_error(); }
  ~ErrorQueueScope() { ERR_clear_error(); }
  ErrorQueueScope(const ErrorQueueScope&) = delete;
  ErrorQueueScope& operator=(const ErrorQueueScope&) = delete;
};

// Drains this thread's OpenSSL error queue into one line; "" when it is empty.
std::string DrainOpenSslErrors() {
  constexpr size_t kMaxErrors = 8;
  std::vector<std::string> parts;
  const char* data = nullptr;
  int flags = 0;
  while (unsigned long code = ERR_get_error_all(nullptr, nullptr, nullptr, &data, &flags)) {
    if (parts.size() == kMaxErrors) continue;  // keep draining, stop describing
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    std::string part = text;
    if ((flags & ERR_TXT_STRING) != 0 && data != nullptr && *data != '\0') {
      absl::StrAppend(&part, " (", data, ")");
    }
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, "; ");
}

// Returns `what` with the OpenSSL error queue appended, under `code`.
absl::Status OpenSslError(absl::StatusCode code, absl::string_view what) {
  std::string errors = DrainOpenSslErrors();
  if (errors.empty()) return absl::Status(code, what);
  return absl::Status(code, absl::StrCat(what, ": ", errors));
}

absl::Status InternalOpenSslError(absl::string_view what) {
  return OpenSslError(absl::StatusCode::kInternal, what);
}

// Refuses encrypted PEM keys instead of letting OpenSSL prompt on the terminal.
int NoPassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*userdata*/) { return -1; }

absl::StatusOr<BioPtr> ReadOnlyBio(const std::string& pem) {
  if (pem.size() > static_cast<size_t>(INT_MAX)) return absl::InvalidArgumentError("PEM input is too large");
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) return InternalOpenSslError("BIO_new_mem_buf");
  return bio;
}

// Runs write(BIO*) (a PEM_write_bio_* call) into memory and returns what it wrote.
template <typename Write>
absl::StatusOr<std::string> WritePem(Write write, absl::string_view what) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr) return InternalOpenSslError("BIO_new");
  if (write(bio.get()) != 1) return InternalOpenSslError(absl::StrCat("writing the ", what, " as PEM"));
  char* data = nullptr;
  long length = BIO_get_mem_data(bio.get(), &data);
  if (length < 0 || (length > 0 && data == nullptr)) return InternalOpenSslError("BIO_get_mem_data");
  return std::string(data, static_cast<size_t>(length));
}

absl::StatusOr<PkeyPtr> LoadPrivateKey(const std::string& pem, absl::string_view what) {
  absl::StatusOr<BioPtr> bio = ReadOnlyBio(pem);
  if (!bio.ok()) return bio.status();
  PkeyPtr key(PEM_read_bio_PrivateKey(bio->get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return OpenSslError(absl::StatusCode::kInvalidArgument,
                        absl::StrCat(what, " is not an unencrypted PEM private key"));
  }
  return key;
}

// Loads a private key PEM or, failing that, a "BEGIN PUBLIC KEY" PEM.
absl::StatusOr<PkeyPtr> LoadPrivateOrPublicKey(const std::string& pem, absl::string_view what) {
  absl::StatusOr<BioPtr> bio = ReadOnlyBio(pem);
  if (!bio.ok()) return bio.status();
  if (PkeyPtr key(PEM_read_bio_PrivateKey(bio->get(), nullptr, NoPassphrase, nullptr)); key != nullptr) {
    return key;
  }
  ERR_clear_error();  // the private-key attempt's failure says nothing about the public-key one
  bio = ReadOnlyBio(pem);
  if (!bio.ok()) return bio.status();
  PkeyPtr key(PEM_read_bio_PUBKEY(bio->get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return OpenSslError(absl::StatusCode::kInvalidArgument,
                        absl::StrCat(what, " is neither a PEM private key nor a PEM public key"));
  }
  return key;
}

absl::StatusOr<X509Ptr> LoadCertificate(const std::string& pem, absl::string_view what) {
  absl::StatusOr<BioPtr> bio = ReadOnlyBio(pem);
  if (!bio.ok()) return bio.status();
  X509Ptr cert(PEM_read_bio_X509(bio->get(), nullptr, NoPassphrase, nullptr));
  if (cert == nullptr) {
    return OpenSslError(absl::StatusCode::kInvalidArgument, absl::StrCat(what, " is not a PEM certificate"));
  }
  return cert;
}

std::string CommonNameOf(const X509_NAME* name) {
  if (name == nullptr) return "";
  int index = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (index < 0) return "";
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  unsigned char* utf8 = nullptr;
  int length = ASN1_STRING_to_UTF8(&utf8, data);
  if (length < 0) return "";
  std::unique_ptr<unsigned char, OpenSslFree> owned(utf8);
  return std::string(reinterpret_cast<const char*>(utf8), static_cast<size_t>(length));
}

std::string FormatUtc(absl::Time t) { return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone()); }

absl::StatusOr<absl::Time> FromAsn1Time(const ASN1_TIME* t, absl::string_view what) {
  struct tm tm = {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) {
    return OpenSslError(absl::StatusCode::kInvalidArgument, absl::StrCat("certificate has an unreadable ", what));
  }
  return absl::FromCivil(absl::CivilSecond(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                           tm.tm_min, tm.tm_sec),
                         absl::UTCTimeZone());
}

// Fills `bytes` (4 or 16 of them) when name is an IPv4 or IPv6 literal.
bool ParseIpLiteral(const std::string& name, unsigned char bytes[16], int* length) {
  if (inet_pton(AF_INET, name.c_str(), bytes) == 1) {
    *length = 4;
    return true;
  }
  if (inet_pton(AF_INET6, name.c_str(), bytes) == 1) {
    *length = 16;
    return true;
  }
  return false;
}

// A host name as RFC 1123 allows it, optionally a wildcard ("*.example.com").
bool IsDnsName(absl::string_view name) {
  if (absl::StartsWith(name, "*.")) name.remove_prefix(2);
  if (name.empty() || name.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    }
  }
  return true;
}

absl::Status ValidateCommonName(const std::string& common_name) {
  if (common_name.empty() || common_name.size() > kMaxCommonNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("common name must be 1 to ", kMaxCommonNameLength,
                                                   " characters, got ", common_name.size()));
  }
  return absl::OkStatus();
}

absl::Status ValidateTime(absl::Time t, absl::string_view field) {
  // A default-constructed absl::Time is the Unix epoch: take it as "not set" rather than issue a
  // certificate valid from 1970.
  if (t == absl::Time()) return absl::InvalidArgumentError(absl::StrCat(field, " is required"));
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be finite"));
  }
  // RFC 5280 times: UTCTime for 1950..2049, GeneralizedTime after; nothing before 1950.
  int64_t year = absl::ToCivilYear(t, absl::UTCTimeZone()).year();
  if (year < 1950 || year > 9999) {
    return absl::InvalidArgumentError(absl::StrCat(field, " ", FormatUtc(t), " is outside the years 1950..9999"));
  }
  return absl::OkStatus();
}

absl::Status ValidateSpec(const CertificateSpec& spec) {
  if (absl::Status s = ValidateCommonName(spec.common_name); !s.ok()) return s;
  if (absl::Status s = ValidateTime(spec.not_before, "not_before"); !s.ok()) return s;
  if (absl::Status s = ValidateTime(spec.not_after, "not_after"); !s.ok()) return s;
  // Compare whole seconds: that is what the certificate will hold.
  if (absl::ToTimeT(spec.not_after) <= absl::ToTimeT(spec.not_before)) {
    return absl::InvalidArgumentError(absl::StrCat("not_after ", FormatUtc(spec.not_after),
                                                   " must be after not_before ", FormatUtc(spec.not_before)));
  }
  for (const std::string& name : spec.subject_alt_names) {
    unsigned char bytes[16];
    int length = 0;
    if (!ParseIpLiteral(name, bytes, &length) && !IsDnsName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("subject alternative name \"", name, "\" is neither a DNS name nor an IP address"));
    }
  }
  return absl::OkStatus();
}

// Refuses keys too weak (or too exotic) for the fleet; the fleet itself makes P-256 keys.
absl::Status CheckKeyStrength(EVP_PKEY* key, absl::string_view what) {
  const int bits = EVP_PKEY_get_bits(key);
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_EC:
      if (bits >= 256) return absl::OkStatus();
      break;
    case EVP_PKEY_RSA:
      if (bits >= 2048) return absl::OkStatus();
      break;
    default:
      break;
  }
  const char* type = EVP_PKEY_get0_type_name(key);
  return absl::InvalidArgumentError(absl::StrCat(what, " (", type != nullptr ? type : "unknown type", ", ", bits,
                                                 " bits) is not accepted: use an EC key of at least 256 bits "
                                                 "(P-256) or RSA of at least 2048"));
}

absl::StatusOr<Asn1IntegerPtr> RandomSerial() {
  BignumPtr bn(BN_new());
  if (bn == nullptr) return InternalOpenSslError("BN_new");
  do {
    if (BN_rand(bn.get(), kSerialBits, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1) {
      return InternalOpenSslError("BN_rand");
    }
  } while (BN_is_zero(bn.get()));
  Asn1IntegerPtr serial(BN_to_ASN1_INTEGER(bn.get(), nullptr));
  if (serial == nullptr) return InternalOpenSslError("BN_to_ASN1_INTEGER");
  return serial;
}

absl::Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
  ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, ctx, nid, value.c_str()));
  if (extension == nullptr) {
    return InternalOpenSslError(absl::StrCat("building extension ", OBJ_nid2sn(nid), "=", value));
  }
  if (X509_add_ext(cert, extension.get(), -1) != 1) {
    return InternalOpenSslError(absl::StrCat("adding extension ", OBJ_nid2sn(nid)));
  }
  return absl::OkStatus();
}

absl::Status AddSubjectAltNames(X509* cert, const std::vector<std::string>& names) {
  if (names.empty()) return absl::OkStatus();
  GeneralNamesPtr general_names(GENERAL_NAMES_new());
  if (general_names == nullptr) return InternalOpenSslError("GENERAL_NAMES_new");
  for (const std::string& name : names) {
    GeneralNamePtr general_name(GENERAL_NAME_new());
    if (general_name == nullptr) return InternalOpenSslError("GENERAL_NAME_new");
    unsigned char bytes[16];
    int length = 0;
    if (ParseIpLiteral(name, bytes, &length)) {
      OctetStringPtr address(ASN1_OCTET_STRING_new());
      if (address == nullptr || ASN1_OCTET_STRING_set(address.get(), bytes, length) != 1) {
        return InternalOpenSslError("building an IP address SAN");
      }
      GENERAL_NAME_set0_value(general_name.get(), GEN_IPADD, address.release());
    } else {
      std::unique_ptr<ASN1_IA5STRING, FreeWith<ASN1_IA5STRING_free>> dns(ASN1_IA5STRING_new());
      if (dns == nullptr || ASN1_STRING_set(dns.get(), name.data(), static_cast<int>(name.size())) != 1) {
        return InternalOpenSslError("building a DNS SAN");
      }
      GENERAL_NAME_set0_value(general_name.get(), GEN_DNS, dns.release());
    }
    if (sk_GENERAL_NAME_push(general_names.get(), general_name.get()) == 0) {
      return InternalOpenSslError("sk_GENERAL_NAME_push");
    }
    general_name.release();  // owned by general_names now
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, general_names.get(), /*crit=*/0, X509V3_ADD_DEFAULT) != 1) {
    return InternalOpenSslError("adding subjectAltName");
  }
  return absl::OkStatus();
}

// Builds, signs and PEM-encodes a certificate for subject_key. issuer_cert is null for a
// self-signed one (issuer_key is then subject_key's private half).
absl::StatusOr<std::string> BuildCertificate(EVP_PKEY* subject_key, const CertificateSpec& spec,
                                             X509* issuer_cert, EVP_PKEY* issuer_key) {
  if (absl::Status s = ValidateSpec(spec); !s.ok()) return s;
  X509Ptr cert(X509_new());
  if (cert == nullptr) return InternalOpenSslError("X509_new");
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1) return InternalOpenSslError("X509_set_version");

  absl::StatusOr<Asn1IntegerPtr> serial = RandomSerial();
  if (!serial.ok()) return serial.status();
  if (X509_set_serialNumber(cert.get(), serial->get()) != 1) return InternalOpenSslError("X509_set_serialNumber");

  X509_NAME* subject = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_NID(subject, NID_commonName, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(spec.common_name.data()),
                                 static_cast<int>(spec.common_name.size()), -1, 0) != 1) {
    return OpenSslError(absl::StatusCode::kInvalidArgument,
                        absl::StrCat("common name \"", spec.common_name, "\" is not accepted"));
  }
  const X509_NAME* issuer = issuer_cert != nullptr ? X509_get_subject_name(issuer_cert) : subject;
  if (X509_set_issuer_name(cert.get(), issuer) != 1) return InternalOpenSslError("X509_set_issuer_name");

  if (ASN1_TIME_set(X509_getm_notBefore(cert.get()), absl::ToTimeT(spec.not_before)) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), absl::ToTimeT(spec.not_after)) == nullptr) {
    return InternalOpenSslError("setting the validity period");
  }
  if (X509_set_pubkey(cert.get(), subject_key) != 1) return InternalOpenSslError("X509_set_pubkey");

  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer_cert != nullptr ? issuer_cert : cert.get(), cert.get(), nullptr, nullptr, 0);

  std::vector<std::string> key_usage;
  std::vector<std::string> extended_key_usage;
  if (spec.server || spec.client) key_usage.push_back("digitalSignature");
  if (spec.is_ca) {
    key_usage.push_back("keyCertSign");
    key_usage.push_back("cRLSign");
  }
  if (spec.server) extended_key_usage.push_back("serverAuth");
  if (spec.client) extended_key_usage.push_back("clientAuth");

  std::vector<std::pair<int, std::string>> extensions = {
      {NID_basic_constraints, spec.is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE"},
  };
  if (!key_usage.empty()) extensions.emplace_back(NID_key_usage, "critical," + absl::StrJoin(key_usage, ","));
  if (!extended_key_usage.empty()) extensions.emplace_back(NID_ext_key_usage, absl::StrJoin(extended_key_usage, ","));
  // The subject key identifier goes first: for a self-signed certificate the authority key
  // identifier is read from it.
  extensions.emplace_back(NID_subject_key_identifier, "hash");
  extensions.emplace_back(NID_authority_key_identifier, "keyid:always");
  for (const auto& [nid, value] : extensions) {
    if (absl::Status s = AddExtension(cert.get(), &ctx, nid, value); !s.ok()) return s;
  }
  if (absl::Status s = AddSubjectAltNames(cert.get(), spec.subject_alt_names); !s.ok()) return s;

  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) <= 0) return InternalOpenSslError("signing the certificate");
  return WritePem([&](BIO* bio) { return PEM_write_bio_X509(bio, cert.get()); }, "certificate");
}

// Checks that ca_cert can issue certificates and that ca_key is its key.
absl::Status CheckIssuer(X509* ca_cert, EVP_PKEY* ca_key) {
  const std::string name = CommonNameOf(X509_get_subject_name(ca_cert));
  if ((X509_get_extension_flags(ca_cert) & EXFLAG_CA) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("certificate \"", name, "\" is not a CA certificate (no basicConstraints CA:TRUE)"));
  }
  if (X509_check_private_key(ca_cert, ca_key) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("the CA key is not the key of CA certificate \"", name, "\""));
  }
  return absl::OkStatus();
}

std::string LowerHex(const unsigned char* data, size_t length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (size_t i = 0; i < length; ++i) {
    hex.push_back(kDigits[data[i] >> 4]);
    hex.push_back(kDigits[data[i] & 0xf]);
  }
  return hex;
}

}  // namespace

absl::StatusOr<std::string> NewPrivateKeyPem() {
  ErrorQueueScope errors;
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (key == nullptr) return InternalOpenSslError("generating a P-256 key");
  // PEM_write_bio_PrivateKey writes PKCS#8 ("BEGIN PRIVATE KEY") in OpenSSL 3.
  return WritePem(
      [&](BIO* bio) { return PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr); },
      "private key");
}

absl::StatusOr<std::string> SelfSignedCertificatePem(const std::string& key_pem, const CertificateSpec& spec) {
  ErrorQueueScope errors;
  absl::StatusOr<PkeyPtr> key = LoadPrivateKey(key_pem, "key");
  if (!key.ok()) return key.status();
  return BuildCertificate(key->get(), spec, /*issuer_cert=*/nullptr, key->get());
}

absl::StatusOr<std::string> IssueCertificatePem(const std::string& subject_public_or_private_key_pem,
                                                const CertificateSpec& spec, const std::string& ca_cert_pem,
                                                const std::string& ca_key_pem) {
  ErrorQueueScope errors;
  absl::StatusOr<PkeyPtr> subject_key = LoadPrivateOrPublicKey(subject_public_or_private_key_pem, "subject key");
  if (!subject_key.ok()) return subject_key.status();
  if (absl::Status s = CheckKeyStrength(subject_key->get(), "subject key"); !s.ok()) return s;
  absl::StatusOr<X509Ptr> ca_cert = LoadCertificate(ca_cert_pem, "CA certificate");
  if (!ca_cert.ok()) return ca_cert.status();
  absl::StatusOr<PkeyPtr> ca_key = LoadPrivateKey(ca_key_pem, "CA key");
  if (!ca_key.ok()) return ca_key.status();
  if (absl::Status s = CheckIssuer(ca_cert->get(), ca_key->get()); !s.ok()) return s;
  return BuildCertificate(subject_key->get(), spec, ca_cert->get(), ca_key->get());
}

absl::StatusOr<std::string> NewCsrPem(const std::string& key_pem, const std::string& common_name) {
  ErrorQueueScope errors;
  if (absl::Status s = ValidateCommonName(common_name); !s.ok()) return s;
  absl::StatusOr<PkeyPtr> key = LoadPrivateKey(key_pem, "key");
  if (!key.ok()) return key.status();
  ReqPtr request(X509_REQ_new());
  if (request == nullptr) return InternalOpenSslError("X509_REQ_new");
  if (X509_REQ_set_version(request.get(), X509_REQ_VERSION_1) != 1) return InternalOpenSslError("X509_REQ_set_version");
  if (X509_NAME_add_entry_by_NID(X509_REQ_get_subject_name(request.get()), NID_commonName, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.data()),
                                 static_cast<int>(common_name.size()), -1, 0) != 1) {
    return OpenSslError(absl::StatusCode::kInvalidArgument,
                        absl::StrCat("common name \"", common_name, "\" is not accepted"));
  }
  if (X509_REQ_set_pubkey(request.get(), key->get()) != 1) return InternalOpenSslError("X509_REQ_set_pubkey");
  if (X509_REQ_sign(request.get(), key->get(), EVP_sha256()) <= 0) return InternalOpenSslError("signing the CSR");
  return WritePem([&](BIO* bio) { return PEM_write_bio_X509_REQ(bio, request.get()); }, "CSR");
}

absl::StatusOr<CsrInfo> ParseCsr(const std::string& csr_pem) {
  ErrorQueueScope errors;
  absl::StatusOr<BioPtr> bio = ReadOnlyBio(csr_pem);
  if (!bio.ok()) return bio.status();
  ReqPtr request(PEM_read_bio_X509_REQ(bio->get(), nullptr, NoPassphrase, nullptr));
  if (request == nullptr) {
    return OpenSslError(absl::StatusCode::kInvalidArgument, "CSR is not a PEM certificate request");
  }
  EVP_PKEY* key = X509_REQ_get0_pubkey(request.get());
  if (key == nullptr) return OpenSslError(absl::StatusCode::kInvalidArgument, "CSR has no readable public key");
  if (X509_REQ_verify(request.get(), key) != 1) {
    return OpenSslError(absl::StatusCode::kInvalidArgument,
                        "CSR signature does not verify with its own public key (altered or forged)");
  }
  CsrInfo info;
  info.common_name = CommonNameOf(X509_REQ_get_subject_name(request.get()));
  absl::StatusOr<std::string> public_key_pem =
      WritePem([&](BIO* out) { return PEM_write_bio_PUBKEY(out, key); }, "CSR public key");
  if (!public_key_pem.ok()) return public_key_pem.status();
  info.public_key_pem = *std::move(public_key_pem);
  return info;
}

absl::StatusOr<std::string> SignCsrPem(const std::string& csr_pem, const CertificateSpec& spec,
                                       const std::string& ca_cert_pem, const std::string& ca_key_pem) {
  absl::StatusOr<CsrInfo> csr = ParseCsr(csr_pem);
  if (!csr.ok()) return csr.status();
  return IssueCertificatePem(csr->public_key_pem, spec, ca_cert_pem, ca_key_pem);
}

absl::StatusOr<CertificateInfo> ParseCertificate(const std::string& cert_pem) {
  ErrorQueueScope errors;
  absl::StatusOr<X509Ptr> loaded = LoadCertificate(cert_pem, "certificate");
  if (!loaded.ok()) return loaded.status();
  X509* cert = loaded->get();

  CertificateInfo info;
  info.common_name = CommonNameOf(X509_get_subject_name(cert));
  info.issuer_common_name = CommonNameOf(X509_get_issuer_name(cert));

  const ASN1_INTEGER* serial = X509_get0_serialNumber(cert);
  if (serial == nullptr) return absl::InvalidArgumentError("certificate has no serial number");
  // OpenSSL keeps an INTEGER as its magnitude's big-endian bytes plus a sign in the type.
  info.serial_hex = absl::StrCat(ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER ? "-" : "",
                                 LowerHex(ASN1_STRING_get0_data(serial), static_cast<size_t>(ASN1_STRING_length(serial))));

  absl::StatusOr<absl::Time> not_before = FromAsn1Time(X509_get0_notBefore(cert), "notBefore");
  if (!not_before.ok()) return not_before.status();
  absl::StatusOr<absl::Time> not_after = FromAsn1Time(X509_get0_notAfter(cert), "notAfter");
  if (!not_after.ok()) return not_after.status();
  info.not_before = *not_before;
  info.not_after = *not_after;

  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_length = 0;
  if (X509_digest(cert, EVP_sha256(), digest, &digest_length) != 1) return InternalOpenSslError("X509_digest");
  info.sha256_fingerprint_hex = LowerHex(digest, digest_length);

  const uint32_t flags = X509_get_extension_flags(cert);
  if ((flags & EXFLAG_INVALID) != 0) {
    return OpenSslError(absl::StatusCode::kInvalidArgument, "certificate has malformed extensions");
  }
  info.is_ca = (flags & EXFLAG_CA) != 0;

  int critical = 0;
  GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, &critical, nullptr)));
  if (names != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
      if (name->type == GEN_DNS) {
        const ASN1_IA5STRING* dns = name->d.dNSName;
        info.subject_alt_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                            static_cast<size_t>(ASN1_STRING_length(dns)));
      } else if (name->type == GEN_IPADD) {
        const ASN1_OCTET_STRING* address = name->d.iPAddress;
        const int length = ASN1_STRING_length(address);
        char text[INET6_ADDRSTRLEN] = {};
        if ((length == 4 && inet_ntop(AF_INET, ASN1_STRING_get0_data(address), text, sizeof text) != nullptr) ||
            (length == 16 && inet_ntop(AF_INET6, ASN1_STRING_get0_data(address), text, sizeof text) != nullptr)) {
          info.subject_alt_names.emplace_back(text);
        }
      }
    }
  }
  return info;
}

absl::Status VerifyCertificate(const std::string& cert_pem, const std::string& ca_pem, absl::Time at) {
  ErrorQueueScope errors;
  absl::StatusOr<X509Ptr> cert = LoadCertificate(cert_pem, "certificate");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<X509Ptr> ca = LoadCertificate(ca_pem, "CA certificate");
  if (!ca.ok()) return ca.status();

  StorePtr store(X509_STORE_new());
  if (store == nullptr || X509_STORE_add_cert(store.get(), ca->get()) != 1) {
    return InternalOpenSslError("building the trust store");
  }
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (ctx == nullptr || X509_STORE_CTX_init(ctx.get(), store.get(), cert->get(), nullptr) != 1) {
    return InternalOpenSslError("X509_STORE_CTX_init");
  }
  X509_STORE_CTX_set_time(ctx.get(), 0, absl::ToTimeT(at));
  if (X509_verify_cert(ctx.get()) == 1) return absl::OkStatus();

  const int error = X509_STORE_CTX_get_error(ctx.get());
  const int depth = X509_STORE_CTX_get_error_depth(ctx.get());
  const std::string cert_name = CommonNameOf(X509_get_subject_name(cert->get()));
  const std::string issuer_name = CommonNameOf(X509_get_issuer_name(cert->get()));
  const std::string ca_name = CommonNameOf(X509_get_subject_name(ca->get()));
  // The failing certificate: the one checked, or (depth > 0) the CA itself.
  X509* failing = X509_STORE_CTX_get_current_cert(ctx.get());
  if (failing == nullptr) failing = depth == 0 ? cert->get() : ca->get();
  const std::string who = depth == 0 ? absl::StrCat("certificate \"", cert_name, "\"")
                                     : absl::StrCat("CA certificate \"", CommonNameOf(X509_get_subject_name(failing)), "\"");

  std::string reason;
  switch (error) {
    case X509_V_ERR_CERT_HAS_EXPIRED: {
      absl::StatusOr<absl::Time> not_after = FromAsn1Time(X509_get0_notAfter(failing), "notAfter");
      reason = absl::StrCat(who, " expired", not_after.ok() ? absl::StrCat(" at ", FormatUtc(*not_after)) : "");
      break;
    }
    case X509_V_ERR_CERT_NOT_YET_VALID: {
      absl::StatusOr<absl::Time> not_before = FromAsn1Time(X509_get0_notBefore(failing), "notBefore");
      reason = absl::StrCat(who, " is not yet valid",
                            not_before.ok() ? absl::StrCat(" (valid from ", FormatUtc(*not_before), ")") : "");
      break;
    }
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_AKID_SKID_MISMATCH:
    case X509_V_ERR_SUBJECT_ISSUER_MISMATCH:
      reason = absl::StrCat(who, " (issuer \"", issuer_name, "\") is not issued by this CA (\"", ca_name, "\")");
      break;
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      reason = absl::StrCat(who, ": signature does not verify with the key of CA \"", ca_name, "\"");
      break;
    default:
      reason = absl::StrCat(who, " does not verify against CA \"", ca_name, "\"");
      break;
  }
  return absl::UnauthenticatedError(absl::StrCat(reason, " at ", FormatUtc(at), " (OpenSSL: ",
                                                 X509_verify_cert_error_string(error), ")"));
}

absl::Status CheckKeyMatchesCertificate(const std::string& key_pem, const std::string& cert_pem) {
  ErrorQueueScope errors;
  absl::StatusOr<PkeyPtr> key = LoadPrivateKey(key_pem, "key");
  if (!key.ok()) return key.status();
  absl::StatusOr<X509Ptr> cert = LoadCertificate(cert_pem, "certificate");
  if (!cert.ok()) return cert.status();
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("the private key is not the key of certificate \"",
                                                   CommonNameOf(X509_get_subject_name(cert->get())), "\""));
  }
  return absl::OkStatus();
}

}  // namespace benchfleet::tls
