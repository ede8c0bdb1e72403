// RecordingMetrics: the CoordinatorMetrics the Scheduler is given in its tests, recording the
// calls it makes (TaskKnown, RegressionChecked, DatabaseError, StaleTaskUpdate) as text in order.
// Test-only; thread-safe.
#ifndef BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_RECORDING_METRICS_H_
#define BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_RECORDING_METRICS_H_

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/string_views.h"
#include "coordinator/metrics/coordinator_metrics.h"

namespace benchfleet::testing {

class RecordingMetrics : public coordinator::NullMetrics {
 public:
  void TaskKnown(std::string_view agent_id, std::string_view task) override {
    Add(absl::StrCat("TaskKnown ", ToAbsl(agent_id), " ", ToAbsl(task)));
  }
  void RegressionChecked(std::string_view agent_id, std::string_view task, std::string_view verdict) override {
    Add(absl::StrCat("RegressionChecked ", ToAbsl(agent_id), " ", ToAbsl(task), " ", ToAbsl(verdict)));
  }
  void DatabaseError(std::string_view operation) override { Add(absl::StrCat("DatabaseError ", ToAbsl(operation))); }
  void StaleTaskUpdate() override { Add("StaleTaskUpdate"); }

  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  void Add(std::string call) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(std::move(call));
  }
  std::mutex mu_;
  std::vector<std::string> calls_;
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_RECORDING_METRICS_H_
