-- 0007_lean_row: one copy of each record per row. Until now a row carried the record twice: its
-- JSON form (`record`, jsonb) and its protobuf encoding (`record_pb`, 0003). Storing the JSON cost
-- most of the row's write time (PostgreSQL parses and compresses every jsonb), so from now on:
--
--   record_pb          the record, canonical (RunRecord serialized by protobuf, deterministically).
--                      Readers derive the JSON form when asked: ListRuns (`benchfleet runs`) and the
--                      guide's database reader decode it; SQL that needs more of a record than the
--                      columns below goes through them.
--   record             NULL, except in rows that have no record_pb: those stored before 0003, and
--                      those whose record held a NUL character (stored as JSON only until now).
--
-- and the parts of a record that SQL reads (the dashboards, the baseline query) get small columns of
-- their own, in the proto3 JSON form of record.proto (a value at its default is left out, as in
-- `record`):
--
--   memory             the MemoryFigure list: [{"kind": "MEMORY_KIND_DEVICE_USED", "bytes": "..."}, ...]
--                      (uint64 bytes is a JSON string); NULL when the record has none
--   flag_details       the Flag list: [{"code": "THROUGHPUT_DROP", "reason": "..."}, ...] (the codes
--                      alone are in `flags`); NULL when none
--   headline_figures   the record's Metric list restricted to its headline figures (headline 1, 2,
--                      ...: label, unit, better, value), in the record's order; the main one is also
--                      in headline_*; NULL when none
--   matrix             the matrix point, {"batch_size": "8", ...}; NULL when the record has none
--
-- The indexes are unchanged; each serves a query of the code:
--   runs_pkey              duplicates and conflicts (the group commit's INSERT ... ON CONFLICT)
--   runs_time_idx          ListRuns with no filter, newest first, paged
--   runs_agent_time_idx    ListRuns by machine; the dashboards' per-machine panels
--   runs_series_time_idx   ListRuns by series
--   runs_task_time_idx     ListRuns by task
--   runs_baseline_idx      the baseline of a run (store/pg_fleet_store.cc PointRuns)
--
-- Rows stored before this migration get the four columns from their `record`, and lose `record`
-- where record_pb holds the same record. PostgreSQL rewrites those rows once (their old versions
-- are freed by the next VACUUM).

ALTER TABLE runs
  ALTER COLUMN record DROP NOT NULL,
  ADD COLUMN memory jsonb,
  ADD COLUMN flag_details jsonb,
  ADD COLUMN headline_figures jsonb,
  ADD COLUMN matrix jsonb;

UPDATE runs SET
  memory = NULLIF(record -> 'memory', '[]'::jsonb),
  flag_details = NULLIF(record -> 'flags', '[]'::jsonb),
  headline_figures = (SELECT jsonb_agg(m ORDER BY i)
                      FROM jsonb_array_elements(COALESCE(record -> 'metrics', '[]'::jsonb))
                           WITH ORDINALITY AS e(m, i)
                      WHERE COALESCE((m ->> 'headline')::bigint, 0) > 0),
  matrix = NULLIF(record -> 'matrix', '{}'::jsonb),
  record = CASE WHEN record_pb IS NULL THEN record END
WHERE record IS NOT NULL;

-- Every row keeps its record in one form or the other.
ALTER TABLE runs ADD CONSTRAINT runs_record_stored CHECK (record_pb IS NOT NULL OR record IS NOT NULL);
