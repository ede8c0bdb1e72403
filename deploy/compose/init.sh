#!/bin/sh
# The compose file's one-shot `init` service: creates, once, the secrets the other services read
# from their volumes, each readable only by the user of the service that needs it. Run again, it
# changes nothing. Never prints a secret.
set -eu
umask 077

# 32 random bytes as 43 base64url characters (the tokens' form: coordinator/auth/README.md).
random43() { head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' | cut -c1-43; }

c=/secrets/coordinator
if [ ! -f "$c/tls/server.pem" ]; then
  names=""
  for n in $BENCHFLEET_SERVER_NAMES; do names="$names --server-name $n"; done
  # shellcheck disable=SC2086
  benchfleet-coordinator ca init --out "$c/tls" $names
  echo "init: fleet CA and server certificate for: $BENCHFLEET_SERVER_NAMES"
fi
if [ ! -f "$c/operator-token" ]; then
  printf 'bft_%s\n' "$(random43)" > "$c/operator-token"
  echo "init: operator token written (docker compose exec coordinator cat /run/benchfleet/operator-token)"
fi

p=/secrets/postgres
if [ ! -f "$p/postgres-password" ]; then
  random43 > "$p/postgres-password"
  random43 > "$p/grafana-pg-password"
fi
printf 'postgresql://benchfleet:%s@postgres:5432/benchfleet?sslmode=disable\n' \
  "$(cat "$p/postgres-password")" > "$c/database-url"
cp "$p/grafana-pg-password" /secrets/grafana/grafana-pg-password
# Grafana's admin (user admin): docker compose exec grafana cat /run/benchfleet/admin-password
[ -f /secrets/grafana/admin-password ] || random43 > /secrets/grafana/admin-password
cp "$c/tls/ca.pem" /secrets/fleet-ca/ca.pem

# Owners: coordinator and agent images run as 10001, postgres as 999, grafana as 472.
chown -R 10001:10001 "$c" /secrets/fleet-ca /secrets/agent-enroll
chmod 0644 /secrets/fleet-ca/ca.pem
chmod 0755 /secrets/fleet-ca
chown -R 999:999 "$p"
chown -R 472:0 /secrets/grafana
