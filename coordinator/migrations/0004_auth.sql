-- 0004_auth: who may connect (coordinator/auth/README.md). Secrets are never stored: only the
-- SHA-256 (hex) of each token. Certificates are known by their SHA-256 fingerprint (hex of the DER).

-- One-time (or N-time) tokens an agent trades for its certificate.
CREATE TABLE enrollment_tokens (
  token_sha256 text PRIMARY KEY,
  -- NULL: each use binds the agent id that presents it.
  agent_id text,
  uses_left integer NOT NULL CHECK (uses_left >= 0),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);

-- Every certificate enrollment issued. A presented agent certificate is accepted only when its
-- fingerprint is here, for the same agent, and not revoked.
CREATE TABLE agent_certificates (
  fingerprint_sha256 text PRIMARY KEY,
  agent_id text NOT NULL,
  serial_hex text NOT NULL,
  issued_at timestamptz NOT NULL,
  not_after timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX agent_certificates_agent_idx ON agent_certificates (agent_id);

-- Bearer tokens of people and tools.
CREATE TABLE api_tokens (
  name text PRIMARY KEY,
  role text NOT NULL CHECK (role IN ('viewer', 'operator')),
  token_sha256 text NOT NULL UNIQUE,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);

-- Every change made through the API: who, what, when.
CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  actor text NOT NULL,
  role text NOT NULL,
  action text NOT NULL,
  target text NOT NULL DEFAULT '',
  detail jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at_idx ON audit_log (at);
