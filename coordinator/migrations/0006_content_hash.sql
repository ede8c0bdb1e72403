-- 0006_content_hash: the SHA-256 of each run's content, written by the store with the row
-- (coordinator/store/run_rows.h RunContentSha256: the record's deterministic protobuf encoding
-- without `run_id` and `provenance`), so that a run_id re-sent with other content is told from a
-- re-send: the store answers it as a conflict ("conflict: run_id X already stored with different
-- content") instead of "already stored". Rows stored before this migration keep NULL, and a
-- re-send of one of them is a duplicate as before (there is nothing to compare it with).
ALTER TABLE runs ADD COLUMN content_sha256 text;
