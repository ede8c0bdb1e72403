#include "tests/unit/coordinator/scheduler/regression_scenario.h"

#include <memory>

#include "common/clock.h"
#include "common/conditions_fingerprint.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/store/pg_fleet_store.h"
#include "coordinator/store/pg_run_store.h"
#include "gtest/gtest.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {

std::vector<v1::RunRecord> StoreARegression(const std::string& url) {
  std::unique_ptr<RunStore> runs = NewPgRunStore({url});
  std::unique_ptr<FleetStore> fleet = NewPgFleetStore({url});
  MachineUpdate machine;
  machine.agent_id = testing::kAgentId;
  machine.agent_version = "0.1.0";
  machine.conditions = testing::MakeConditions("agent-1.local", {});
  machine.conditions.set_fingerprint(ConditionsFingerprint(machine.conditions));
  EXPECT_TRUE(runs->UpsertMachine(machine).ok());
  SimulatedClock clock;
  SchedulerOptions options;
  options.clock = &clock;
  options.coordinator_id = "c1";
  Scheduler scheduler(FleetStores::Of(fleet.get()), options);
  v1::SubmitSeriesRequest submit;
  submit.set_spec_yaml("series: s\ntask: chat-7b\nbackend: llama-server\nruns: {cold: 1, warm: 3}\ntargets: all\n");
  absl::StatusOr<v1::SubmitSeriesResponse> submitted = scheduler.Submit(submit);
  EXPECT_TRUE(submitted.ok()) << submitted.status();
  if (!submitted.ok()) return {};
  absl::StatusOr<v1::SeriesStatus> series = scheduler.GetSeries(submitted->series_id());
  EXPECT_TRUE(series.ok()) << series.status();
  if (!series.ok()) return {};
  std::vector<v1::RunRecord> all;
  for (uint32_t i = 1; i <= 5; ++i) {
    all.push_back(testing::MakeRecord(i));
    all.back().mutable_metrics(0)->set_value(49.5 + i * 0.5);
  }
  for (uint32_t call = 10; call <= 12; ++call) {
    all.push_back(testing::MakeRecord(call));
    all.back().set_series_id(submitted->series_id());
    all.back().set_task_id(series->tasks(0).task_id());
    all.back().mutable_metrics(0)->set_value(40);
  }
  PreparedRuns prepared;
  for (const auto& r : all) EXPECT_TRUE(runs->PrepareRun(r, &prepared).ok());
  std::vector<const PreparedRuns*> groups = {&prepared};
  EXPECT_TRUE(runs->StoreRuns(groups).ok());
  scheduler.RunsStored(all);
  return all;
}

}  // namespace benchfleet::coordinator
