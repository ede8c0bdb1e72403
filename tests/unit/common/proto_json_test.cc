// JsonToMessage's simdjson fast path (common/proto_json_fast.h) against protobuf's own
// JsonStringToMessage, the reference: every record and conditions file the repository keeps, a
// record with every field kind, and a table of edge cases. Where the fast path reads a text it must
// give exactly protobuf's message; where it does not, JsonToMessage must give protobuf's answer.
#include <dirent.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "common/proto_json.h"
#include "common/proto_json_fast.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace benchfleet {
namespace {

using internal::FastJson;
using internal::FastJsonToMessage;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// protobuf's answer: ok or not, and the message.
template <typename M>
bool Reference(const std::string& json, M* message, bool ignore_unknown_fields) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = ignore_unknown_fields;
  return google::protobuf::util::JsonStringToMessage(json, message, options).ok();
}

// Equal, NaN included (MessageDifferencer compares NaN unequal by default).
bool Same(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  google::protobuf::util::MessageDifferencer d;
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  d.set_field_comparator(&comparator);
  return d.Compare(a, b);
}

// The fast path reads `json` and gives protobuf's message.
template <typename M>
void ExpectReadLikeProtobuf(const std::string& json, bool ignore_unknown_fields = true) {
  M reference, fast;
  ASSERT_TRUE(Reference(json, &reference, ignore_unknown_fields)) << json;
  ASSERT_EQ(FastJsonToMessage(json, &fast, ignore_unknown_fields), FastJson::kParsed) << json;
  EXPECT_TRUE(Same(fast, reference)) << json << "\nfast: " << fast.ShortDebugString()
                                     << "\nprotobuf: " << reference.ShortDebugString();
}

// Whatever the fast path does with `json`, JsonToMessage answers as protobuf does.
template <typename M>
void ExpectAnswerOfProtobuf(const std::string& json, bool ignore_unknown_fields) {
  M reference, fast, answered;
  const bool reference_ok = Reference(json, &reference, ignore_unknown_fields);
  if (FastJsonToMessage(json, &fast, ignore_unknown_fields) == FastJson::kParsed) {
    EXPECT_TRUE(reference_ok) << "the fast path read what protobuf refuses: " << json;
    EXPECT_TRUE(Same(fast, reference)) << json;
  }
  const absl::Status status = JsonToMessage(json, &answered, ignore_unknown_fields);
  EXPECT_EQ(status.ok(), reference_ok) << json << ": " << status;
  if (reference_ok) {
    EXPECT_TRUE(Same(answered, reference)) << json;
  }
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

TEST(ProtoJsonTest, EveryRecordAndConditionsFileOfTheRepositoryReadsAsProtobufReadsIt) {
  const std::string root = BENCHFLEET_SOURCE_DIR;
  int records = 0, conditions = 0;
  for (const std::string dir : {"tests/fixtures/guide"}) {
    DIR* d = opendir((root + "/" + dir).c_str());
    ASSERT_NE(d, nullptr) << dir;
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("series-", 0) != 0) continue;
      const std::string folder = root + "/" + dir + "/" + name;
      for (const std::string& line : Lines(ReadAll(folder + "/runs.jsonl"))) {
        ExpectReadLikeProtobuf<v1::RunRecord>(line);
        ++records;
      }
      const std::string c = ReadAll(folder + "/conditions.json");
      if (!c.empty()) {
        ExpectReadLikeProtobuf<v1::MachineConditions>(c);
        ++conditions;
      }
    }
    closedir(d);
  }
  for (const std::string& line : Lines(ReadAll(root + "/tests/fuzz/corpus/measurement_files/runs-head.jsonl"))) {
    ExpectReadLikeProtobuf<v1::RunRecord>(line);
    ++records;
  }
  EXPECT_GE(records, 30);  // 34 when this was written
  EXPECT_GE(conditions, 4);
}

v1::RunRecord EveryKindOfField() {
  v1::RunRecord r;
  r.set_run_id("0b6f3c52-7d0e-4a1e-9f3a-2c9d7e1b5a40");
  r.set_series_id("s-1");
  r.set_agent_id("agent \"quoted\" \\ and é and \u00e9\n");
  r.set_backend("llama-server");
  r.set_task("chat-7b");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(4294967295u);
  (*r.mutable_params())["seed"] = "42";
  (*r.mutable_params())["prompt"] = "line one\nline two\t\u00fcber";
  (*r.mutable_matrix())["batch_size"] = "8";
  r.mutable_start_time()->set_seconds(1767225600);
  r.mutable_start_time()->set_nanos(123456789);
  r.mutable_end_time()->set_seconds(1767225601);
  r.mutable_wall_duration()->set_seconds(1);
  r.mutable_wall_duration()->set_nanos(5000);
  for (double v : {52.9, 0.0, -1.5e-300, 1e300, std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    v1::Metric* m = r.add_metrics();
    m->set_name("generation_tokens_per_second");
    m->set_value(v);
    m->set_unit("tokens/s");
    m->set_headline(1);
    m->set_percentile(99);
  }
  v1::MemoryFigure* mem = r.add_memory();
  mem->set_scope("device");
  mem->set_bytes(18446744073709551615ull);
  r.add_outputs()->set_sha256("ab");
  r.add_flags()->set_code("THROUGHPUT_DROP");
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_FILE);
  r.mutable_provenance()->set_line(7);
  r.set_simulated(true);
  r.set_repetition(3);
  v1::RequestTiming* t = r.add_requests();
  t->set_latency_seconds(0.25);
  t->add_inter_token_seconds(0.01);
  t->add_inter_token_seconds(0.02);
  t->set_output_tokens(16);
  r.set_task_attempt(2);
  return r;
}

TEST(ProtoJsonTest, ARecordWithEveryKindOfFieldReadsBackInBothSpellingsOfItsNames) {
  const v1::RunRecord r = EveryKindOfField();
  absl::StatusOr<std::string> snake = MessageToJson(r);
  ASSERT_TRUE(snake.ok()) << snake.status();
  ExpectReadLikeProtobuf<v1::RunRecord>(*snake);
  std::string camel;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(r, &camel).ok());
  ASSERT_NE(camel.find("\"runId\""), std::string::npos);
  ExpectReadLikeProtobuf<v1::RunRecord>(camel);
  v1::RunRecord back;
  ASSERT_TRUE(JsonToMessage(*snake, &back).ok());
  EXPECT_TRUE(Same(back, r));
}

TEST(ProtoJsonTest, TheShapesBenchfleetWritesAreReadByTheFastPath) {
  for (const std::string json : {
           R"({})",
           R"({"run_id":"a","phase":"PHASE_COLD","call_index":3})",
           R"({"phase":2})",                                          // an enum by number
           R"({"call_index":"3"})",                                   // a number as a string
           R"({"start_time":"2026-12-06T03:17:56Z"})",
           R"({"start_time":"2026-12-06T03:17:56.5Z"})",
           R"({"start_time":"2026-12-06T04:17:56.000000001+01:00"})",
           R"({"start_time":"2026-12-05T22:47:56-04:30"})",
           R"({"start_time":"0001-01-01T00:00:00Z"})",
           R"({"start_time":"2024-02-29T23:59:59.999999999Z"})",
           R"({"wall_duration":"0s"})",
           R"({"wall_duration":"-0.5s"})",
           R"({"wall_duration":"1.000000001s"})",
           R"({"wall_duration":"315576000000s"})",
           R"({"memory":[{"bytes":"18446744073709551615"},{"bytes":0}]})",
           R"({"metrics":[{"value":"NaN"},{"value":"-Infinity"},{"value":1},{"value":-0.0},{"value":1e-320}]})",
           R"({"params":{},"matrix":{"a":"1","b":""}})",
           R"({"run_id":null,"metrics":null,"params":null,"status":null})",
           R"({"unknown_field":{"deep":[1,2,{"x":null}]},"run_id":"x"})",
           R"(  {"run_id":"x"}  )",
       }) {
    SCOPED_TRACE(json);
    ExpectReadLikeProtobuf<v1::RunRecord>(json);
  }
}

TEST(ProtoJsonTest, EverythingElseIsAnsweredAsProtobufAnswersIt) {
  for (const std::string json : {
           R"({"unknown_field":1})",
           R"({"run_id":"a","run_id":"b"})",
           R"({"run_id":"a","runId":"b"})",
           R"({"phase":"PHASE_NO_SUCH"})",
           R"({"phase":99})",
           R"({"phase":1.0})",
           R"({"call_index":1.0})",
           R"({"call_index":1e2})",
           R"({"call_index":-1})",
           R"({"call_index":4294967296})",
           R"({"call_index":" 3"})",
           R"({"call_index":"+3"})",
           R"({"call_index":"3.0"})",
           R"({"task_attempt":true})",
           R"({"simulated":"true"})",
           R"({"simulated":1})",
           R"({"run_id":1})",
           R"({"metrics":[{"value":"1.5"}]})",
           R"({"metrics":[{"value":"nan"}]})",
           R"({"metrics":[null]})",
           R"({"metrics":{"value":1}})",
           R"({"params":{"a":1}})",
           R"({"params":{"a":null}})",
           R"({"params":{"a":"1","a":"2"}})",
           R"({"params":["a"]})",
           R"({"start_time":"2026-12-06t03:17:56z"})",
           R"({"start_time":"2026-12-06T03:17:56"})",
           R"({"start_time":"2026-02-30T00:00:00Z"})",
           R"({"start_time":"2026-12-06T24:00:00Z"})",
           R"({"start_time":"2026-12-06T03:17:60Z"})",
           R"({"start_time":"2026-12-06T03:17:56.1234567891Z"})",
           R"({"start_time":"2026-12-06T03:17:56.Z"})",
           R"({"start_time":"2026-12-06T03:17:56+0100"})",
           R"({"start_time":"0000-12-31T23:59:59Z"})",
           R"({"start_time":"9999-12-31T23:59:59-01:00"})",
           R"({"start_time":1767225600})",
           R"({"start_time":{"seconds":1}})",
           R"({"wall_duration":"1"})",
           R"({"wall_duration":"1.s"})",
           R"({"wall_duration":"315576000001s"})",
           R"({"wall_duration":"+1s"})",
           R"({"wall_duration":"1e3s"})",
           R"({"wall_duration":"1.0000000001s"})",
           R"({"memory":[{"bytes":-1}]})",
           R"({"memory":[{"bytes":"-1"}]})",
           R"({"memory":[{"bytes":18446744073709551616}]})",
           R"({"run_id":"a")",
           R"({"run_id":"a"} x)",
           R"(["run_id"])",
           R"("run_id")",
           R"()",
           "{\"run_id\":\"\xff\"}",
       }) {
    SCOPED_TRACE(json);
    ExpectAnswerOfProtobuf<v1::RunRecord>(json, /*ignore_unknown_fields=*/false);
    ExpectAnswerOfProtobuf<v1::RunRecord>(json, /*ignore_unknown_fields=*/true);
  }
}

TEST(ProtoJsonTest, AnUnknownFieldIsProtobufsErrorWhenUnknownFieldsAreNotIgnored) {
  v1::RunRecord r;
  EXPECT_EQ(FastJsonToMessage(R"({"no_such":1})", &r, /*ignore_unknown_fields=*/false), FastJson::kNotHandled);
  const absl::Status status = JsonToMessage(R"({"run_id":"x","no_such":1})", &r, /*ignore_unknown_fields=*/false);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("not a valid benchfleet.v1.RunRecord in JSON: "), std::string::npos)
      << status;
  EXPECT_EQ(r.run_id(), "");  // nothing of the fast path's attempt is left
}

}  // namespace
}  // namespace benchfleet
