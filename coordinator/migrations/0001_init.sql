-- 0001_init: machines, the conditions they measured under, and one row per stored run.
-- Applied once by store/migrator.cc (recorded in schema_migrations); never edit a migration that
-- has shipped: add 0002_*.sql instead.
--
-- runs keeps the queryable fields as columns and the whole record as `record` (the proto3 JSON
-- mapping, field names as in record.proto; fields at their default value are left out, so read
-- figures from `metrics`, not from record->'metrics', where a value of 0 has no "value" key).
-- `metrics` is an object {metric name: value} (the last one when a record repeats a name;
-- non-finite values as null).
--
-- A figure by call index for the machine whose hostname is 'X' (NAME: a metric name as the
-- backend's declaration, agent/backends/<backend>/figures.h, spells it; the run's main figure,
-- whatever its backend, is in the headline_* columns of 0005_headline.sql):
--
--   SELECT r.phase, r.call_index, (r.metrics ->> 'NAME')::double precision AS value
--   FROM runs r JOIN machines m USING (agent_id)
--   WHERE m.hostname = 'X' AND r.metrics ? 'NAME'
--   ORDER BY r.phase, r.call_index, r.start_time;

CREATE TABLE machines (
  agent_id text PRIMARY KEY,
  hostname text NOT NULL,
  labels jsonb NOT NULL DEFAULT '{}',
  agent_version text NOT NULL DEFAULT '',
  -- The latest conditions the agent sent, and their fingerprint.
  conditions_fingerprint text NOT NULL,
  conditions jsonb NOT NULL,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL
);
CREATE INDEX machines_labels_idx ON machines USING gin (labels jsonb_path_ops);
CREATE INDEX machines_hostname_idx ON machines (hostname);

-- Every distinct set of conditions ever reported, so a run's conditions_fingerprint can always be
-- resolved even after its machine moved on to new drivers or labels.
CREATE TABLE conditions (
  fingerprint text PRIMARY KEY,
  conditions jsonb NOT NULL,
  agent_ids text[] NOT NULL DEFAULT '{}',
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL
);

CREATE TABLE runs (
  run_id uuid PRIMARY KEY,
  series_id text NOT NULL,
  task_id text NOT NULL,
  agent_id text NOT NULL,
  conditions_fingerprint text NOT NULL,
  backend text NOT NULL,
  task text NOT NULL,
  mode text NOT NULL,
  phase text NOT NULL,          -- 'validation' | 'cold' | 'warm'
  call_index bigint NOT NULL,   -- bigint: the proto field is uint32
  repetition bigint NOT NULL,
  start_time timestamptz,       -- NULL when the record has none
  end_time timestamptz,
  wall_seconds double precision,
  status text NOT NULL,         -- 'ok' | 'failed'
  simulated boolean NOT NULL,
  provenance text NOT NULL,     -- 'live' | 'FILE:LINE' (read from a file) | 'unspecified'
  agent_version text NOT NULL,
  flags text[] NOT NULL,        -- flag codes, an open set
  metrics jsonb NOT NULL,
  record jsonb NOT NULL,
  ingested_at timestamptz NOT NULL DEFAULT now()
);

-- ListRuns returns newest first (start_time DESC NULLS LAST, run_id DESC) and pages on that key;
-- each selective filter gets the same key after it.
CREATE INDEX runs_time_idx ON runs (start_time DESC NULLS LAST, run_id DESC);
CREATE INDEX runs_agent_time_idx ON runs (agent_id, start_time DESC NULLS LAST, run_id DESC);
CREATE INDEX runs_series_time_idx ON runs (series_id, start_time DESC NULLS LAST, run_id DESC);
CREATE INDEX runs_task_time_idx ON runs (task, start_time DESC NULLS LAST, run_id DESC);
