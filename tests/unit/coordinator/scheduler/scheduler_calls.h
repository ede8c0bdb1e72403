// What the scheduler tests (on the in-memory store and on PostgreSQL) ask a Scheduler, as its
// clients would: an agent's stream connecting, a series submitted through the Admin API, a
// series read back, a task update from an agent. A failed call fails the test. Test-only.
#ifndef BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_SCHEDULER_CALLS_H_
#define BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_SCHEDULER_CALLS_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "coordinator/scheduler/scheduler.h"
#include "tests/unit/coordinator/scheduler/fake_task_sink.h"

namespace benchfleet::testing {

// A spec of task chat-7b on llama-server (1 cold, 2 warm runs) with `fleet_keys` appended.
inline std::string SchedulerTestSpec(const std::string& fleet_keys) {
  return absl::StrCat("series: nightly\ntask: chat-7b\nbackend: llama-server\nruns:\n  cold: 1\n  warm: 2\n",
                      fleet_keys);
}

inline std::shared_ptr<FakeTaskSink> ConnectAgent(coordinator::Scheduler& scheduler, const std::string& agent_id) {
  auto sink = std::make_shared<FakeTaskSink>();
  scheduler.AgentConnected(agent_id, sink);
  return sink;
}

// The series id, or "" after failing the test.
inline std::string SubmitSpec(coordinator::Scheduler& scheduler, const std::string& spec) {
  v1::SubmitSeriesRequest request;
  request.set_spec_yaml(spec);
  request.set_source_name("s.yaml");
  absl::StatusOr<v1::SubmitSeriesResponse> response = scheduler.Submit(request);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? response->series_id() : "";
}

inline v1::SeriesStatus SeriesOf(coordinator::Scheduler& scheduler, const std::string& id) {
  absl::StatusOr<v1::SeriesStatus> s = scheduler.GetSeries(id);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : v1::SeriesStatus();
}

inline void SendTaskUpdate(coordinator::Scheduler& scheduler, const std::string& agent, const std::string& task_id,
                           const std::function<void(v1::TaskUpdate*)>& fill) {
  v1::TaskUpdate u;
  u.set_task_id(task_id);
  fill(&u);
  scheduler.TaskUpdated(agent, u);
}

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_UNIT_COORDINATOR_SCHEDULER_SCHEDULER_CALLS_H_
