// The text forms the store writes (COPY fields, JSON, timestamps, a run's row), URL redaction and
// page tokens: pure functions, no database.
#include <cmath>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "coordinator/store/pg_errors.h"
#include "coordinator/store/pg_run_queries.h"
#include "coordinator/store/pg_text.h"
#include "coordinator/store/proto_json_writer.h"
#include "common/proto_json.h"
#include "coordinator/store/run_rows.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;

TEST(CopyFieldTest, EscapesCopySpecialCharactersAndReplacesNul) {
  std::string out;
  AppendCopyField(std::string("a\\b\tc\nd\re\0f", 11), &out);
  EXPECT_EQ(out, "a\\\\b\\tc\\nd\\re\xEF\xBF\xBD" "f");
}

TEST(JsonTextTest, WritesStringsNumbersAndObjects) {
  std::string s;
  AppendJsonString(std::string("q\"b\\c\x01\0z", 8), &s);
  EXPECT_EQ(s, "\"q\\\"b\\\\c\\u0001\xEF\xBF\xBDz\"");
  std::string n;
  AppendJsonNumber(0.1, &n);
  n += ',';
  AppendJsonNumber(std::nan(""), &n);
  n += ',';
  AppendJsonNumber(-INFINITY, &n);
  EXPECT_EQ(n, "0.1,null,null");
  EXPECT_EQ(JsonStringArray({"a", "b"}), "[\"a\",\"b\"]");
  EXPECT_EQ(JsonStringObject({{"k", "v"}, {"a", "b"}}), "{\"a\":\"b\",\"k\":\"v\"}");
  EXPECT_EQ(TextArrayLiteral({}), "{}");
  EXPECT_EQ(TextArrayLiteral({"a", "b c", "q\"uote", "back\\slash", std::string("n\0ul", 4), "{,}"}),
            "{\"a\",\"b c\",\"q\\\"uote\",\"back\\\\slash\",\"n\xEF\xBF\xBD" "ul\",\"{,}\"}");
}

TEST(JsonTextTest, ReplacesOnlyRealNulEscapes) {
  std::string json = R"({"a":"x\u0000y","b":"\\u0000"})";
  ReplaceJsonNulEscapes(&json);
  EXPECT_EQ(json, R"({"a":"x\ufffdy","b":"\\u0000"})");
}

TEST(TimestamptzTest, IsUtcWithMicroseconds) {
  EXPECT_EQ(TimestamptzLiteral(absl::FromUnixMillis(1767225600500)), "2026-01-01 00:00:00.500000+00");
}

TEST(RedactTest, HidesPasswordsInUrlsAndKeywords) {
  EXPECT_EQ(RedactDatabaseUrl("postgresql://bob:s3cr@t@db:5432/bf?sslmode=require"),
            "postgresql://bob:***@db:5432/bf?sslmode=require");
  EXPECT_EQ(RedactDatabaseUrl("postgresql://bob@db/bf?password=x&sslmode=require"),
            "postgresql://bob@db/bf?password=***&sslmode=require");
  EXPECT_EQ(RedactDatabaseUrl("host=db password='a b' user=bob"), "host=db password=*** user=bob");
  EXPECT_EQ(RedactDatabaseUrl("postgresql://bob@db/bf"), "postgresql://bob@db/bf");
}

TEST(PgStatusTest, MapsSqlstateClasses) {
  EXPECT_EQ(PgStatus("", "storing runs", "server closed the connection\n"),
            absl::UnavailableError("storing runs: server closed the connection"));
  EXPECT_EQ(PgStatus("57P01", "x", "terminating").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(PgStatus("40001", "x", "serialize").code(), absl::StatusCode::kAborted);
  EXPECT_EQ(PgStatus("22P02", "x", "bad").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PgStatus("42P01", "x", "no table"),
            absl::InternalError("x: no table (SQLSTATE 42P01)"));
  EXPECT_TRUE(IsContentError("22P02"));
  EXPECT_TRUE(IsContentError("54000"));
  EXPECT_FALSE(IsContentError("23505"));
  EXPECT_FALSE(IsContentError("08006"));
}

TEST(PageTokenTest, RoundTripsAndRefusesForeignTokens) {
  const std::string id = "0b8e7a9c-1d2e-4f3a-8b4c-5d6e7f8a9b0c";
  absl::StatusOr<PagePosition> p = DecodePageToken(EncodePageToken({1767225600000000, id}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->start_micros, 1767225600000000);
  EXPECT_EQ(p->run_id, id);
  p = DecodePageToken(EncodePageToken({std::nullopt, id}));
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->start_micros.has_value());
  const absl::Status bad = absl::InvalidArgumentError(
      "page_token is not valid: pass the next_page_token of the previous page unchanged");
  EXPECT_EQ(DecodePageToken("garbage").status(), bad);
  EXPECT_EQ(DecodePageToken("r1:12:not-a-uuid").status(), bad);
  EXPECT_EQ(DecodePageToken("r1:x1:" + id).status(), bad);
}

TEST(RunRowTest, WritesEveryColumnInOrder) {
  v1::RunRecord r = testing::MakeRecord(3);
  r.set_run_id("0B8E7A9C-1D2E-4F3A-8B4C-5D6E7F8A9B0C");
  r.set_series_id("tab\there");
  r.clear_end_time();
  r.add_flags()->set_code("CACHE_HIT");
  r.add_flags()->set_code("NEW\"CODE");
  PreparedRuns out;
  ASSERT_TRUE(AppendRunRow(r, &out).ok());
  ASSERT_EQ(out.runs.size(), 1u);
  EXPECT_EQ(out.runs[0].run_id, "0b8e7a9c-1d2e-4f3a-8b4c-5d6e7f8a9b0c");
  EXPECT_EQ(out.runs[0].offset, 0u);
  EXPECT_EQ(out.runs[0].size, out.rows.size());
  ASSERT_EQ(out.rows.back(), '\n');
  std::vector<std::string> fields = absl::StrSplit(out.rows.substr(0, out.rows.size() - 1), '\t');
  ASSERT_EQ(fields.size(), 30u);
  const std::vector<std::string> columns = absl::StrSplit(kRunRowColumns, ", ");
  EXPECT_EQ(columns.size(), 30u);
  EXPECT_THAT(std::vector<std::string>(fields.begin(), fields.begin() + 20),
              ElementsAre("0b8e7a9c-1d2e-4f3a-8b4c-5d6e7f8a9b0c", "tab\\there", "task-1", "agent-1",
                          "fp-1", "llama-server", "chat-7b", "gpu", "warm", "3", "1",
                          "2026-01-01 00:00:03+00", "\\N", "1", "ok", "f",
                          "live", "0.1.0", "{\"CACHE_HIT\",\"NEW\\\\\"CODE\"}",
                          "{\"tokens_per_second\":43}"));
  // record_pb, the one copy of the record: the protobuf encoding as a bytea in COPY text ("\\x"
  // then two hex digits a byte).
  EXPECT_EQ(columns[20], "record_pb");
  std::string expected_pb = "\\\\x";
  for (const char c : r.SerializeAsString()) {
    expected_pb += absl::StrFormat("%02x", static_cast<unsigned char>(c));
  }
  EXPECT_EQ(fields[20], expected_pb);
  // The parts SQL reads, in proto3 JSON: memory (none here), flags, headline figures, matrix.
  EXPECT_THAT(std::vector<std::string>(columns.begin() + 21, columns.begin() + 25),
              ElementsAre("memory", "flag_details", "headline_figures", "matrix"));
  EXPECT_EQ(fields[21], "\\N");
  EXPECT_EQ(fields[22], R"([{"code":"CACHE_HIT"},{"code":"NEW\\"CODE"}])");
  EXPECT_EQ(fields[23], R"([{"name":"tokens_per_second","value":43,"unit":"tokens/s","better":"BETTER_HIGHER",)"
                        R"("headline":1,"label":"output tokens/s"}])");
  EXPECT_EQ(fields[24], "\\N");
  // The main figure its declaration stamped: label, unit, value, which way is better.
  EXPECT_THAT(std::vector<std::string>(fields.begin() + 25, fields.begin() + 29),
              ElementsAre("output tokens/s", "tokens/s", "43", "higher"));
  // content_sha256: what tells a re-send from a conflict; the record's provenance is not in it.
  EXPECT_EQ(fields[29], RunContentSha256(r));
  EXPECT_EQ(fields[29].size(), 64u);
  v1::RunRecord elsewhere = r;
  elsewhere.mutable_provenance()->set_kind(v1::Provenance::KIND_FILE);
  elsewhere.mutable_provenance()->set_file("a/runs.jsonl");
  EXPECT_EQ(RunContentSha256(elsewhere), fields[29]);
  v1::RunRecord other = r;
  other.set_mode("cpu");
  EXPECT_NE(RunContentSha256(other), fields[29]);
  v1::RunRecord with_map = r;  // map entries in either order: the same content
  (*with_map.mutable_params())["a"] = "1";
  (*with_map.mutable_params())["b"] = "2";
  v1::RunRecord reversed = r;
  (*reversed.mutable_params())["b"] = "2";
  (*reversed.mutable_params())["a"] = "1";
  EXPECT_EQ(RunContentSha256(with_map), RunContentSha256(reversed));
  // Without a main figure: four NULLs.
  r.mutable_metrics(0)->set_headline(2);
  PreparedRuns none;
  ASSERT_TRUE(AppendRunRow(r, &none).ok());
  const std::vector<std::string> none_fields = absl::StrSplit(none.rows.substr(0, none.rows.size() - 1), '\t');
  ASSERT_EQ(none_fields.size(), 30u);
  EXPECT_THAT(std::vector<std::string>(none_fields.begin() + 25, none_fields.begin() + 29),
              ElementsAre("\\N", "\\N", "\\N", "\\N"));
}

TEST(RunRowTest, KeepsANulInTheBinaryCopy) {
  // jsonb cannot hold a NUL: the JSON columns read U+FFFD, the record itself keeps the byte.
  v1::RunRecord r = testing::MakeRecord(3);
  r.mutable_status()->set_message(std::string("bad\0byte", 8));
  r.add_flags()->set_reason(std::string("nul\0here", 8));
  (*r.mutable_matrix())["batch_size"] = "8";
  PreparedRuns out;
  ASSERT_TRUE(AppendRunRow(r, &out).ok());
  std::vector<std::string> fields = absl::StrSplit(out.rows.substr(0, out.rows.size() - 1), '\t');
  ASSERT_EQ(fields.size(), 30u);
  ASSERT_EQ(fields[20].substr(0, 3), "\\\\x");
  const std::string bytes = absl::HexStringToBytes(fields[20].substr(3));
  v1::RunRecord back;
  ASSERT_TRUE(back.ParseFromString(bytes));
  EXPECT_EQ(back.status().message(), std::string("bad\0byte", 8));
  EXPECT_EQ(fields[22], R"([{"reason":"nul\\ufffdhere"}])");
  EXPECT_EQ(fields[24], R"({"batch_size":"8"})");
}

TEST(RunRowTest, WritesMemoryAndOnlyTheHeadlineFigures) {
  v1::RunRecord r = testing::MakeRecord(3);
  r.add_metrics()->set_name("no_headline");
  v1::Metric* second = r.add_metrics();
  second->set_name("ttft_p99");
  second->set_headline(2);
  v1::MemoryFigure* memory = r.add_memory();
  memory->set_kind(v1::MEMORY_KIND_DEVICE_USED);
  memory->set_bytes(1u << 30);
  PreparedRuns out;
  ASSERT_TRUE(AppendRunRow(r, &out).ok());
  std::vector<std::string> fields = absl::StrSplit(out.rows.substr(0, out.rows.size() - 1), '\t');
  ASSERT_EQ(fields.size(), 30u);
  EXPECT_EQ(fields[21], R"([{"kind":"MEMORY_KIND_DEVICE_USED","bytes":"1073741824"}])");
  EXPECT_THAT(fields[23], ::testing::HasSubstr(R"(},{"name":"ttft_p99","headline":2}])"));
  EXPECT_THAT(fields[23], ::testing::Not(::testing::HasSubstr("no_headline")));
}

TEST(RunRowTest, RefusesARecordWithoutJsonForm) {
  v1::RunRecord r = testing::MakeRecord();
  r.mutable_start_time()->set_seconds(-62135596801);  // before 0001-01-01
  PreparedRuns out;
  absl::Status status = AppendRunRow(r, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(out.rows.empty());
  EXPECT_TRUE(out.runs.empty());
}

// A record with every kind of field, at least one map entry each (protobuf's own map order is
// not sorted, so byte-for-byte comparisons use one entry; order is checked apart).
v1::RunRecord FullRecord() {
  v1::RunRecord r = testing::MakeRecord(5);
  std::string all_chars;
  for (int c = 1; c < 128; ++c) all_chars.push_back(static_cast<char>(c));
  // Latin-1, C1 controls, formatting characters protobuf escapes, CJK, emoji, a TAG symbol.
  all_chars += "\u00e9\u0085\u00ad\u0600\u200b\u2028\u202e\u2064\ufeff\u4e2d\U0001F600\U000E0041\U0001D173";
  r.set_task(all_chars);
  r.mutable_start_time()->set_nanos(120000);
  r.mutable_end_time()->set_nanos(7);
  r.mutable_wall_duration()->set_seconds(-1);
  r.mutable_wall_duration()->set_nanos(-500000000);
  for (double v : std::initializer_list<double>{0.1, 1e-7, -0.0, 1.2345678901234568e+20, 37.035000000000004, 1e300, 5e-324,
                   std::nan(""), INFINITY, -INFINITY, 0.0}) {
    r.add_metrics()->set_value(v);
  }
  auto* mem = r.add_memory();
  mem->set_kind(static_cast<v1::MemoryKind>(42));  // a kind from a newer agent
  mem->set_bytes(18446744073709551615ull);
  r.add_outputs()->set_size_bytes(1);
  r.set_phase(v1::PHASE_COLD);
  r.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  r.mutable_status()->set_log_tail("line 1\nline 2\t<b>");
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_FILE);
  r.mutable_provenance()->set_line(4294967295u);
  (*r.mutable_params())["seed"] = "42";
  (*r.mutable_matrix())["batch \"size\""] = "8";
  r.set_simulated(true);
  r.add_flags()->set_code("NEW_CODE");
  return r;
}

TEST(ProtoJsonWriterTest, WritesWhatProtobufWrites) {
  for (const v1::RunRecord& r : {testing::MakeRecord(1), FullRecord(), v1::RunRecord()}) {
    std::string fast;
    ASSERT_TRUE(AppendProtoJson(r, &fast).ok());
    absl::StatusOr<std::string> slow = MessageToJson(r);
    ASSERT_TRUE(slow.ok());
    EXPECT_EQ(fast, *slow);
  }
  v1::RunRecord empty_status;
  empty_status.mutable_status();
  std::string json;
  ASSERT_TRUE(AppendProtoJson(empty_status, &json).ok());
  EXPECT_EQ(json, "{\"status\":{}}");
}

TEST(ProtoJsonWriterTest, SortsMapKeysAndReadsBack) {
  v1::RunRecord r = FullRecord();
  (*r.mutable_params())["a"] = "1";
  (*r.mutable_params())["z"] = "2";
  std::string json;
  ASSERT_TRUE(AppendProtoJson(r, &json).ok());
  EXPECT_THAT(json, ::testing::HasSubstr(R"("params":{"a":"1","seed":"42","z":"2"})"));
  // Read back, it is what protobuf's own JSON reads back as (which drops -0.0's sign).
  v1::RunRecord back, expected;
  ASSERT_TRUE(JsonToMessage(json, &back).ok());
  ASSERT_TRUE(JsonToMessage(*MessageToJson(r), &expected).ok());
  ASSERT_TRUE(std::isnan(back.metrics(8).value()));
  back.mutable_metrics()->DeleteSubrange(8, 1);  // NaN != NaN: compare the rest
  expected.mutable_metrics()->DeleteSubrange(8, 1);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, expected));
  EXPECT_EQ(back.params().size(), 3u);
}

TEST(ProtoJsonWriterTest, RefusesTimestampsAndDurationsOutOfRange) {
  v1::RunRecord r;
  r.mutable_start_time()->set_seconds(253402300800);  // 10000-01-01
  std::string json;
  EXPECT_EQ(AppendProtoJson(r, &json),
            absl::InvalidArgumentError(
                "cannot write a Timestamp of 253402300800 s and 0 ns as JSON: out of range"));
  r.Clear();
  r.mutable_wall_duration()->set_seconds(1);
  r.mutable_wall_duration()->set_nanos(-1);
  EXPECT_EQ(AppendProtoJson(r, &json).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace benchfleet::coordinator
