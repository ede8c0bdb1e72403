#!/bin/sh
# The compose file's one-shot `grafana-role` service: creates the read-only role Grafana reads the
# records as (deploy/grafana/postgres-readonly-role.sql) once the coordinator has created the
# tables, and sets its password from the generated file. Idempotent.
set -eu
export PGPASSWORD="$(cat /run/benchfleet/postgres-password)"
url="host=postgres port=5432 dbname=benchfleet user=benchfleet"
tries=0
until psql "$url" -qtA -c "SELECT 1 FROM runs LIMIT 0" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "grafana-role: the coordinator has not created the tables after 120 s" >&2
    exit 1
  fi
  sleep 2
done
psql "$url" -q -v ON_ERROR_STOP=1 -f /usr/share/benchfleet/postgres-readonly-role.sql
psql "$url" -q -v ON_ERROR_STOP=1 -v pw="$(cat /run/benchfleet/grafana-pg-password)" <<'SQL'
ALTER ROLE benchfleet_grafana PASSWORD :'pw';
SQL
