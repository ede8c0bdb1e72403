-- 0002_fleet: fleet scheduling. A series is one spec fanned out as one task per matching agent;
-- schedules fire series from cron slots; run_annotations and regressions hold what operators and
-- the regression check say about stored runs (the runs themselves are never modified).
--
-- States are the proto enum names without "STATE_" (fleet.proto SeriesStatus / TaskStatus):
-- series: ACTIVE | DONE | CANCELLED; tasks: PENDING | RUNNING | SUCCEEDED | FAILED | REFUSED |
-- LOST | EXPIRED | CANCELLED. Every change to series or tasks sends NOTIFY benchfleet_fleet (payload:
-- the series id) in its own transaction, so other coordinators look again at once.

CREATE TABLE schedules (
  id uuid PRIMARY KEY,
  cron text NOT NULL,            -- 5 fields, UTC
  spec_yaml text NOT NULL,
  source_name text NOT NULL,
  series_name text NOT NULL,
  task text NOT NULL,
  created timestamptz NOT NULL,
  removed timestamptz            -- NULL while the schedule is live
);

CREATE TABLE series (
  id uuid PRIMARY KEY,
  name text NOT NULL,            -- the spec's `series`
  task text NOT NULL,
  backend text NOT NULL,
  spec_yaml text NOT NULL,
  source_name text NOT NULL,
  created timestamptz NOT NULL,
  deadline timestamptz,          -- NULL: none
  retry_max integer NOT NULL DEFAULT 1,  -- retry.max_attempts: sends of one task at most
  state text NOT NULL,
  schedule_id uuid REFERENCES schedules (id),
  slot_time timestamptz          -- the cron slot that fired it
);
CREATE INDEX series_created_idx ON series (created DESC);
CREATE INDEX series_active_idx ON series (state) WHERE state = 'ACTIVE';

CREATE TABLE tasks (
  id uuid PRIMARY KEY,
  series_id uuid NOT NULL REFERENCES series (id),
  agent_id text NOT NULL,
  state text NOT NULL,
  attempt integer NOT NULL DEFAULT 1,
  runs_done bigint NOT NULL DEFAULT 0,
  runs_total bigint NOT NULL DEFAULT 0,
  runs_failed bigint NOT NULL DEFAULT 0,
  phase text NOT NULL DEFAULT '',
  call_index bigint NOT NULL DEFAULT 0,
  last_figure text NOT NULL DEFAULT '',
  message text NOT NULL DEFAULT '',
  lease_expiry timestamptz,      -- RUNNING only
  coordinator_id text NOT NULL DEFAULT '',  -- the coordinator that sent it (holds the agent's stream)
  updated timestamptz NOT NULL,
  flag_counts jsonb NOT NULL DEFAULT '{}',  -- {flag code: runs carrying it}
  -- Cancelled while RUNNING, its agent not told yet: whichever coordinator holds the agent's
  -- stream sends the TaskCancel and clears it.
  cancel_pending boolean NOT NULL DEFAULT false
);
CREATE INDEX tasks_series_idx ON tasks (series_id, agent_id);
CREATE INDEX tasks_open_agent_idx ON tasks (agent_id) WHERE state IN ('PENDING', 'RUNNING');
CREATE INDEX tasks_running_lease_idx ON tasks (lease_expiry) WHERE state = 'RUNNING';

-- A slot is claimed with INSERT ... ON CONFLICT DO NOTHING: exactly one coordinator fires it.
CREATE TABLE schedule_slots (
  schedule_id uuid NOT NULL REFERENCES schedules (id),
  slot_time timestamptz NOT NULL,
  series_id uuid,                -- NULL when no agent matched (the slot still counts as fired)
  claimed_by text NOT NULL,
  claimed timestamptz NOT NULL,
  PRIMARY KEY (schedule_id, slot_time)
);

-- What operators (INVALIDATED) and the regression check (REGRESSION) say about a run; ListRuns
-- and the guide show each as a flag of the run.
CREATE TABLE run_annotations (
  run_id uuid NOT NULL,
  code text NOT NULL,
  reason text NOT NULL,
  created timestamptz NOT NULL,
  PRIMARY KEY (run_id, code)
);

-- One regression verdict per checked run (fleet.proto RegressionVerdict, proto3 JSON).
CREATE TABLE regressions (
  run_id uuid PRIMARY KEY,
  task_id uuid NOT NULL,
  regression boolean NOT NULL,
  verdict jsonb NOT NULL,
  created timestamptz NOT NULL
);
CREATE INDEX regressions_task_idx ON regressions (task_id);

-- The regression baseline reads runs of one task, agent, mode and phase, newest first.
CREATE INDEX runs_baseline_idx ON runs (task, agent_id, mode, phase, start_time DESC);

-- Bumped on every fleet change: a coordinator's Tick() compares it to tell changes made elsewhere.
CREATE SEQUENCE fleet_change_seq;
