// A regression as the scheduler stores it, for the tests of its readers (invalidation_reader_test,
// verdict_reader_test): one agent, 5 earlier runs at 50 to 52 tokens/s, then a fleet series whose
// 3 warm calls run at 40, stored through the run store and checked by a Scheduler call by call
// (3 verdicts, the third a REGRESSION annotating its sample's 3 runs).
#ifndef BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_REGRESSION_SCENARIO_H_
#define BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_REGRESSION_SCENARIO_H_

#include <string>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::coordinator {

// Stores the scenario in the migrated database at `url`; returns its 8 runs, the earlier ones
// first. Failures are reported as gtest failures (check HasFailure()).
std::vector<v1::RunRecord> StoreARegression(const std::string& url);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_REGRESSION_SCENARIO_H_
