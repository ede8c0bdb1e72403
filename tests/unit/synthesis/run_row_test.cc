// RunRow and RunRowStore (synthesis/analysis/run_row.h): every field the guide reads comes over
// from the record, names are stored once per store, and rows stay where they were made.
#include "synthesis/analysis/run_row.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet::synthesis {
namespace {


v1::RunRecord FullRecord() {
  v1::RunRecord r;
  r.set_run_id("00000000-0000-4000-8000-000000000001");
  r.set_series_id("series-1");
  r.set_task("chat-7b");
  r.set_agent_id("agent-a");
  r.set_conditions_fingerprint("fp-a");
  r.set_backend("llama-server");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(3);
  r.set_simulated(true);
  (*r.mutable_params())["temperature"] = "0";
  (*r.mutable_params())["machine"] = "laptop";
  (*r.mutable_params())["class"] = "m1pro";
  (*r.mutable_matrix())["n_predict"] = "128";
  (*r.mutable_matrix())["ctx"] = "4096";
  r.mutable_start_time()->set_seconds(1767225600);
  r.mutable_start_time()->set_nanos(250000000);
  r.mutable_wall_duration()->set_seconds(7);
  r.mutable_wall_duration()->set_nanos(896572395);
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(52.9);
  m->set_unit("tokens/s");
  m = r.add_metrics();
  m->set_name("predicted_n");
  m->set_value(128);
  m->set_unit("tokens");
  auto* mem = r.add_memory();
  mem->set_kind(v1::MEMORY_KIND_DEVICE_BUFFER);
  mem->set_scope("CUDA0");
  mem->set_bytes(1918697472);
  mem->set_source("llama-server log: model buffer size");
  auto* flag = r.add_flags();
  flag->set_code("THROUGHPUT_DROP");
  flag->set_reason("-43 % at call 3");
  r.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  r.mutable_status()->set_message("HTTP 500");
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_FILE);
  r.mutable_provenance()->set_file("logs/server.log");
  r.mutable_provenance()->set_line(42);
  return r;
}

TEST(RunRowTest, EveryFieldTheGuideReadsComesOver) {
  RunRowStore store;
  const v1::RunRecord record = FullRecord();
  const RunRow& row = *store.Add(record);
  EXPECT_EQ(row.run_id, record.run_id());
  EXPECT_EQ(row.series_id, "series-1");
  EXPECT_EQ(row.task, "chat-7b");
  EXPECT_EQ(row.agent_id, "agent-a");
  EXPECT_EQ(row.conditions_fingerprint, "fp-a");
  EXPECT_EQ(row.backend, "llama-server");
  EXPECT_EQ(row.mode, "gpu");
  EXPECT_EQ(row.matrix, "ctx=4096;n_predict=128");  // sorted by key
  EXPECT_EQ(row.matrix, MatrixString(record));
  EXPECT_EQ(row.phase, v1::PHASE_WARM);
  EXPECT_EQ(row.call_index, 3u);
  EXPECT_TRUE(row.simulated);
  EXPECT_TRUE(row.has_start_time);
  EXPECT_EQ(row.start_seconds, 1767225600);
  EXPECT_EQ(row.start_nanos, 250000000);
  EXPECT_TRUE(row.has_wall_duration);
  EXPECT_EQ(row.wall_seconds, 7 + 896572395 / 1e9);  // the same double as the seconds + nanos / 1e9 it replaces
  EXPECT_EQ(row.status, v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(row.status_message, "HTTP 500");
  EXPECT_EQ(row.provenance_kind, v1::Provenance::KIND_FILE);
  EXPECT_EQ(row.provenance_file, "logs/server.log");
  EXPECT_EQ(row.provenance, "logs/server.log:42");
  ASSERT_EQ(row.params.size(), 3u);
  EXPECT_EQ(row.params[0].key, "class");  // sorted by key
  EXPECT_EQ(row.params[1].key, "machine");
  EXPECT_EQ(row.params[2].key, "temperature");
  EXPECT_EQ(row.FindParam("machine"), "laptop");
  EXPECT_EQ(row.FindParam("temperature"), "0");
  EXPECT_EQ(row.FindParam("seed"), std::nullopt);
  ASSERT_EQ(row.metrics.size(), 2u);  // in the record's order
  EXPECT_EQ(row.metrics[0].name, "tokens_per_second");
  EXPECT_EQ(row.metrics[0].unit, "tokens/s");
  EXPECT_EQ(row.metrics[0].value, 52.9);
  EXPECT_EQ(row.metrics[1].name, "predicted_n");
  ASSERT_EQ(row.memory.size(), 1u);
  EXPECT_EQ(row.memory[0].kind, v1::MEMORY_KIND_DEVICE_BUFFER);
  EXPECT_EQ(row.memory[0].scope, "CUDA0");
  EXPECT_EQ(row.memory[0].bytes, 1918697472u);
  EXPECT_EQ(row.memory[0].source, "llama-server log: model buffer size");
  ASSERT_EQ(row.flags.size(), 1u);
  EXPECT_EQ(row.flags[0].code, "THROUGHPUT_DROP");
  EXPECT_EQ(row.flags[0].reason, "-43 % at call 3");
}

TEST(RunRowTest, AnEmptyRecordGivesEmptyFieldsAndTheProvenanceWords) {
  RunRowStore store;
  v1::RunRecord record;
  const RunRow& unknown = *store.Add(record);
  EXPECT_EQ(unknown.provenance, "unknown");
  EXPECT_FALSE(unknown.has_start_time);
  EXPECT_FALSE(unknown.has_wall_duration);
  EXPECT_TRUE(unknown.run_id.empty());
  EXPECT_TRUE(unknown.matrix.empty());
  EXPECT_TRUE(unknown.params.empty());
  EXPECT_TRUE(unknown.metrics.empty());
  record.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  EXPECT_EQ(store.Add(record)->provenance, "live");
}

TEST(RunRowTest, NamesAreStoredOnceAndTheRowsViewTheStoreNotTheRecord) {
  RunRowStore store;
  std::vector<const RunRow*> rows;
  {
    v1::RunRecord record = FullRecord();
    rows.push_back(store.Add(record));
    record.set_run_id("00000000-0000-4000-8000-000000000002");
    rows.push_back(store.Add(record));
    (*record.mutable_params())["temperature"] = "0.7";
    rows.push_back(store.Add(record));
    record.set_task("other");
    rows.push_back(store.Add(record));
    record.set_task("chat-7b");
    rows.push_back(store.Add(record));
  }  // the record is gone: the rows still read
  EXPECT_EQ(rows[1]->run_id, "00000000-0000-4000-8000-000000000002");
  EXPECT_EQ(rows[0]->task.data(), rows[1]->task.data());  // one copy of a name
  EXPECT_EQ(rows[0]->task.data(), rows[4]->task.data());  // also after another value
  EXPECT_EQ(rows[0]->metrics[0].name.data(), rows[4]->metrics[0].name.data());
  EXPECT_EQ(rows[0]->params.data(), rows[1]->params.data());  // the same params: one array
  EXPECT_NE(rows[1]->params.data(), rows[2]->params.data());
  EXPECT_EQ(rows[2]->FindParam("temperature"), "0.7");
  EXPECT_EQ(rows[1]->FindParam("temperature"), "0");
  EXPECT_EQ(rows[3]->task, "other");
  EXPECT_EQ(store.size(), 5u);
}

TEST(RunRowTest, AddFlagAppendsToThatRowOnly) {
  RunRowStore store;
  const v1::RunRecord record = FullRecord();
  RunRow* first = store.Add(record);
  RunRow* second = store.Add(record);
  store.AddFlag(first, "INVALIDATED", "bad cable");
  ASSERT_EQ(first->flags.size(), 2u);
  EXPECT_EQ(first->flags[0].code, "THROUGHPUT_DROP");
  EXPECT_EQ(first->flags[1].code, "INVALIDATED");
  EXPECT_EQ(first->flags[1].reason, "bad cable");
  EXPECT_EQ(second->flags.size(), 1u);
}

TEST(RunRowTest, AddRowsKeepsTheOrderAndSharesTheStoreOnCopy) {
  std::vector<v1::RunRecord> records(3, FullRecord());
  records[1].set_run_id("b");
  records[2].set_run_id("c");
  RunRows rows;
  AddRows(records, &rows);
  AddRows({}, &rows);  // nothing: no store either
  ASSERT_EQ(rows.rows.size(), 3u);
  EXPECT_EQ(rows.stores.size(), 1u);
  const RunRows copy = rows;
  rows = {};
  EXPECT_EQ(copy.rows[1]->run_id, "b");
  EXPECT_EQ(copy.rows[2]->run_id, "c");
  EXPECT_THAT(DebugString(*copy.rows[0]), ::testing::HasSubstr("flag THROUGHPUT_DROP -43 % at call 3"));
}

}  // namespace
}  // namespace benchfleet::synthesis
