-- benchfleet_grafana: the read-only PostgreSQL role the Grafana data source "Benchfleet PostgreSQL"
-- logs in as (deploy/grafana/provisioning/datasources/benchfleet.yaml). It may SELECT the tables
-- the dashboards' SQL panels read, and nothing else: no INSERT, UPDATE, DELETE, TRUNCATE, DDL,
-- and no table that is not listed below (schedules, regressions, schema_migrations, ...).
--
-- Run it as the database's owner or a superuser, on the coordinators' database, after the
-- coordinators have migrated it (the tables must exist):
--
--   psql "$BENCHFLEET_DATABASE_URL" -v ON_ERROR_STOP=1 -f deploy/grafana/postgres-readonly-role.sql
--
-- then give the role a password once (kept out of this file and out of Grafana's files):
--
--   psql "$BENCHFLEET_DATABASE_URL" -c '\password benchfleet_grafana'
--
-- Idempotent: run it again after every upgrade that adds a table to the dashboards; it re-grants
-- exactly the list below and revokes anything else granted earlier. Roles are cluster-wide, the
-- grants are per database: run it on each database Grafana reads.
-- Checked by tests/deploy/grafana_sql_test.cc, which runs every dashboard query as this role.

-- One transaction: Grafana never sees the role between the REVOKE and the GRANT below.
BEGIN;

DO $$
BEGIN
  CREATE ROLE benchfleet_grafana LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION
    CONNECTION LIMIT 8;
EXCEPTION
  -- Exists already (unique_violation when another session created it at the same moment).
  WHEN duplicate_object OR unique_violation THEN
    ALTER ROLE benchfleet_grafana LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION
      CONNECTION LIMIT 8;
END
$$;

-- Defence in depth: every transaction of the role is read-only, and a runaway panel query is
-- cancelled instead of loading the coordinators' database.
ALTER ROLE benchfleet_grafana SET default_transaction_read_only = on;
ALTER ROLE benchfleet_grafana SET statement_timeout = '30s';

DO $$
BEGIN
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO benchfleet_grafana', current_database());
END
$$;

GRANT USAGE ON SCHEMA public TO benchfleet_grafana;
REVOKE CREATE ON SCHEMA public FROM benchfleet_grafana;

-- Start from nothing, so that a table dropped from this list loses its grant on the next run.
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM benchfleet_grafana;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM benchfleet_grafana;

-- The tables the dashboards read:
--   runs             each run's figures, flags and record (per-call and per-run panels)
--   machines         hostnames for legends and the `agent` variable
--   run_annotations  operator (INVALIDATED) and regression (REGRESSION) annotations of runs
--   series, tasks    the progress of series on each machine
GRANT SELECT ON TABLE runs, machines, run_annotations, series, tasks TO benchfleet_grafana;

COMMIT;
