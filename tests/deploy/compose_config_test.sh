#!/usr/bin/env bash
# deploy/compose: Debian's docker-compose validates compose.yaml (`config`: schema, references,
# interpolation), and the files it mounts and builds from exist and say what the README says.
# No container engine runs here, so nothing is built or started (deploy/README.md lists what is
# not verified). With BIN_DIR (this build's programs) and as root, init.sh (the one-shot that
# makes the secrets) also runs here, outside a container, on a temporary folder.
# Exit 77 (skipped) without docker-compose (Debian package docker-compose).
# Usage: compose_config_test.sh SOURCE_DIR [BIN_DIR]
set -euo pipefail
src=$1
bin=${2:-}
dir=$src/deploy/compose
compose=$(command -v docker-compose || true)
if [[ -z "$compose" ]]; then
  echo "SKIP: docker-compose not installed (scripts/setup installs it)"
  exit 77
fi
fail() { echo "FAIL: $*" >&2; exit 1; }

# No variable may be required from the caller's environment: run with an empty one.
rendered=$(cd "$dir" && env -i PATH="$PATH" "$compose" -f compose.yaml config 2>&1) \
  || fail "docker-compose config: $rendered"
[[ "$rendered" != *WARNING* ]] || fail "docker-compose config warned: $rendered"
services=$(cd "$dir" && env -i PATH="$PATH" "$compose" -f compose.yaml config --services | sort | tr '\n' ' ')
[[ "$services" == "agent coordinator enroll grafana grafana-role init postgres prometheus " ]] \
  || fail "services: $services"
volumes=$(cd "$dir" && env -i PATH="$PATH" "$compose" -f compose.yaml config --volumes | sort | tr '\n' ' ')
[[ "$volumes" == *"agent-state"* && "$volumes" == *"postgres-data"* ]] || fail "volumes: $volumes"

# Every file the compose file mounts from the checkout exists.
while read -r rel; do
  [[ -e "$dir/$rel" ]] || fail "compose.yaml mounts $rel, which does not exist"
done < <(grep -oE '^\s+- \.{1,2}/[^:]+' "$dir/compose.yaml" | sed -E 's/^\s+- //')

# Dockerfiles: multi-stage from bookworm, built with CMake, a non-root user at the end.
for f in Dockerfile.coordinator Dockerfile.agent; do
  df=$dir/$f
  [[ $(grep -c '^FROM debian:bookworm' "$df") -eq 2 ]] || fail "$f: not two stages from debian:bookworm"
  grep -q 'cmake --build' "$df" || fail "$f: no cmake build"
  [[ $(grep '^USER ' "$df" | tail -n 1) == "USER 10001:10001" ]] || fail "$f: last USER is not 10001"
  # The runtime stage installs no -dev package and no compiler.
  runtime=$(sed -n '/^FROM debian:bookworm-slim/,$p' "$df")
  ! grep -qE -- '-dev\b|build-essential|cmake' <<<"$runtime" || fail "$f: build tools in the runtime stage"
done

# Secrets never in the compose file itself, the environment or a command line.
! grep -nE 'PASSWORD:|_TOKEN:|bft_[A-Za-z0-9]|postgresql://[^ ]*:[^ ]*@' "$dir/compose.yaml" \
  || fail "a secret in compose.yaml"

# The shell scripts the one-shot services run are valid sh.
for s in init.sh enroll.sh grafana-role.sh; do sh -n "$dir/$s" || fail "$s: syntax"; done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# init.sh, run twice (the second run must change nothing) with /secrets in a temporary folder.
if [[ -n "$bin" && -x "$bin/benchfleet-coordinator" && $(id -u) -eq 0 ]]; then
  s=$tmp/secrets
  mkdir -p "$s"/{coordinator,fleet-ca,postgres,grafana,agent-enroll}
  sed "s#/secrets/#$s/#g" "$dir/init.sh" > "$tmp/init.sh"
  run_init() {
    env -i PATH="$bin:/usr/bin:/bin" BENCHFLEET_SERVER_NAMES="coordinator localhost 127.0.0.1" sh "$tmp/init.sh"
  }
  run_init >"$tmp/init1.log" 2>&1 || { cat "$tmp/init1.log" >&2; fail "init.sh"; }
  for f in coordinator/tls/ca.pem coordinator/tls/ca-key.pem coordinator/tls/server.pem coordinator/tls/server-key.pem \
           coordinator/operator-token coordinator/database-url fleet-ca/ca.pem postgres/postgres-password \
           postgres/grafana-pg-password grafana/grafana-pg-password grafana/admin-password; do
    [[ -s "$s/$f" ]] || fail "init.sh did not write $f"
  done
  grep -qxE 'bft_[A-Za-z0-9_-]{43}' "$s/coordinator/operator-token" || fail "operator token: $(wc -c <"$s/coordinator/operator-token") bytes, not bft_ + 43"
  grep -qxE 'postgresql://benchfleet:[A-Za-z0-9_-]{43}@postgres:5432/benchfleet\?sslmode=disable' "$s/coordinator/database-url" \
    || fail "database-url is not the postgres service's URL"
  [[ $(stat -c '%u %a' "$s/coordinator/operator-token") == "10001 600" ]] || fail "operator-token owner/mode: $(stat -c '%u %a' "$s/coordinator/operator-token")"
  [[ $(stat -c '%u' "$s/postgres/postgres-password") == 999 ]] || fail "postgres-password is not postgres's"
  [[ $(stat -c '%u' "$s/grafana/admin-password") == 472 ]] || fail "admin-password is not grafana's"
  [[ $(stat -c '%u %a' "$s/fleet-ca/ca.pem") == "10001 644" ]] || fail "fleet-ca/ca.pem owner/mode"
  [[ $(ls "$s/fleet-ca") == ca.pem ]] || fail "the agent's volume holds more than ca.pem: $(ls "$s/fleet-ca")"
  cmp -s "$s/fleet-ca/ca.pem" "$s/coordinator/tls/ca.pem" || fail "fleet-ca/ca.pem is not the CA"
  openssl verify -CAfile "$s/coordinator/tls/ca.pem" "$s/coordinator/tls/server.pem" >/dev/null \
    || fail "server.pem is not signed by ca.pem"
  openssl x509 -in "$s/coordinator/tls/server.pem" -noout -ext subjectAltName | grep -q 'DNS:coordinator' \
    || fail "server.pem does not name the coordinator service"
  before=$(cd "$s" && find . -type f -exec sha256sum {} + | sort)
  run_init >"$tmp/init2.log" 2>&1 || { cat "$tmp/init2.log" >&2; fail "init.sh, second run"; }
  [[ "$(cd "$s" && find . -type f -exec sha256sum {} + | sort)" == "$before" ]] || fail "init.sh changed its files on a second run"
  ! grep -qE 'bft_|BEGIN|postgresql://' "$tmp/init1.log" "$tmp/init2.log" || fail "init.sh printed a secret"
else
  echo "note: init.sh not run (needs BIN_DIR with benchfleet-coordinator, and root)"
fi

# Its Prometheus config and the dashboards' rules load with promtool, when there is one.
if command -v promtool >/dev/null; then
  cp "$dir/prometheus.yml" "$tmp/" && cp "$src/deploy/prometheus/rules.yml" "$tmp/"
  promtool check config "$tmp/prometheus.yml" >/dev/null || fail "promtool check config deploy/compose/prometheus.yml"
fi
echo "deploy/compose: docker-compose config passes ($("$compose" version --short 2>/dev/null || echo "?"))"
