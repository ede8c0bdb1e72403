// FakeBackend: a scripted Backend for the runner's tests. Each mode has a queue of what its runs
// do (a throughput figure, a failure, a dying server); Open can be made to fail per mode. Every
// call is logged as one line in events(), so a test asserts the exact order of Open, Run and
// Close. Timestamps come from the Env's clock. Not thread-safe (the runner uses one thread).
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_RUNNER_FAKE_BACKEND_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_RUNNER_FAKE_BACKEND_H_

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/backends/backend.h"

namespace benchfleet::agent::testing {

// What one run of the fake does.
struct FakeRun {
  double value = 50.0;  // predicted_per_second, tokens/s
  bool fail = false;
  std::string message;      // when fail
  bool dies = false;        // the session is dead after this run
  bool leave_status_unset = false;
  std::string cache_hit;  // when set: the run is OK and flagged CACHE_HIT with this reason
  std::vector<v1::RequestTiming> requests;  // copied into an OK run's record (a serving backend's)
};

// Shorthands for scripts.
inline FakeRun Ok(double value) {
  FakeRun run;
  run.value = value;
  return run;
}
inline FakeRun CacheHit(double value, std::string reason) {
  FakeRun run;
  run.value = value;
  run.cache_hit = std::move(reason);
  return run;
}
inline FakeRun Fail(std::string message) {
  FakeRun run;
  run.fail = true;
  run.message = std::move(message);
  return run;
}
inline FakeRun Dying(FakeRun run) {
  run.dies = true;
  return run;
}
inline FakeRun StatusUnset() {
  FakeRun run;
  run.leave_status_unset = true;
  return run;
}

// Why Open fails for a mode.
struct FakeOpenFailure {
  std::string message;
  std::string log_tail;
  int times = -1;  // how many Opens fail; -1 every one
};

class FakeBackend : public Backend {
 public:
  explicit FakeBackend(Env* env) : env_(env) {}

  std::string name() const override { return "fake"; }
  // One headline figure (the runs' predicted_per_second unless set_metric says otherwise).
  FigureDeclarations figures() const override {
    if (metric_.empty()) return {};
    figure_ = FigureDeclaration{.name = metric_, .unit = "tokens/s", .better = v1::BETTER_HIGHER, .headline = 1};
    return FigureDeclarations(&figure_, 1);
  }
  std::vector<std::string> matrix_axes() const override { return {"mode", "n_predict"}; }
  std::vector<std::string> default_axis_values(const std::string& axis) const override {
    return axis == "mode" ? default_modes_ : std::vector<std::string>{};
  }
  absl::Status CheckCombination(const Combination& combination) const override;
  absl::StatusOr<std::unique_ptr<BackendSession>> Open(const Combination& combination,
                                                       std::string* log_tail) override;

  // Scripting.
  void set_default_modes(std::vector<std::string> modes) { default_modes_ = std::move(modes); }
  void set_metric(std::string metric) { metric_ = std::move(metric); }
  void set_simulated(bool simulated) { simulated_ = simulated; }
  void set_version(std::string version) { version_ = std::move(version); }
  // SessionInfo.conditions of the sessions of a mode (what the server reports about itself).
  void set_conditions(const std::string& mode, std::map<std::string, std::string> conditions) {
    conditions_[mode] = std::move(conditions);
  }
  // Runs of mode, in order; once used up, runs give FakeRun{}.
  void Script(const std::string& mode, std::vector<FakeRun> runs);
  void FailOpen(const std::string& mode, FakeOpenFailure failure) { open_failures_[mode] = std::move(failure); }

  // "open gpu", "run gpu cold 1 rep 1 input 0 #1 t=0s" (#: runs since that Open; t: the
  // clock's monotonic reading), "close gpu".
  const std::vector<std::string>& events() const { return events_; }
  std::vector<std::string>& mutable_events() { return events_; }

 private:
  friend class FakeSession;
  Env* env_;
  std::string metric_ = "predicted_per_second";
  mutable FigureDeclaration figure_;
  std::vector<std::string> default_modes_ = {"gpu", "cpu"};
  bool simulated_ = false;
  std::string version_ = "fake-1.0";
  std::map<std::string, std::deque<FakeRun>> scripts_;
  std::map<std::string, FakeOpenFailure> open_failures_;
  std::map<std::string, std::map<std::string, std::string>> conditions_;
  std::vector<std::string> events_;
};

}  // namespace benchfleet::agent::testing

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_RUNNER_FAKE_BACKEND_H_
