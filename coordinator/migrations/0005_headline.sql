-- 0005_headline: the run's main figure as plain columns, so that the dashboards, the CLI and ad-hoc
-- SQL read it without knowing any backend's metric names. Every backend declares its figures once
-- (agent/backends/<backend>/figures.h); the runner stamps that declaration on each Metric of the
-- record (Metric.headline, label, unit, better: record.proto), and the store copies the metric with
-- headline 1 here on every write (store/run_rows.cc), beside `metrics` and `record`.
--
--   headline_label   the figure's name for people: "generation tokens/s", "images/s",
--                    "output tokens/s" (its metric name when the declaration gives no label)
--   headline_unit    its unit: "tokens/s", "images/s", "s", ...
--   headline_value   its value (NULL when not finite)
--   headline_better  'higher' or 'lower': which way is better (NULL when not declared)
--
-- All four are NULL for a run without a main figure: records older than the declarations, a
-- backend that declares none, or a failed run that measured nothing. Rows stored before this
-- migration are not rewritten (their records carry no declaration to read).
--
-- The further headline figures (TTFT p99, mean latency, ...) are in `record`: the elements of
-- record -> 'metrics' whose "headline" is 2, 3, ... (label, unit, better beside "value"; a value
-- of 0 has no "value" key). The main figure of every call of the machine whose hostname is 'X':
--
--   SELECT r.start_time, r.phase, r.call_index, r.headline_label, r.headline_value, r.headline_unit
--   FROM runs r JOIN machines m USING (agent_id)
--   WHERE m.hostname = 'X' AND r.headline_value IS NOT NULL
--   ORDER BY r.phase, r.call_index, r.start_time;

-- Columns without a default: PostgreSQL adds them without rewriting or scanning the table.
ALTER TABLE runs
  ADD COLUMN headline_label text,
  ADD COLUMN headline_unit text,
  ADD COLUMN headline_value double precision,
  ADD COLUMN headline_better text;
