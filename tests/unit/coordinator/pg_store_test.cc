// Migrations and PgRunStore against a real PostgreSQL (a fresh database per test): exact row
// counts, duplicates across and within groups, open flag codes, refusals, the documented
// "main figure by call index" query and the headline columns, ListRuns filters and pages, machines.
#include <limits>
#include <pqxx/pqxx>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/conditions_fingerprint.h"
#include "common/proto_json.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_run_store.h"
#include "coordinator/store/run_rows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/pg_test_db.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::vector<StoreOutcome> Outcomes(const absl::StatusOr<std::vector<RunStoreResult>>& results) {
  std::vector<StoreOutcome> out;
  if (!results.ok()) {
    ADD_FAILURE() << results.status();
    return out;
  }
  for (const auto& r : *results) out.push_back(r.outcome);
  return out;
}

PreparedRuns Prepare(const RunStore& store, const std::vector<v1::RunRecord>& records) {
  PreparedRuns runs;
  for (const auto& r : records) EXPECT_TRUE(store.PrepareRun(r, &runs).ok());
  return runs;
}

TEST(MigratorTest, AppliesEachMigrationOnceAndIsIdempotent) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  ASSERT_TRUE(Migrate(db.url()).ok());
  ASSERT_TRUE(Migrate(db.url()).ok());
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM schema_migrations"),
            std::to_string(EmbeddedMigrations().size()));
  EXPECT_EQ(db.QueryValue("SELECT name FROM schema_migrations WHERE version = 1"), "0001_init");
  EXPECT_EQ(db.QueryValue("SELECT string_agg(name, ',' ORDER BY version) FROM schema_migrations"),
            "0001_init,0002_fleet,0003_record_pb,0004_auth,0005_headline,0006_content_hash,0007_lean_row");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM information_schema.tables WHERE table_name IN "
                          "('runs', 'machines', 'conditions')"),
            "3");
}

TEST(MigratorTest, TwoCoordinatorsStartingTogetherApplyEachMigrationOnce) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  absl::Status a, b;
  std::thread first([&] { a = Migrate(db.url()); });
  std::thread second([&] { b = Migrate(db.url()); });
  first.join();
  second.join();
  EXPECT_TRUE(a.ok()) << a;
  EXPECT_TRUE(b.ok()) << b;
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM schema_migrations"),
            std::to_string(EmbeddedMigrations().size()));
  EXPECT_EQ(db.QueryValue("SELECT count(DISTINCT version) FROM schema_migrations"),
            std::to_string(EmbeddedMigrations().size()));
}

TEST(MigratorTest, AFailedMigrationLeavesNothingBehindAndIsNamed) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  const std::vector<Migration> migrations = {
      {1, "0001_ok", "CREATE TABLE a (x int)"},
      {2, "0002_broken", "CREATE TABLE b (x int); SELECT * FROM no_such_table"}};
  absl::Status status = Migrate(db.url(), migrations);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("applying migration 0002_broken: ERROR:  relation \"no_such_table\" does not exist"));
  EXPECT_EQ(db.QueryValue("SELECT string_agg(name, ',') FROM schema_migrations"), "0001_ok");
  EXPECT_EQ(db.QueryValue("SELECT count(*) FROM information_schema.tables WHERE table_name = 'b'"), "0");
}

TEST(MigratorTest, AnUnreachableDatabaseIsUnavailable) {
  absl::Status status = Migrate("postgresql://nobody:secret@127.0.0.1:1/none?connect_timeout=2");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("connecting: "));
  EXPECT_THAT(std::string(status.message()), ::testing::Not(HasSubstr("secret")));
}

TEST(MigratorTest, TheLeanRowMigrationKeepsOneCopyOfEachStoredRecordAndFillsItsColumns) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  std::vector<Migration> before_lean;
  for (const Migration& m : EmbeddedMigrations()) {
    if (m.name != "0007_lean_row") before_lean.push_back(m);
  }
  ASSERT_EQ(before_lean.size() + 1, EmbeddedMigrations().size());
  ASSERT_TRUE(Migrate(db.url(), before_lean).ok());
  // Two rows as 0006's store wrote them: one with both copies, one in JSON only (a NUL).
  v1::RunRecord both = testing::MakeRecord(1);
  both.add_memory()->set_kind(v1::MEMORY_KIND_DEVICE_USED);
  both.mutable_memory(0)->set_bytes(1u << 30);
  both.add_flags()->set_code("THROUGHPUT_DROP");
  both.mutable_flags(0)->set_reason("30.0 tok/s against 52.9");
  (*both.mutable_matrix())["batch_size"] = "8";
  v1::Metric* second = both.add_metrics();
  second->set_name("ttft_p99");
  second->set_headline(2);
  both.add_metrics()->set_name("not_a_headline");
  v1::RunRecord json_only = testing::MakeRecord(2);
  for (const v1::RunRecord* r : {&both, &json_only}) {
    absl::StatusOr<std::string> json = MessageToJson(*r);
    ASSERT_TRUE(json.ok());
    pqxx::connection c(db.url());
    pqxx::nontransaction tx(c);
    tx.exec_params(
        "INSERT INTO runs (run_id, series_id, task_id, agent_id, conditions_fingerprint, backend, task, mode, "
        "phase, call_index, repetition, status, simulated, provenance, agent_version, flags, metrics, record, "
        "record_pb) VALUES ($1, '', '', 'agent-1', 'fp', 'b', 't', 'm', 'warm', 1, 0, 'ok', false, 'live', '', "
        "'{}', '{}', $2::jsonb, $3::bytea)",
        r->run_id(), *json, r == &both ? pqxx::binarystring(r->SerializeAsString()) : pqxx::binarystring(""));
  }
  db.QueryValue("UPDATE runs SET record_pb = NULL WHERE run_id = '" + json_only.run_id() + "'");

  ASSERT_TRUE(Migrate(db.url()).ok());
  const std::string where_both = " FROM runs WHERE run_id = '" + both.run_id() + "'";
  EXPECT_EQ(db.QueryValue("SELECT (record IS NULL AND record_pb IS NOT NULL)::text" + where_both), "true");
  EXPECT_EQ(db.QueryValue("SELECT memory::text" + where_both),
            R"([{"kind": "MEMORY_KIND_DEVICE_USED", "bytes": "1073741824"}])");
  EXPECT_EQ(db.QueryValue("SELECT flag_details ->> 0" + where_both),
            R"({"code": "THROUGHPUT_DROP", "reason": "30.0 tok/s against 52.9"})");
  EXPECT_EQ(db.QueryValue("SELECT string_agg(f ->> 'name', ',') FROM runs, jsonb_array_elements(headline_figures) f "
                          "WHERE run_id = '" + both.run_id() + "'"),
            "tokens_per_second,ttft_p99");
  EXPECT_EQ(db.QueryValue("SELECT matrix::text" + where_both), R"({"batch_size": "8"})");
  const std::string where_json = " FROM runs WHERE run_id = '" + json_only.run_id() + "'";
  EXPECT_EQ(db.QueryValue("SELECT (record IS NOT NULL AND record_pb IS NULL AND memory IS NULL AND matrix IS NULL "
                          "AND flag_details IS NULL)::text" + where_json),
            "true");
  // Neither form can be lost: a row keeps one.
  EXPECT_THROW(db.QueryValue("UPDATE runs SET record = NULL WHERE run_id = '" + json_only.run_id() + "'"),
               pqxx::check_violation);

  // ListRuns reads each from the form its row keeps.
  std::unique_ptr<RunStore> store = NewPgRunStore({db.url()});
  absl::StatusOr<RunPage> page = store->ListRuns({});
  ASSERT_TRUE(page.ok()) << page.status();
  std::map<std::string, std::string> read;
  for (const v1::RunRecord& r : page->runs) read[r.run_id()] = r.SerializeAsString();
  EXPECT_THAT(read, UnorderedElementsAre(::testing::Pair(both.run_id(), both.SerializeAsString()),
                                         ::testing::Pair(json_only.run_id(), json_only.SerializeAsString())));
}

class PgRunStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!db_.available()) GTEST_SKIP() << "BENCHFLEET_TEST_DATABASE_URL is not set";
    ASSERT_TRUE(Migrate(db_.url()).ok());
    store_ = NewPgRunStore({db_.url()});
  }

  absl::StatusOr<std::vector<RunStoreResult>> Store(const std::vector<const PreparedRuns*>& groups) {
    return store_->StoreRuns(groups);
  }

  std::string Count(const std::string& where = "true") {
    return db_.QueryValue("SELECT count(*) FROM runs WHERE " + where);
  }

  void AddMachine(const std::string& agent_id, const std::string& hostname,
                  const std::map<std::string, std::string>& labels, absl::Time seen) {
    MachineUpdate update;
    update.agent_id = agent_id;
    update.agent_version = "0.1.0";
    update.conditions = testing::MakeConditions(hostname, labels);
    update.conditions.set_fingerprint(ConditionsFingerprint(update.conditions));
    update.seen = seen;
    ASSERT_TRUE(store_->UpsertMachine(update).ok());
  }

  testing::PgTestDb db_;
  std::unique_ptr<RunStore> store_;
};

TEST_F(PgRunStoreTest, StoresEachRunOnceAndCountsDuplicates) {
  const std::vector<v1::RunRecord> records = {testing::MakeRecord(1), testing::MakeRecord(2),
                                              testing::MakeRecord(3)};
  const PreparedRuns runs = Prepare(*store_, records);
  EXPECT_THAT(Outcomes(Store({&runs})),
              ElementsAre(StoreOutcome::kStored, StoreOutcome::kStored, StoreOutcome::kStored));
  EXPECT_EQ(Count(), "3");
  EXPECT_THAT(Outcomes(Store({&runs})), ElementsAre(StoreOutcome::kDuplicate, StoreOutcome::kDuplicate,
                                                    StoreOutcome::kDuplicate));
  EXPECT_EQ(Count(), "3");

  // Old and new in one group: the new ones are stored, the old ones reported as duplicates.
  const PreparedRuns mixed = Prepare(*store_, {records[1], testing::MakeRecord(4)});
  EXPECT_THAT(Outcomes(Store({&runs, &mixed})),
              ElementsAre(StoreOutcome::kDuplicate, StoreOutcome::kDuplicate,
                          StoreOutcome::kDuplicate, StoreOutcome::kDuplicate, StoreOutcome::kStored));
  EXPECT_EQ(Count(), "4");
}

TEST_F(PgRunStoreTest, TheSecondOfOneRunIdInAGroupIsADuplicate) {
  v1::RunRecord r = testing::MakeRecord(1);
  v1::RunRecord upper = r;
  for (char& c : *upper.mutable_run_id()) c = static_cast<char>(std::toupper(c));
  const PreparedRuns a = Prepare(*store_, {r, testing::MakeRecord(2)});
  const PreparedRuns b = Prepare(*store_, {upper});
  EXPECT_THAT(Outcomes(Store({&a, &b})),
              ElementsAre(StoreOutcome::kStored, StoreOutcome::kStored, StoreOutcome::kDuplicate));
  EXPECT_EQ(Count(), "2");
}

TEST_F(PgRunStoreTest, ARunIdStoredWithOtherContentIsAConflictAndTheSameContentADuplicate) {
  const v1::RunRecord stored = testing::MakeRecord(1);
  const PreparedRuns first = Prepare(*store_, {stored});
  EXPECT_THAT(Outcomes(Store({&first})), ElementsAre(StoreOutcome::kStored));
  EXPECT_EQ(db_.QueryValue("SELECT content_sha256 FROM runs"), RunContentSha256(stored));

  v1::RunRecord other = stored;  // the same run_id, another figure
  other.mutable_metrics(0)->set_value(99);
  v1::RunRecord reimported = stored;  // the same run read back from a file: the same content
  reimported.mutable_provenance()->set_kind(v1::Provenance::KIND_FILE);
  reimported.mutable_provenance()->set_file("gpu-01/runs.jsonl");
  reimported.mutable_provenance()->set_line(3);
  const v1::RunRecord fresh = testing::MakeRecord(2);
  const PreparedRuns again = Prepare(*store_, {stored, other, reimported, fresh});
  absl::StatusOr<std::vector<RunStoreResult>> results = Store({&again});
  // The first is a duplicate of the stored row; the next two repeat a run_id of the same group:
  // `other` differs from it (a conflict), `reimported` does not (a duplicate).
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Outcomes(results), ElementsAre(StoreOutcome::kDuplicate, StoreOutcome::kConflict,
                                             StoreOutcome::kDuplicate, StoreOutcome::kStored));
  EXPECT_EQ((*results)[1].reason, "conflict: run_id " + stored.run_id() + " already stored with different content");

  // Alone in its group, `other` meets the stored row in the database.
  const PreparedRuns alone = Prepare(*store_, {other, testing::MakeRecord(3)});
  results = Store({&alone});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Outcomes(results), ElementsAre(StoreOutcome::kConflict, StoreOutcome::kStored));
  EXPECT_EQ((*results)[0].reason, "conflict: run_id " + stored.run_id() + " already stored with different content");
  EXPECT_EQ(Count(), "3");
  EXPECT_EQ(db_.QueryValue("SELECT metrics::text FROM runs WHERE run_id = '" + stored.run_id() + "'"),
            "{\"tokens_per_second\": 41}");

  // A row stored before migration 0006 has no hash to compare: a re-send of it is a duplicate.
  EXPECT_EQ(db_.QueryValue("WITH u AS (UPDATE runs SET content_sha256 = NULL RETURNING 1) SELECT count(*) FROM u"),
            "3");
  const PreparedRuns old = Prepare(*store_, {other});
  EXPECT_THAT(Outcomes(Store({&old})), ElementsAre(StoreOutcome::kDuplicate));
}

TEST_F(PgRunStoreTest, AConflictIsFoundAlsoWhenTheGroupIsStoredRowByRow) {
  const v1::RunRecord stored = testing::MakeRecord(1);
  const PreparedRuns first = Prepare(*store_, {stored});
  EXPECT_THAT(Outcomes(Store({&first})), ElementsAre(StoreOutcome::kStored));
  v1::RunRecord other = stored;
  other.set_mode("cpu");
  // A row the database refuses (call_index is not a number) sends the group row by row.
  PreparedRuns runs = Prepare(*store_, {testing::MakeRecord(2)});
  const std::string bad_id = "0b8e7a9c-1d2e-4f3a-8b4c-5d6e7f8a9b0c";
  std::string line = runs.rows;
  line.replace(0, 36, bad_id);
  line.replace(line.find("\twarm\t") + 6, 1, "x");
  runs.runs.push_back({bad_id, runs.rows.size(), line.size()});
  runs.rows += line;
  const PreparedRuns conflicting = Prepare(*store_, {other});
  absl::StatusOr<std::vector<RunStoreResult>> results = Store({&runs, &conflicting});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_THAT(Outcomes(results),
              ElementsAre(StoreOutcome::kStored, StoreOutcome::kRefused, StoreOutcome::kConflict));
  EXPECT_EQ((*results)[2].reason, "conflict: run_id " + stored.run_id() + " already stored with different content");
  EXPECT_EQ(Count(), "2");
}

TEST_F(PgRunStoreTest, StoresColumnsUnknownFlagsAndTheWholeRecord) {
  v1::RunRecord r = testing::MakeRecord(7);
  r.add_flags()->set_code("CACHE_HIT");
  r.add_flags()->set_code("SOMETHING_NEW");
  r.mutable_status()->set_log_tail(std::string("before\0after", 12));
  r.set_simulated(true);
  const PreparedRuns runs = Prepare(*store_, {r});
  EXPECT_THAT(Outcomes(Store({&runs})), ElementsAre(StoreOutcome::kStored));
  const std::string where = "run_id = '" + r.run_id() + "'";
  EXPECT_EQ(db_.QueryValue("SELECT concat_ws('|', phase, call_index, repetition, status, simulated, "
                           "provenance, wall_seconds, start_time AT TIME ZONE 'UTC', flags::text) "
                           "FROM runs WHERE " + where),
            "warm|7|1|ok|t|live|1|2026-01-01 00:00:07|{CACHE_HIT,SOMETHING_NEW}");
  EXPECT_EQ(db_.QueryValue("SELECT flag_details->1->>'code' FROM runs WHERE " + where), "SOMETHING_NEW");
  ASSERT_GT(db_.FillRecordJson(), 0);  // the JSON of the stored records, for SQL
  EXPECT_EQ(db_.QueryValue("SELECT record->'status'->>'log_tail' FROM runs WHERE " + where),
            "before\xEF\xBF\xBD" "after");
  EXPECT_EQ(db_.QueryValue("SELECT metrics::text FROM runs WHERE " + where), "{\"tokens_per_second\": 47}");
}

TEST_F(PgRunStoreTest, ARowTheDatabaseRefusesIsRefusedAloneAndTheOthersAreStored) {
  PreparedRuns runs = Prepare(*store_, {testing::MakeRecord(1)});
  // A row no record can produce (call_index is not a number), between two good ones.
  const std::string bad_id = "0b8e7a9c-1d2e-4f3a-8b4c-5d6e7f8a9b0c";
  std::string line = runs.rows;
  line.replace(0, 36, bad_id);
  const size_t warm = line.find("\twarm\t");
  line.replace(warm + 6, 1, "x");
  runs.runs.push_back({bad_id, runs.rows.size(), line.size()});
  runs.rows += line;
  const PreparedRuns more = Prepare(*store_, {testing::MakeRecord(2)});
  absl::StatusOr<std::vector<RunStoreResult>> results = Store({&runs, &more});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0].outcome, StoreOutcome::kStored);
  EXPECT_EQ((*results)[1].outcome, StoreOutcome::kRefused);
  EXPECT_EQ((*results)[1].reason,
            "the database refused the record: invalid input syntax for type bigint: \"x\"");
  EXPECT_EQ((*results)[2].outcome, StoreOutcome::kStored);
  EXPECT_EQ(Count(), "2");
}

TEST_F(PgRunStoreTest, AnUnreachableDatabaseStoresNothingAndSaysUnavailable) {
  auto down = NewPgRunStore({"postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"});
  const PreparedRuns runs = Prepare(*down, {testing::MakeRecord(1)});
  absl::StatusOr<std::vector<RunStoreResult>> results = down->StoreRuns({&runs});
  EXPECT_EQ(results.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(results.status().message()), HasSubstr("storing runs: "));
  EXPECT_EQ(down->ListMachines({}).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(PgRunStoreTest, TheDocumentedMainFigureQueryWorks) {
  AddMachine(testing::kAgentId, "X", {}, absl::FromUnixSeconds(1767225600));
  AddMachine("agent-2", "Y", {}, absl::FromUnixSeconds(1767225600));
  v1::RunRecord other = testing::MakeRecord(1);
  other.set_agent_id("agent-2");
  v1::RunRecord undeclared = testing::MakeRecord(3);  // a record older than the declarations
  undeclared.mutable_metrics(0)->clear_headline();
  const PreparedRuns runs =
      Prepare(*store_, {testing::MakeRecord(2), testing::MakeRecord(1), other, undeclared});
  ASSERT_TRUE(Store({&runs}).ok());
  // Copied from coordinator/migrations/0005_headline.sql.
  pqxx::connection c(db_.url());
  pqxx::nontransaction tx(c);
  const pqxx::result rows = tx.exec(R"sql(
  SELECT r.start_time, r.phase, r.call_index, r.headline_label, r.headline_value, r.headline_unit
  FROM runs r JOIN machines m USING (agent_id)
  WHERE m.hostname = 'X' AND r.headline_value IS NOT NULL
  ORDER BY r.phase, r.call_index, r.start_time;)sql");
  std::vector<std::string> got;
  for (const auto& row : rows) {
    got.push_back(absl::StrCat(row[1].c_str(), " ", row[2].c_str(), " ", row[3].c_str(), " ", row[4].c_str(), " ",
                               row[5].c_str()));
  }
  EXPECT_THAT(got, ElementsAre("warm 1 output tokens/s 41 tokens/s", "warm 2 output tokens/s 42 tokens/s"));
}

// The main figure's columns come from the declaration stamped on the record, whatever the
// metric's name; without a main figure (or with a value no number can hold) they are NULL.
TEST_F(PgRunStoreTest, TheHeadlineColumnsHoldTheDeclaredMainFigure) {
  v1::RunRecord latency = testing::MakeRecord(1);
  latency.clear_metrics();
  auto add = [&](const std::string& name, double value, const std::string& unit, uint32_t headline,
                 const std::string& label, v1::Better better) {
    v1::Metric* m = latency.add_metrics();
    m->set_name(name);
    m->set_value(value);
    m->set_unit(unit);
    m->set_headline(headline);
    m->set_label(label);
    m->set_better(better);
  };
  add("requests_per_second", 12.5, "requests/s", 0, "", v1::BETTER_HIGHER);
  add("ttft_p99_seconds", 0.25, "s", 2, "TTFT p99", v1::BETTER_LOWER);
  add("latency_mean_seconds", 0.5, "s", 1, "mean\tlatency", v1::BETTER_LOWER);
  v1::RunRecord unlabelled = testing::MakeRecord(2);
  unlabelled.mutable_metrics(0)->clear_label();
  unlabelled.mutable_metrics(0)->clear_better();
  v1::RunRecord infinite = testing::MakeRecord(3);
  infinite.mutable_metrics(0)->set_value(std::numeric_limits<double>::infinity());
  v1::RunRecord none = testing::MakeRecord(4);
  none.clear_metrics();
  const PreparedRuns runs = Prepare(*store_, {latency, unlabelled, infinite, none});
  EXPECT_THAT(Outcomes(Store({&runs})), ElementsAre(StoreOutcome::kStored, StoreOutcome::kStored,
                                                    StoreOutcome::kStored, StoreOutcome::kStored));
  EXPECT_EQ(db_.QueryValue("SELECT string_agg(concat_ws('|', call_index, coalesce(headline_label, 'NULL'), "
                           "coalesce(headline_unit, 'NULL'), coalesce(headline_value::text, 'NULL'), "
                           "coalesce(headline_better, 'NULL')), ';' ORDER BY call_index) FROM runs"),
            "1|mean\tlatency|s|0.5|lower;2|tokens_per_second|tokens/s|42|NULL;"
            "3|output tokens/s|tokens/s|NULL|higher;4|NULL|NULL|NULL|NULL");
}

TEST_F(PgRunStoreTest, ListRunsFiltersNewestFirst) {
  AddMachine("agent-a", "ha", {{"class", "a100"}}, absl::FromUnixSeconds(1767225600));
  AddMachine("agent-b", "hb", {{"class", "m1"}}, absl::FromUnixSeconds(1767225600));
  std::vector<v1::RunRecord> records;
  for (int i = 1; i <= 6; ++i) {
    v1::RunRecord r = testing::MakeRecord(i);
    r.set_agent_id(i % 2 == 0 ? "agent-b" : "agent-a");
    r.set_backend(i <= 3 ? "comfyui" : "llama-server");
    r.set_task(i == 6 ? "other-task" : "chat-7b");
    r.set_series_id(i == 5 ? "series-2" : "series-1");
    records.push_back(r);
  }
  const PreparedRuns runs = Prepare(*store_, records);
  ASSERT_TRUE(Store({&runs}).ok());
  auto list = [&](const RunQuery& q) {
    absl::StatusOr<RunPage> page = store_->ListRuns(q);
    EXPECT_TRUE(page.ok()) << page.status();
    std::vector<uint32_t> calls;
    if (page.ok()) {
      for (const auto& r : page->runs) calls.push_back(r.call_index());
    }
    return calls;
  };
  RunQuery all;
  EXPECT_THAT(list(all), ElementsAre(6, 5, 4, 3, 2, 1));
  RunQuery q;
  q.agent_ids = {"agent-b"};
  EXPECT_THAT(list(q), ElementsAre(6, 4, 2));
  q = {};
  q.labels = {{"class", "a100"}};
  EXPECT_THAT(list(q), ElementsAre(5, 3, 1));
  q = {};
  q.backend = "comfyui";
  EXPECT_THAT(list(q), ElementsAre(3, 2, 1));
  q = {};
  q.task = "other-task";
  EXPECT_THAT(list(q), ElementsAre(6));
  q = {};
  q.series_id = "series-2";
  EXPECT_THAT(list(q), ElementsAre(5));
  q = {};
  q.since = absl::FromUnixSeconds(1767225600 + 2);
  q.until = absl::FromUnixSeconds(1767225600 + 5);
  EXPECT_THAT(list(q), ElementsAre(4, 3, 2));
  q = {};
  q.agent_ids = {"agent-a", "agent-b"};
  q.backend = "llama-server";
  q.labels = {{"class", "m1"}};
  EXPECT_THAT(list(q), ElementsAre(6, 4));

  absl::StatusOr<RunPage> page = store_->ListRuns(all);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->next_page_token, "");
  EXPECT_EQ(page->runs[0].run_id(), records[5].run_id());
  EXPECT_EQ(page->runs[0].metrics(0).value(), 46);
}

TEST_F(PgRunStoreTest, ListRunsPagesThroughEverythingOnce) {
  std::vector<v1::RunRecord> records;
  for (int i = 1; i <= 5; ++i) records.push_back(testing::MakeRecord(i));
  // Two runs with the same start time, and two without one: the order still holds.
  records[3].mutable_start_time()->set_seconds(records[2].start_time().seconds());
  records[0].clear_start_time();
  records[1].clear_start_time();
  const PreparedRuns runs = Prepare(*store_, records);
  ASSERT_TRUE(Store({&runs}).ok());
  RunQuery q;
  q.page_size = 2;
  std::vector<std::string> seen;
  int pages = 0;
  do {
    absl::StatusOr<RunPage> page = store_->ListRuns(q);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const auto& r : page->runs) seen.push_back(r.run_id());
    q.page_token = page->next_page_token;
    ++pages;
  } while (!q.page_token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_THAT(seen, UnorderedElementsAre(records[0].run_id(), records[1].run_id(), records[2].run_id(),
                                         records[3].run_id(), records[4].run_id()));
  EXPECT_EQ(seen[0], records[4].run_id());
  q.page_token = "r1:zz";
  EXPECT_EQ(store_->ListRuns(q).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PgRunStoreTest, MachinesKeepFirstSeenAndFilterByLabels) {
  const absl::Time t0 = absl::FromUnixSeconds(1767225600);
  AddMachine("agent-a", "ha", {{"class", "a100"}, {"site", "lab"}}, t0);
  AddMachine("agent-b", "hb", {{"class", "m1"}}, t0);
  AddMachine("agent-a", "ha", {{"class", "a100"}, {"site", "lab"}}, t0 + absl::Minutes(1));
  ASSERT_TRUE(store_->TouchMachine("agent-a", t0 + absl::Minutes(5)).ok());
  ASSERT_TRUE(store_->TouchMachine("agent-a", t0 + absl::Minutes(2)).ok());  // never backwards
  ASSERT_TRUE(store_->TouchMachine("nobody", t0).ok());
  v1::RunRecord r = testing::MakeRecord(1);
  r.set_agent_id("agent-a");
  const PreparedRuns runs = Prepare(*store_, {r});
  ASSERT_TRUE(Store({&runs}).ok());

  absl::StatusOr<std::vector<v1::Machine>> machines = store_->ListMachines({});
  ASSERT_TRUE(machines.ok()) << machines.status();
  ASSERT_EQ(machines->size(), 2u);
  const v1::Machine& a = (*machines)[0];
  EXPECT_EQ(a.agent_id(), "agent-a");
  EXPECT_EQ(a.conditions().hostname(), "ha");
  EXPECT_EQ(a.conditions().labels().at("site"), "lab");
  EXPECT_EQ(a.conditions().fingerprint(), ConditionsFingerprint(a.conditions()));
  EXPECT_EQ(a.first_seen_time().seconds(), absl::ToUnixSeconds(t0));
  EXPECT_EQ(a.last_seen_time().seconds(), absl::ToUnixSeconds(t0 + absl::Minutes(5)));
  EXPECT_EQ(a.run_count(), 1u);
  EXPECT_FALSE(a.connected());
  EXPECT_EQ((*machines)[1].run_count(), 0u);

  machines = store_->ListMachines({{"class", "m1"}});
  ASSERT_TRUE(machines.ok());
  ASSERT_EQ(machines->size(), 1u);
  EXPECT_EQ((*machines)[0].agent_id(), "agent-b");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM conditions"), "2");
  EXPECT_EQ(db_.QueryValue("SELECT array_to_string(agent_ids, ',') FROM conditions c JOIN machines m "
                           "ON m.conditions_fingerprint = c.fingerprint WHERE m.agent_id = 'agent-a'"),
            "agent-a");
}

}  // namespace
}  // namespace benchfleet::coordinator
