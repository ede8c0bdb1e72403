// An operator's invalidation and the regression check reach the guide: the database reader
// (synthesis/readers) shows the INVALIDATED annotation as a flag of its run, with the operator's
// reason, and a REGRESSION as a flag of every run of its sample, its reason naming the test, the
// p-value, the level and the baseline.
#include "common/clock.h"
#include "common/conditions_fingerprint.h"
#include "common/hashing.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_fleet_store.h"
#include "coordinator/store/pg_run_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/readers/database_reader.h"
#include "tests/support/pg_test_db.h"
#include "tests/unit/coordinator/scheduler/regression_scenario.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

TEST(InvalidationReaderTest, TheGuideReaderSeesAnInvalidatedRunAsAFlag) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  ASSERT_TRUE(Migrate(db.url()).ok());
  std::unique_ptr<RunStore> runs = NewPgRunStore({db.url()});
  std::unique_ptr<FleetStore> fleet = NewPgFleetStore({db.url()});
  SimulatedClock clock;
  SchedulerOptions options;
  options.clock = &clock;
  options.coordinator_id = "c1";
  Scheduler scheduler(FleetStores::Of(fleet.get()), options);

  const v1::RunRecord bad = testing::MakeRecord(1);
  const v1::RunRecord good = testing::MakeRecord(2);
  PreparedRuns prepared;
  ASSERT_TRUE(runs->PrepareRun(bad, &prepared).ok());
  ASSERT_TRUE(runs->PrepareRun(good, &prepared).ok());
  std::vector<const PreparedRuns*> groups = {&prepared};
  ASSERT_TRUE(runs->StoreRuns(groups).ok());

  v1::InvalidateRunsRequest request;
  request.add_run_ids(bad.run_id());
  request.set_reason("bad cable");
  ASSERT_TRUE(scheduler.InvalidateRuns(request).ok());

  absl::StatusOr<synthesis::ReadResult> read = synthesis::ReadRecordsFromDatabase(db.url(), {});
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->records.size(), 2u);
  EXPECT_EQ(read->records[0].run_id(), bad.run_id());  // oldest first
  ASSERT_EQ(read->records[0].flags_size(), 1);
  EXPECT_EQ(read->records[0].flags(0).code(), "INVALIDATED");
  EXPECT_EQ(read->records[0].flags(0).reason(), "bad cable");
  EXPECT_EQ(read->records[1].flags_size(), 0);

  // The guide's read, as rows: the same flag on the same run.
  synthesis::RunRows rows;
  read = synthesis::ReadRecordsFromDatabase(db.url(), {}, &rows);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(rows.rows[0]->run_id, bad.run_id());
  ASSERT_EQ(rows.rows[0]->flags.size(), 1u);
  EXPECT_EQ(rows.rows[0]->flags[0].code, "INVALIDATED");
  EXPECT_EQ(rows.rows[0]->flags[0].reason, "bad cable");
  EXPECT_EQ(rows.rows[1]->flags.size(), 0u);
}

TEST(InvalidationReaderTest, TheGuideReaderSeesARegressionWithItsTestOnEveryRunOfItsSample) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  ASSERT_TRUE(Migrate(db.url()).ok());
  // 5 earlier runs at 50 to 52 tokens/s, then 3 warm calls of a series at 40.
  StoreARegression(db.url());
  ASSERT_FALSE(::testing::Test::HasFailure());

  synthesis::RunRows rows;
  absl::StatusOr<synthesis::ReadResult> read = synthesis::ReadRecordsFromDatabase(db.url(), {}, &rows);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(rows.rows.size(), 8u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(rows.rows[i]->flags.size(), 0u) << i;
  for (size_t i = 5; i < 8; ++i) {
    ASSERT_EQ(rows.rows[i]->flags.size(), 1u) << i;
    EXPECT_EQ(rows.rows[i]->flags[0].code, "REGRESSION");
    // Reference: exact two-sided Mann-Whitney p of 3 runs wholly below 5, 2 / C(8, 3) = 0.0357
    // (enumerated in Python). The test comes first: the guide shows 160 characters of a reason.
    EXPECT_EQ(rows.rows[i]->flags[0].reason,
              "REGRESSION: p = 0.0357 < 0.05 (Mann-Whitney U, two-sided, exact), 3 warm calls of this series vs 5 "
              "earlier runs: output tokens/s median 40 vs 51 tokens/s (21.6% worse, threshold 10%)");
  }
}

}  // namespace
}  // namespace benchfleet::coordinator
