#include "common/record_csv.h"

#include "gtest/gtest.h"

namespace benchfleet {
namespace {

v1::RunRecord Warm(const std::string& id, int call, double tps) {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_agent_id("a1");
  r.set_backend("llama-server");
  r.set_task("qwen");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(call);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(tps);
  m->set_unit("tokens/s");
  r.set_simulated(true);
  r.mutable_start_time()->set_seconds(1767225600);
  r.mutable_wall_duration()->set_seconds(2);
  r.mutable_wall_duration()->set_nanos(500000000);
  return r;
}

TEST(RecordCsvTest, OneRowPerRunWithOneColumnPerMetric) {
  auto a = Warm("id-1", 1, 52.9);
  auto b = Warm("id-2", 2, 30.0);
  auto* mem = b.add_memory();
  mem->set_kind(v1::MEMORY_KIND_DEVICE_BUFFER);
  mem->set_scope("CUDA0");
  mem->set_bytes(1024);
  (*b.mutable_params())["seed"] = "404";
  std::string csv = RunsToCsv({a, b});
  std::string expected_header =
      "run_id,series_id,task_id,agent_id,conditions_fingerprint,backend,task,mode,phase,"
      "call_index,repetition,matrix,start_time,end_time,wall_seconds,status,status_message,flags,"
      "outputs_sha256,simulated,provenance,agent_version,metric:tokens_per_second [tokens/s],"
      "memory:DEVICE_BUFFER:CUDA0 [bytes],param:seed\n";
  ASSERT_EQ(csv.substr(0, expected_header.size()), expected_header);
  std::string rows = csv.substr(expected_header.size());
  EXPECT_EQ(rows,
            "id-1,,,a1,,llama-server,qwen,gpu,warm,1,,,2026-01-01T00:00:00Z,,2.5,ok,,,,SIMULATED,,,"
            "52.9,,\n"
            "id-2,,,a1,,llama-server,qwen,gpu,warm,2,,,2026-01-01T00:00:00Z,,2.5,ok,,,,SIMULATED,,,"
            "30,1024,404\n");
}

TEST(RecordCsvTest, QuotesFieldsThatNeedIt) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
}

TEST(RecordCsvTest, TimestampsAreRfc3339Utc) {
  google::protobuf::Timestamp ts;
  ts.set_seconds(1767225600);
  ts.set_nanos(500000000);
  EXPECT_EQ(FormatTimestamp(ts), "2026-01-01T00:00:00.5Z");
  EXPECT_EQ(FormatTimestamp(google::protobuf::Timestamp()), "");
}

}  // namespace
}  // namespace benchfleet
