#include "tests/unit/agent/runner/fake_backend.h"

#include "absl/strings/str_cat.h"
#include "common/record_validation.h"

namespace benchfleet::agent::testing {
namespace {

void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  out->set_seconds(absl::ToUnixSeconds(t));
}

}  // namespace

class FakeSession : public BackendSession {
 public:
  FakeSession(FakeBackend* backend, std::string mode) : backend_(backend), mode_(std::move(mode)) {
    info_.backend_version = backend->version_;
    info_.simulated = backend->simulated_;
    info_.params = {{"n_ctx", "4096"}, {"seed", "session-seed-is-overridden"}};
    if (auto it = backend->conditions_.find(mode_); it != backend->conditions_.end()) info_.conditions = it->second;
  }
  ~FakeSession() override { Close().IgnoreError(); }

  const SessionInfo& info() const override { return info_; }

  void Run(const RunInput& input, v1::RunRecord* record) override {
    ++runs_;
    Clock& clock = backend_->env_->clock();
    backend_->events_.push_back(absl::StrCat("run ", mode_, " ", PhaseName(input.phase), " ", input.call_index,
                                             " rep ", input.repetition, " input ", input.input_index, " #", runs_,
                                             " t=", absl::FormatDuration(clock.Monotonic())));
    FakeRun run;
    auto& script = backend_->scripts_[mode_];
    if (!script.empty()) {
      run = script.front();
      script.pop_front();
    }
    SetTimestamp(clock.Now(), record->mutable_start_time());
    SetTimestamp(clock.Now(), record->mutable_end_time());
    record->mutable_wall_duration()->set_seconds(2);
    (*record->mutable_params())["seed"] = "42";
    if (run.dies) alive_ = false;
    if (run.leave_status_unset) return;
    if (run.fail) {
      record->mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
      record->mutable_status()->set_message(run.message);
      return;
    }
    record->mutable_status()->set_code(v1::RunStatus::CODE_OK);
    v1::Metric* metric = record->add_metrics();
    metric->set_name("predicted_per_second");
    metric->set_value(run.value);
    metric->set_unit("tokens/s");
    for (const v1::RequestTiming& r : run.requests) *record->add_requests() = r;
    if (!run.cache_hit.empty()) {
      v1::Flag* flag = record->add_flags();
      flag->set_code("CACHE_HIT");
      flag->set_reason(run.cache_hit);
    }
  }

  bool alive() const override { return alive_; }

  absl::Status Close() override {
    if (closed_) return absl::OkStatus();
    closed_ = true;
    backend_->events_.push_back(absl::StrCat("close ", mode_));
    return absl::OkStatus();
  }

 private:
  FakeBackend* backend_;
  std::string mode_;
  SessionInfo info_;
  int runs_ = 0;
  bool alive_ = true;
  bool closed_ = false;
};

absl::Status FakeBackend::CheckCombination(const Combination& combination) const {
  auto it = combination.find("mode");
  if (it != combination.end() && it->second == "tpu") {
    return absl::InvalidArgumentError("mode 'tpu' is not in the fake section's modes (gpu, cpu)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BackendSession>> FakeBackend::Open(const Combination& combination,
                                                                  std::string* log_tail) {
  auto it = combination.find("mode");
  const std::string mode = it == combination.end() ? "-" : it->second;
  events_.push_back(absl::StrCat("open ", mode));
  if (auto failure = open_failures_.find(mode); failure != open_failures_.end() && failure->second.times != 0) {
    if (failure->second.times > 0) --failure->second.times;
    *log_tail = failure->second.log_tail;
    return absl::UnavailableError(failure->second.message);
  }
  return std::unique_ptr<BackendSession>(new FakeSession(this, mode));
}

void FakeBackend::Script(const std::string& mode, std::vector<FakeRun> runs) {
  scripts_[mode] = std::deque<FakeRun>(runs.begin(), runs.end());
}

}  // namespace benchfleet::agent::testing
