#include <pqxx/connection>
#include <pqxx/result>
#include <pqxx/transaction>

#include "absl/strings/str_cat.h"
#include "coordinator/store/auth_store.h"
#include "coordinator/store/pg_connection_pool.h"
#include "coordinator/store/pg_text.h"

namespace benchfleet::coordinator {

std::string RoleText(v1::Role role) {
  switch (role) {
    case v1::ROLE_VIEWER:
      return "viewer";
    case v1::ROLE_OPERATOR:
      return "operator";
    default:
      return "";
  }
}

v1::Role ParseRole(const std::string& text) {
  if (text == "viewer") return v1::ROLE_VIEWER;
  if (text == "operator") return v1::ROLE_OPERATOR;
  return v1::ROLE_UNSPECIFIED;
}

namespace {

constexpr size_t kMaxConnections = 4;

// The row of a certificate ($1 fingerprint) of an agent ($2) that enrollment issued and nobody revoked.
constexpr char kAcceptedCertificateSql[] =
    "SELECT 1 FROM agent_certificates WHERE fingerprint_sha256 = $1 AND agent_id = $2 AND revoked_at IS NULL";

void InsertCertificate(pqxx::work& tx, const IssuedCertificate& certificate) {
  tx.exec_params(
      "INSERT INTO agent_certificates (fingerprint_sha256, agent_id, serial_hex, issued_at, not_after) "
      "VALUES ($1, $2, $3, $4::timestamptz, $5::timestamptz)",
      certificate.fingerprint_sha256, certificate.agent_id, certificate.serial_hex,
      TimestamptzLiteral(certificate.issued), TimestamptzLiteral(certificate.not_after));
}

class PgAuthStore final : public AuthStore {
 public:
  explicit PgAuthStore(const std::string& database_url) : pool_(database_url, kMaxConnections) {}

  absl::Status CreateEnrollmentToken(const EnrollmentTokenRow& token) override {
    return pool_.Run("storing an enrollment token", [&](pqxx::connection& c) {
      pqxx::work tx(c);
      tx.exec_params(
          "INSERT INTO enrollment_tokens (token_sha256, agent_id, uses_left, created_by, created_at, "
          "expires_at) VALUES ($1, NULLIF($2, ''), $3::integer, $4, $5::timestamptz, $6::timestamptz)",
          token.token_sha256, token.agent_id, token.uses, token.created_by,
          TimestamptzLiteral(token.created), TimestamptzLiteral(token.expires));
      tx.commit();
      return absl::OkStatus();
    });
  }

  absl::Status RedeemEnrollmentToken(const std::string& token_sha256, absl::Time now,
                                     const IssuedCertificate& certificate) override {
    absl::Status verdict = absl::OkStatus();
    absl::Status status = pool_.Run("redeeming an enrollment token", [&](pqxx::connection& c) {
      pqxx::work tx(c);
      // FOR UPDATE: of two agents presenting a token's last use at once, the second sees it used.
      const pqxx::result rows = tx.exec_params(
          "SELECT coalesce(agent_id, ''), uses_left, expires_at <= $2::timestamptz, revoked_at IS NOT NULL "
          "FROM enrollment_tokens WHERE token_sha256 = $1 FOR UPDATE",
          token_sha256, TimestamptzLiteral(now));
      if (rows.empty()) {
        verdict = absl::UnauthenticatedError("unknown enrollment token");
        return absl::OkStatus();
      }
      const std::string bound = rows[0][0].as<std::string>();
      if (rows[0][3].as<bool>()) {
        verdict = absl::UnauthenticatedError("the enrollment token was revoked");
      } else if (rows[0][2].as<bool>()) {
        verdict = absl::UnauthenticatedError("the enrollment token has expired");
      } else if (rows[0][1].as<int>() <= 0) {
        verdict = absl::UnauthenticatedError("the enrollment token has been used");
      } else if (!bound.empty() && bound != certificate.agent_id) {
        verdict = absl::PermissionDeniedError(
            absl::StrCat("the enrollment token is for agent ", bound, ", not ", certificate.agent_id));
      }
      if (!verdict.ok()) return absl::OkStatus();
      tx.exec_params("UPDATE enrollment_tokens SET uses_left = uses_left - 1 WHERE token_sha256 = $1",
                     token_sha256);
      InsertCertificate(tx, certificate);
      tx.commit();
      return absl::OkStatus();
    });
    return status.ok() ? verdict : status;
  }

  absl::Status RecordRenewedCertificate(const std::string& presented_sha256,
                                        const IssuedCertificate& certificate) override {
    bool accepted = false;
    absl::Status status = pool_.Run("recording a renewed agent certificate", [&](pqxx::connection& c) {
      pqxx::work tx(c);
      // FOR UPDATE: RevokeAgent locks the agent's certificates before it revokes them, so it
      // either comes first (this finds the certificate revoked) or waits for this commit and
      // then sees the new certificate too.
      accepted = !tx.exec_params(
                        absl::StrCat(kAcceptedCertificateSql, " FOR UPDATE"),
                        presented_sha256, certificate.agent_id)
                      .empty();
      if (!accepted) return absl::OkStatus();
      InsertCertificate(tx, certificate);
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (!accepted) {
      return absl::UnauthenticatedError(
          absl::StrCat("the certificate of agent ", certificate.agent_id, " was revoked"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<bool> CertificateAccepted(const std::string& fingerprint_sha256,
                                           const std::string& agent_id) override {
    bool accepted = false;
    absl::Status status = pool_.Run("checking an agent certificate", [&](pqxx::connection& c) {
      pqxx::read_transaction tx(c);
      accepted = !tx.exec_params(
                        kAcceptedCertificateSql,
                        fingerprint_sha256, agent_id)
                      .empty();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return accepted;
  }

  absl::StatusOr<int> RevokeAgent(const std::string& agent_id, absl::Time now) override {
    int revoked = 0;
    absl::Status status = pool_.Run("revoking agent " + agent_id, [&](pqxx::connection& c) {
      pqxx::work tx(c);
      // Locked first, in a statement of its own: a renewal in flight (RecordRenewedCertificate)
      // holds one of these rows until it commits, and the UPDATE below, a new statement, then
      // sees the certificate it added.
      tx.exec_params("SELECT 1 FROM agent_certificates WHERE agent_id = $1 AND revoked_at IS NULL FOR UPDATE",
                     agent_id);
      revoked = static_cast<int>(
          tx.exec_params("UPDATE agent_certificates SET revoked_at = $2::timestamptz WHERE agent_id = $1 "
                         "AND revoked_at IS NULL",
                         agent_id, TimestamptzLiteral(now))
              .affected_rows());
      tx.exec_params("UPDATE enrollment_tokens SET revoked_at = $2::timestamptz WHERE agent_id = $1 "
                     "AND revoked_at IS NULL",
                     agent_id, TimestamptzLiteral(now));
      tx.exec_params("SELECT pg_notify($1, $2)", std::string(kAuthChannel), agent_id);
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return revoked;
  }

  absl::Status CreateApiToken(const ApiToken& token, const std::string& token_sha256,
                              const std::string& created_by, absl::Time now) override {
    bool exists = false;
    absl::Status status = pool_.Run("storing API token " + token.name, [&](pqxx::connection& c) {
      pqxx::work tx(c);
      exists = tx.exec_params(
                     "INSERT INTO api_tokens (name, role, token_sha256, created_by, created_at) VALUES "
                     "($1, $2, $3, $4, $5::timestamptz) ON CONFLICT (name) DO NOTHING",
                     token.name, RoleText(token.role), token_sha256, created_by, TimestamptzLiteral(now))
                   .affected_rows() == 0;
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (exists) return absl::AlreadyExistsError(absl::StrCat("a token named ", token.name, " exists"));
    return absl::OkStatus();
  }

  absl::Status PutApiToken(const ApiToken& token, const std::string& token_sha256,
                           const std::string& created_by, absl::Time now) override {
    return pool_.Run("storing API token " + token.name, [&](pqxx::connection& c) {
      pqxx::work tx(c);
      tx.exec_params(
          "INSERT INTO api_tokens (name, role, token_sha256, created_by, created_at) VALUES "
          "($1, $2, $3, $4, $5::timestamptz) ON CONFLICT (name) DO UPDATE SET role = EXCLUDED.role, "
          "token_sha256 = EXCLUDED.token_sha256, revoked_at = NULL",
          token.name, RoleText(token.role), token_sha256, created_by, TimestamptzLiteral(now));
      tx.commit();
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::optional<ApiToken>> FindApiToken(const std::string& token_sha256) override {
    std::optional<ApiToken> found;
    absl::Status status = pool_.Run("checking an API token", [&](pqxx::connection& c) {
      pqxx::read_transaction tx(c);
      const pqxx::result rows = tx.exec_params(
          "SELECT name, role FROM api_tokens WHERE token_sha256 = $1 AND revoked_at IS NULL", token_sha256);
      if (!rows.empty()) found = ApiToken{rows[0][0].as<std::string>(), ParseRole(rows[0][1].as<std::string>())};
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return found;
  }

  absl::Status RevokeApiToken(const std::string& name, absl::Time now) override {
    size_t changed = 0;
    absl::Status status = pool_.Run("revoking API token " + name, [&](pqxx::connection& c) {
      pqxx::work tx(c);
      changed = tx.exec_params(
                      "UPDATE api_tokens SET revoked_at = $2::timestamptz WHERE name = $1 AND revoked_at IS NULL",
                      name, TimestamptzLiteral(now))
                    .affected_rows();
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (changed == 0) return absl::NotFoundError(absl::StrCat("no live token named ", name));
    return absl::OkStatus();
  }

  absl::Status Audit(const AuditRow& row) override {
    return pool_.Run("writing the audit log", [&](pqxx::connection& c) {
      pqxx::work tx(c);
      tx.exec_params(
          "INSERT INTO audit_log (at, actor, role, action, target, detail) VALUES ($1::timestamptz, $2, $3, "
          "$4, $5, $6::jsonb)",
          TimestamptzLiteral(row.at), row.actor, RoleText(row.role), row.action, row.target,
          row.detail_json.empty() ? std::string("{}") : row.detail_json);
      tx.commit();
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::vector<AuditRow>> ListAudit(int limit) override {
    std::vector<AuditRow> rows;
    absl::Status status = pool_.Run("reading the audit log", [&](pqxx::connection& c) {
      pqxx::read_transaction tx(c);
      const pqxx::result result = tx.exec_params(
          "SELECT (extract(epoch FROM at) * 1000000)::bigint, actor, role, action, target, detail::text "
          "FROM audit_log ORDER BY id DESC LIMIT $1::integer",
          limit);
      for (const auto& r : result) {
        AuditRow& row = rows.emplace_back();
        row.at = absl::FromUnixMicros(r[0].as<int64_t>());
        row.actor = r[1].as<std::string>();
        row.role = ParseRole(r[2].as<std::string>());
        row.action = r[3].as<std::string>();
        row.target = r[4].as<std::string>();
        row.detail_json = r[5].as<std::string>();
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return rows;
  }

 private:
  PgConnectionPool pool_;
};

}  // namespace

std::unique_ptr<AuthStore> NewPgAuthStore(const std::string& database_url) {
  return std::make_unique<PgAuthStore>(database_url);
}

}  // namespace benchfleet::coordinator
