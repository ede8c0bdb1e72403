// FakeTaskSink: an agent's Connect stream as the Scheduler sees it (TaskSink), keeping what was
// sent; Close() makes it refuse further sends, as a stream that went away does. Test-only;
// thread-safe.
#ifndef BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_FAKE_TASK_SINK_H_
#define BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_FAKE_TASK_SINK_H_

#include <mutex>
#include <vector>

#include "coordinator/scheduler/scheduler.h"

namespace benchfleet::testing {

class FakeTaskSink : public coordinator::TaskSink {
 public:
  bool SendAssignment(const v1::TaskAssignment& assignment) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!alive_) return false;
    assignments_.push_back(assignment);
    return true;
  }
  bool SendCancel(const v1::TaskCancel& cancel) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!alive_) return false;
    cancels_.push_back(cancel);
    return true;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    alive_ = false;
  }
  std::vector<v1::TaskAssignment> assignments() {
    std::lock_guard<std::mutex> lock(mu_);
    return assignments_;
  }
  std::vector<v1::TaskCancel> cancels() {
    std::lock_guard<std::mutex> lock(mu_);
    return cancels_;
  }

 private:
  std::mutex mu_;
  bool alive_ = true;
  std::vector<v1::TaskAssignment> assignments_;
  std::vector<v1::TaskCancel> cancels_;
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_FAKE_TASK_SINK_H_
