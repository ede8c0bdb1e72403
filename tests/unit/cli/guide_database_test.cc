// `benchfleet guide --database-url`: ReadRecordsFromDatabase (synthesis/readers/database_reader.h)
// on a throwaway database with the coordinator's schema and rows written by its store, and the
// COPY text it reads. The PostgreSQL tests need BENCHFLEET_TEST_DATABASE_URL (scripts/test).
#include "synthesis/readers/database_reader.h"

#include <limits>
#include <set>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/time/time.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_run_store.h"
#include "coordinator/store/reader_queries.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kStart = 1767225600;  // 2026-01-01T00:00:00Z

TEST(UnescapeCopyTextTest, UndoesEveryEscapeOfTheTextFormat) {
  std::string line = R"({"a": "x\\\\y\\n", "t": "\t"} \101\x41\\)";
  UnescapeCopyText(&line);
  EXPECT_EQ(line, "{\"a\": \"x\\\\y\\n\", \"t\": \"\t\"} AA\\");
  std::string plain = R"({"run_id": "r1"})";
  UnescapeCopyText(&plain);
  EXPECT_EQ(plain, R"({"run_id": "r1"})");
  std::string controls = R"(\b\f\r\v\n)";
  UnescapeCopyText(&controls);
  EXPECT_EQ(controls, "\b\f\r\v\n");
}

TEST(RecordsCopySqlTest, SelectsTheRecordColumnWithTheFilters) {
  EXPECT_EQ(coordinator::RecordsCopySql({}, std::nullopt),
            "COPY (SELECT record_pb, CASE WHEN record_pb IS NULL THEN record END FROM runs) TO STDOUT");
  EXPECT_EQ(coordinator::RecordsCopySql({"'a'", "'it''s'"}, absl::FromUnixSeconds(kStart)),
            "COPY (SELECT record_pb, CASE WHEN record_pb IS NULL THEN record END FROM runs "
            "WHERE task IN ('a', 'it''s') AND "
            "start_time >= '2026-01-01T00:00:00Z'::timestamptz) TO STDOUT");
}

v1::RunRecord Record(const std::string& run_id, const std::string& task, int64_t start_seconds,
                     const std::string& fingerprint) {
  v1::RunRecord r;
  r.set_run_id(run_id);
  r.set_series_id("s1");
  r.set_task_id("t1");
  r.set_agent_id("agent-1");
  r.set_conditions_fingerprint(fingerprint);
  r.set_backend("llama-server");
  r.set_task(task);
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(1);
  if (start_seconds > 0) r.mutable_start_time()->set_seconds(start_seconds);
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_unit("tokens/s");
  m->set_value(50.5);
  (*r.mutable_params())["prompt"] = "line one\nline \"two\"\t\\ end";  // escaped by COPY and JSON
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  return r;
}

class DatabaseReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BENCHFLEET_REQUIRE_PG(db_);
    ASSERT_TRUE(coordinator::Migrate(db_.url()).ok());
    store_ = coordinator::NewPgRunStore({db_.url()});
    for (const char* host : {"host-a", "host-b"}) {
      coordinator::MachineUpdate update;
      update.agent_id = std::string("agent-") + host;
      update.agent_version = "0.1.0";
      update.conditions.set_hostname(host);
      update.conditions.set_fingerprint(std::string("fp-") + host);
      update.seen = absl::FromUnixSeconds(kStart);
      ASSERT_TRUE(store_->UpsertMachine(update).ok());
    }
    records_ = {Record("00000000-0000-4000-8000-00000000000c", "llama", kStart + 20, "fp-host-a"),
                Record("00000000-0000-4000-8000-00000000000A", "llama", kStart + 10, "fp-host-a"),
                Record("00000000-0000-4000-8000-00000000000b", "it's", kStart + 10, "fp-host-b"),
                Record("00000000-0000-4000-8000-00000000000d", "llama", 0, "fp-host-a")};
    coordinator::PreparedRuns prepared;
    for (const auto& r : records_) ASSERT_TRUE(store_->PrepareRun(r, &prepared).ok());
    const coordinator::PreparedRuns* groups[] = {&prepared};
    auto stored = store_->StoreRuns(groups);
    ASSERT_TRUE(stored.ok()) << stored.status();
  }

  static std::vector<std::string> RunIds(const ReadResult& read) {
    std::vector<std::string> ids;
    for (const auto& r : read.records) ids.push_back(r.run_id());
    return ids;
  }

  testing::PgTestDb db_;
  std::unique_ptr<coordinator::RunStore> store_;
  std::vector<v1::RunRecord> records_;
};

TEST_F(DatabaseReaderTest, ReadsEveryRecordOldestFirstWithItsConditions) {
  auto read = ReadRecordsFromDatabase(db_.url(), {});
  ASSERT_TRUE(read.ok()) << read.status();
  // No start first, then by start_time, then by run id as PostgreSQL orders uuids (lower case).
  EXPECT_THAT(RunIds(*read), ElementsAre("00000000-0000-4000-8000-00000000000d", "00000000-0000-4000-8000-00000000000A",
                                         "00000000-0000-4000-8000-00000000000b", "00000000-0000-4000-8000-00000000000c"));
  EXPECT_EQ(read->records[1].SerializeAsString(), records_[1].SerializeAsString());
  EXPECT_TRUE(read->skipped.empty());
  ASSERT_EQ(read->conditions.size(), 2u);
  EXPECT_EQ(read->conditions.at("fp-host-a").hostname(), "host-a");
  EXPECT_EQ(read->conditions.at("fp-host-b").hostname(), "host-b");
}

TEST_F(DatabaseReaderTest, AsRowsTheSameRunsComeInTheSameOrder) {
  auto copied = ReadRecordsFromDatabase(db_.url(), {});
  ASSERT_TRUE(copied.ok()) << copied.status();
  RunRows rows;
  auto read = ReadRecordsFromDatabase(db_.url(), {}, &rows);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->records.empty());
  ASSERT_EQ(rows.rows.size(), 4u);
  EXPECT_EQ(rows.stores.size(), 1u);  // one batch of rows
  RunRowStore expected;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(DebugString(*rows.rows[i]), DebugString(*expected.Add(copied->records[i]))) << i;
  }
  EXPECT_TRUE(read->skipped.empty());
  ASSERT_EQ(read->conditions.size(), 2u);
  EXPECT_EQ(read->conditions.at("fp-host-a").hostname(), "host-a");
}

TEST_F(DatabaseReaderTest, SelectsByTaskAndSinceInSql) {
  auto read = ReadRecordsFromDatabase(db_.url(), {{"it's"}, std::nullopt});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(RunIds(*read), ElementsAre("00000000-0000-4000-8000-00000000000b"));
  ASSERT_EQ(read->conditions.size(), 1u);
  EXPECT_EQ(read->conditions.begin()->first, "fp-host-b");

  read = ReadRecordsFromDatabase(db_.url(), {{"llama"}, absl::FromUnixSeconds(kStart + 11)});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(RunIds(*read), ElementsAre("00000000-0000-4000-8000-00000000000c"));

  read = ReadRecordsFromDatabase(db_.url(), {{"flux"}, std::nullopt});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->records.empty());
  EXPECT_TRUE(read->conditions.empty());
}

TEST_F(DatabaseReaderTest, RowsWithoutBinaryCopyAreReadFromTheJson) {
  // Rows stored before migration 0003 (or with a NUL, before 0007) have record_pb NULL and their
  // record in JSON only: the same records come from `record`. The store writes only record_pb.
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs WHERE record_pb IS NOT NULL AND record IS NULL"), "4");
  auto from_binary = ReadRecordsFromDatabase(db_.url(), {});
  ASSERT_TRUE(from_binary.ok()) << from_binary.status();
  ASSERT_EQ(db_.FillRecordJson(), 4);
  db_.QueryValue("UPDATE runs SET record_pb = NULL WHERE run_id <> '00000000-0000-4000-8000-00000000000c'");
  auto mixed = ReadRecordsFromDatabase(db_.url(), {});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  ASSERT_EQ(mixed->records.size(), 4u);
  EXPECT_TRUE(mixed->skipped.empty());
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(mixed->records[i].SerializeAsString(), from_binary->records[i].SerializeAsString()) << i;
  }
}

TEST_F(DatabaseReaderTest, AnUnreadableBinaryCopyIsSkippedWithItsRow) {
  // Field 1 (run_id) announcing 127 bytes that are not there.
  db_.QueryValue("UPDATE runs SET record_pb = '\\x0a7f'::bytea WHERE run_id = '00000000-0000-4000-8000-00000000000b'");
  auto read = ReadRecordsFromDatabase(db_.url(), {{"it's"}, std::nullopt});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->records.empty());
  ASSERT_EQ(read->skipped.size(), 1u);
  EXPECT_EQ(read->skipped[0].path, "database");
  EXPECT_EQ(read->skipped[0].line, 1u);
  EXPECT_EQ(read->skipped[0].reason, "unreadable record: record_pb is not a RunRecord");
}

TEST_F(DatabaseReaderTest, AnUnreadableRecordIsSkippedWithItsRow) {
  db_.QueryValue("UPDATE runs SET record_pb = NULL, record = '{\"call_index\": \"three\"}' "
                 "WHERE run_id = '00000000-0000-4000-8000-00000000000b'");
  auto read = ReadRecordsFromDatabase(db_.url(), {{"it's"}, std::nullopt});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->records.empty());
  ASSERT_EQ(read->skipped.size(), 1u);
  EXPECT_EQ(read->skipped[0].path, "database");
  EXPECT_EQ(read->skipped[0].line, 1u);
  EXPECT_THAT(read->skipped[0].reason, HasSubstr("unreadable record: "));
}

TEST_F(DatabaseReaderTest, AStoredRecordPastABoundIsSkippedWithItsRowAsMessagesAndAsRows) {
  // Stored before the coordinator checked the bounds: the store itself takes any value.
  v1::RunRecord huge = Record("00000000-0000-4000-8000-0000000000e1", "bounds", kStart + 30, "fp-host-a");
  huge.set_call_index(4294967295u);
  v1::RunRecord nan = Record("00000000-0000-4000-8000-0000000000e2", "bounds", kStart + 31, "fp-host-a");
  nan.mutable_metrics(0)->set_value(std::numeric_limits<double>::quiet_NaN());
  const v1::RunRecord fine = Record("00000000-0000-4000-8000-0000000000e3", "bounds", kStart + 32, "fp-host-a");
  coordinator::PreparedRuns prepared;
  for (const auto& r : {huge, nan, fine}) ASSERT_TRUE(store_->PrepareRun(r, &prepared).ok());
  const coordinator::PreparedRuns* groups[] = {&prepared};
  ASSERT_TRUE(store_->StoreRuns(groups).ok());

  auto read = ReadRecordsFromDatabase(db_.url(), {{"bounds"}, std::nullopt});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(RunIds(*read), ElementsAre(fine.run_id()));
  // Each with its row in the COPY (rows come in the table's physical order: compared as a set).
  auto described = [](const std::vector<Skipped>& skipped) {
    std::set<std::string> out;
    for (const Skipped& s : skipped) out.insert(s.path + ": " + s.reason);
    return out;
  };
  auto lines = [](const std::vector<Skipped>& skipped) {
    std::set<uint32_t> out;
    for (const Skipped& s : skipped) out.insert(s.line);
    return out;
  };
  const std::set<std::string> expected = {
      "database: outside the record bounds: call_index 4294967295 is over the maximum of 100000",
      "database: outside the record bounds: metric \"tokens_per_second\" is nan, not a finite number"};
  EXPECT_EQ(described(read->skipped), expected);
  EXPECT_EQ(lines(read->skipped).size(), 2u);
  EXPECT_LE(*lines(read->skipped).rbegin(), 3u);

  RunRows rows;
  auto as_rows = ReadRecordsFromDatabase(db_.url(), {{"bounds"}, std::nullopt}, &rows);
  ASSERT_TRUE(as_rows.ok()) << as_rows.status();
  ASSERT_EQ(rows.rows.size(), 1u);
  EXPECT_EQ(rows.rows[0]->run_id, fine.run_id());
  EXPECT_EQ(described(as_rows->skipped), expected);
  EXPECT_EQ(lines(as_rows->skipped), lines(read->skipped));
}

TEST_F(DatabaseReaderTest, AMissingSchemaIsAnInternalErrorSayingWhat) {
  db_.QueryValue("DROP TABLE runs");
  auto read = ReadRecordsFromDatabase(db_.url(), {});
  ASSERT_EQ(read.status().code(), absl::StatusCode::kInternal) << read.status();
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr("the database failed while reading the runs (SQLSTATE 42P01): "));
}

}  // namespace
}  // namespace benchfleet::synthesis
