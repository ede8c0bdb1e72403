// An operator's invalidation reaches the guide: the database reader (synthesis/readers) shows
// the INVALIDATED annotation as a flag of its run, with the operator's reason.
#include "common/hashing.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_fleet_store.h"
#include "coordinator/store/pg_run_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/readers/database_reader.h"
#include "tests/support/pg_test_db.h"
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
  Scheduler scheduler(fleet.get(), options);

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

}  // namespace
}  // namespace benchfleet::coordinator
