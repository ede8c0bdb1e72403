-- 0003_record_pb: a binary copy of each run's record (RunRecord serialized by protobuf), written
-- by the store next to `record` so that bulk readers (`benchfleet guide --database-url`) parse it
-- in about a microsecond instead of the ~35 us the JSON mapping costs. `record` stays the
-- reference form for SQL; rows stored before this migration keep record_pb NULL and readers fall
-- back to `record` for them.
ALTER TABLE runs ADD COLUMN record_pb bytea;
