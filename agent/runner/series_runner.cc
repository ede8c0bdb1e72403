#include "agent/runner/series_runner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/probes/device_sampler.h"
#include "agent/runner/figures.h"
#include "agent/runner/matrix.h"
#include "agent/runner/steady_state.h"
#include "agent/runner/throughput_drop.h"
#include "agent/runner/warm_until.h"
#include "common/string_views.h"
#include "common/conditions_fingerprint.h"
#include "common/figures.h"
#include "common/hashing.h"
#include "common/proto_time.h"
#include "common/run_flags.h"
#include "common/simulated.h"
#include "common/record_validation.h"
#include "common/version.h"

namespace benchfleet::agent {
namespace {

// A server's log can be long: keep a record under the coordinator's size limit by cutting the
// start of its log tail (the end says why it failed), on a UTF-8 character boundary.
void FitRecordLimit(v1::RunRecord* record) {
  const size_t size = record->ByteSizeLong();
  if (size <= kMaxRecordBytes) return;
  std::string* tail = record->mutable_status()->mutable_log_tail();
  constexpr std::string_view kCut = "[... log cut to fit the record]\n";
  size_t cut = std::min(tail->size(), size - kMaxRecordBytes + kCut.size() + 1024);
  while (cut < tail->size() && (static_cast<unsigned char>((*tail)[cut]) & 0xC0) == 0x80) ++cut;
  *tail = absl::StrCat(ToAbsl(kCut), tail->substr(cut));
}

}  // namespace

bool SeriesResult::clean() const { return failed_runs == 0 && stopped_early == 0 && !interrupted; }

absl::Status CheckSeriesFolderIsNew(Env* env, const std::string& dir) {
  if (env->FileExists(JoinPath(dir, kRunsJsonlFile))) {
    return absl::FailedPreconditionError(absl::StrCat(dir, " already holds a series (", kRunsJsonlFile,
                                                      "): give each series a folder of its own"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SeriesRunner>> SeriesRunner::Create(const SeriesSpec& spec, Backend* backend,
                                                                   RunnerOptions options) {
  if (backend == nullptr || options.env == nullptr || options.allow == nullptr) {
    return absl::InvalidArgumentError("series runner: backend, env and allow-list are required");
  }
  if (options.agent_id.empty()) return absl::InvalidArgumentError("series runner: no agent id");
  if (options.out_dir.empty()) return absl::InvalidArgumentError("series runner: no series folder");
  if (auto s = options.allow->CheckBackend(spec.backend); !s.ok()) return s;
  if (spec.backend != backend->name()) {
    return absl::InvalidArgumentError(absl::StrCat("series runner: the spec names backend '", spec.backend,
                                                   "' but was given the ", backend->name(), " backend"));
  }
  const RunsSpec& runs = spec.runs;
  if (runs.validation < 0 || runs.cold < 0 || runs.warm < 0 || runs.repetitions < 1 ||
      runs.validation + runs.cold + runs.warm == 0 || (runs.warm > 0 && runs.cold == 0) ||
      runs.pause_between_runs < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.source, ": runs: validation ", runs.validation, ", cold ", runs.cold, ", warm ", runs.warm,
        ", repetitions ", runs.repetitions, " is not a series (warm runs need a cold run first)"));
  }
  if (runs.warm_until.has_value() && MainFigure(backend->figures()) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(spec.source, ":", runs.warm_until->line,
                                                   ": runs.warm.until needs a main figure to judge stability on, and "
                                                   "the ", backend->name(), " backend declares none"));
  }
  auto combinations = ExpandMatrix(spec, *backend);
  if (!combinations.ok()) return combinations.status();
  if (auto s = CheckSeriesFolderIsNew(options.env, options.out_dir); !s.ok()) return s;
  if (options.task_id.empty()) options.task_id = NewUuid();
  return std::unique_ptr<SeriesRunner>(
      new SeriesRunner(spec, backend, std::move(options), std::move(*combinations)));
}

SeriesRunner::SeriesRunner(const SeriesSpec& spec, Backend* backend, RunnerOptions options,
                           std::vector<Combination> combos)
    : spec_(spec),
      backend_(backend),
      options_(std::move(options)),
      combinations_(std::move(combos)),
      outputs_(spec.outputs) {}

bool SeriesRunner::StopRequested() {
  if (!options_.stop.stop_requested()) return false;
  result_.interrupted = true;
  return true;
}

void SeriesRunner::Progress(std::string_view line) {
  if (options_.progress) options_.progress(line);
}

absl::StatusOr<SeriesResult> SeriesRunner::Run() {
  if (ran_) return absl::FailedPreconditionError("series runner: Run() was already called");
  ran_ = true;
  result_ = SeriesResult{};
  result_.series = spec_.series;
  result_.task = spec_.task;
  result_.task_id = options_.task_id;
  result_.backend = spec_.backend;
  result_.out_dir = options_.out_dir;
  // The backend's figures, then the device sampler's and the steady state's (generic: from the
  // device readings and RequestTiming alone), their headline ranks after the backend's.
  figures_ = JoinFigures(JoinFigures(backend_->figures(), kDeviceFigures), kSteadyStateFigures);
  result_.throughput_metric = ThroughputDropMetric(backend_->figures());
  if (options_.run_watcher != nullptr) {
    options_.run_watcher->SetOutputTokenFigures(OutputTokenFigures(figures_));
    options_.run_watcher->SetImageFigures(ImageFigures(figures_));
  }
  result_.throughput_drop_threshold = spec_.runs.throughput_drop_threshold;
  result_.repetitions = spec_.runs.repetitions;
  result_.warm_until = spec_.runs.warm_until;
  if (const FigureDeclaration* main = MainFigure(backend_->figures()); main != nullptr && result_.warm_until) {
    result_.warm_until_metric = std::string(main->name);
  }
  result_.combinations = combinations_;
  result_.conditions = options_.conditions;

  if (auto s = options_.env->CreateDirs(options_.out_dir); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("series folder ", options_.out_dir, ": ", s.message()));
  }
  if (auto s = options_.env->WriteFileAtomically(JoinPath(options_.out_dir, kSpecFile), spec_.text); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("series folder ", options_.out_dir, ": ", s.message()));
  }
  Progress(absl::StrCat("series ", spec_.series, " (task ", spec_.task, ", task id ", options_.task_id, "): ",
                        combinations_.size(), " combination(s) x ", spec_.runs.repetitions,
                        " repetition(s), backend ", spec_.backend));
  for (int repetition = 1; repetition <= spec_.runs.repetitions; ++repetition) {
    for (const Combination& combination : combinations_) {
      if (StopRequested()) break;
      if (auto s = RunCombination(combination, repetition); !s.ok()) return s;
    }
  }
  if (folder_ == nullptr) {
    if (auto s = FinishConditions(nullptr); !s.ok()) return s;
  }
  return std::move(result_);
}

absl::Status SeriesRunner::RunCombination(const Combination& combination, int repetition) {
  const RunsSpec& runs = spec_.runs;
  const std::string label = CombinationLabel(combination);
  const std::string where =
      runs.repetitions > 1 ? absl::StrCat(label, " rep ", repetition, "/", runs.repetitions) : label;
  Clock& clock = options_.env->clock();

  // The plan: each VALIDATION run on the first session, each COLD run on a fresh one (the first
  // call after Open), the WARM runs on the last cold run's session.
  struct Step {
    v1::Phase phase;
    uint32_t call;
    uint32_t of;
    uint32_t input_index;
    bool fresh_session;
  };
  std::vector<Step> steps;
  for (int i = 1; i <= runs.validation; ++i) {
    steps.push_back({v1::PHASE_VALIDATION, uint32_t(i), uint32_t(runs.validation), uint32_t(i - 1), i == 1});
  }
  for (int i = 1; i <= runs.cold; ++i) steps.push_back({v1::PHASE_COLD, uint32_t(i), uint32_t(runs.cold), 0, true});
  for (int i = 1; i <= runs.warm; ++i) steps.push_back({v1::PHASE_WARM, uint32_t(i), uint32_t(runs.warm), 0, false});

  ThroughputDropTracker drops(result_.throughput_metric, runs.throughput_drop_threshold);
  std::optional<WarmUntilTracker> until;
  if (runs.warm_until.has_value()) until.emplace(*runs.warm_until, result_.warm_until_metric);
  std::unique_ptr<BackendSession> session;
  size_t made = 0;
  std::string last_step;    // "cold 1": the last run recorded
  std::string stop_reason;  // why the combination ended before its plan, when it did

  auto close = [&] {
    if (session == nullptr) return;
    if (auto s = session->Close(); !s.ok()) {
      result_.notes.push_back(absl::StrCat(where, ": closing the ", backend_->name(), " session: ", s.message()));
    }
    session.reset();
  };

  // Opens a fresh session for the step. False when it could not be opened (one FAILED record
  // says why) or the series is stopping.
  auto open = [&](const Step& step) -> absl::StatusOr<bool> {
    close();
    if (StopRequested()) return false;
    Progress(absl::StrCat(where, ": opening ", backend_->name(), " for ", PhaseName(step.phase), " ", step.call));
    std::string log_tail;
    RunResult failed;
    SetTimestamp(clock.Now(), failed.record.mutable_start_time());
    auto opened = backend_->Open(combination, &log_tail);
    if (!opened.ok() && StopRequested()) {
      // Stopped while the backend waited for its server: no run was made, none is recorded.
      Progress(absl::StrCat(where, ": stopped while opening ", backend_->name(), " (", opened.status().message(), ")"));
      return false;
    }
    if (!opened.ok()) {
      failed.label = label;
      v1::RunRecord& record = failed.record;
      SetTimestamp(clock.Now(), record.mutable_end_time());
      record.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
      record.mutable_status()->set_message(
          absl::StrCat("could not open ", backend_->name(), ": ", opened.status().message()));
      record.mutable_status()->set_log_tail(log_tail);
      FillIds(combination, repetition, step.phase, step.call, &record);
      ++made;
      last_step = absl::StrCat(PhaseName(step.phase), " ", step.call);
      stop_reason = absl::StrCat("could not open ", backend_->name());
      Progress(absl::StrCat(where, " ", PhaseName(step.phase), " ", step.call, "/", step.of,
                            ": FAILED: ", record.status().message()));
      if (auto s = Keep(std::move(failed)); !s.ok()) return s;
      return false;
    }
    session = std::move(*opened);
    const SessionInfo& info = session->info();
    // Said once: a simulator's version string often says SIMULATED already.
    const bool says_simulated = SaysSimulated(info.backend_version);
    Progress(absl::StrCat(where, ": ", backend_->name(), " ", info.backend_version,
                          info.backend_version.empty() ? "" : " ", "ready",
                          info.simulated && !says_simulated ? " (SIMULATED)" : ""));
    if (folder_ == nullptr) {
      if (auto s = FinishConditions(&info); !s.ok()) return s;
    } else {
      if (const auto& versions = result_.conditions.backend_versions();
          !info.backend_version.empty() &&
          (!versions.contains(spec_.backend) || versions.at(spec_.backend) != info.backend_version)) {
        result_.notes.push_back(absl::StrCat(where, ": ", backend_->name(), " reports version ",
                                             info.backend_version, ", not the version in the series' conditions"));
      }
      const auto& attributes = result_.conditions.backend_attributes();
      for (const auto& [key, value] : info.conditions) {
        const std::string name = absl::StrCat(spec_.backend, ".", key);
        if (auto it = attributes.find(name); it == attributes.end() || it->second != value) {
          result_.notes.push_back(absl::StrCat(where, ": ", backend_->name(), " reports ", key, " ", value,
                                               ", not what the series' conditions hold (",
                                               it == attributes.end() ? "nothing" : it->second, ")"));
        }
      }
    }
    return true;
  };

  // Makes one run on the open session. False when the combination ends (the session died, or
  // the series is stopping).
  auto run = [&](const Step& step) -> absl::StatusOr<bool> {
    if (StopRequested()) {
      Progress(absl::StrCat(where, ": stopped before ", PhaseName(step.phase), " ", step.call));
      return false;
    }
    const absl::Duration pause = runs.pause_between_runs;
    if (runs_started_ > 0 && pause > absl::ZeroDuration() && clock.WaitForStop(options_.stop, pause)) {
      StopRequested();
      Progress(absl::StrCat(where, ": stopped during the pause before ", PhaseName(step.phase), " ", step.call));
      return false;
    }
    ++runs_started_;
    const std::optional<double> temperature =
        options_.device_temperature ? options_.device_temperature() : std::nullopt;

    RunInput input;
    input.phase = step.phase;
    input.call_index = step.call;
    input.repetition = uint32_t(repetition);
    input.input_index = step.input_index;
    RunResult result;
    result.label = label;
    if (options_.on_timed_window) options_.on_timed_window(true);
    if (options_.run_watcher != nullptr) options_.run_watcher->BeginRun();
    session->Run(input, &result.record);
    std::vector<std::string> watch_problems;
    if (options_.run_watcher != nullptr) watch_problems = options_.run_watcher->EndRun(&result.record);
    if (options_.on_timed_window) options_.on_timed_window(false);
    ++made;
    last_step = absl::StrCat(PhaseName(step.phase), " ", step.call);
    for (const std::string& problem : watch_problems) {
      Progress(absl::StrCat(where, " ", last_step, ": device sampling: ", problem));
    }

    v1::RunRecord& record = result.record;
    const SessionInfo& info = session->info();
    FillIds(combination, repetition, step.phase, step.call, &record);
    for (const auto& [key, value] : info.params) record.mutable_params()->insert({key, value});
    record.set_simulated(record.simulated() || info.simulated);
    if (temperature.has_value()) {
      v1::Metric* metric = record.add_metrics();
      metric->set_name(kDeviceTemperatureMetric);
      metric->set_value(*temperature);
      metric->set_unit("celsius");
    }
    if (record.status().code() == v1::RunStatus::CODE_OK) {
      if (std::optional<SteadyState> steady = SteadyStateOf(record); steady.has_value()) {
        AddSteadyStateFigures(*steady, &record);
      }
    }
    StampFigures(figures_, &record);
    if (record.status().code() == v1::RunStatus::CODE_UNSPECIFIED) {
      record.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
      record.mutable_status()->set_message(
          absl::StrCat("the ", backend_->name(), " backend left the run's status unset"));
    }
    result.throughput_drop = drops.Observe(&record);
    const bool output_mismatch = outputs_.Observe(&record).has_value();
    // Repeat until stable: the warm calls end with this one when its record says why.
    const bool warm_done = until.has_value() && until->Observe(&record);

    std::string figure;
    if (record.status().code() != v1::RunStatus::CODE_OK) {
      figure = absl::StrCat("FAILED: ", record.status().message());
    } else if (const v1::Metric* main = MainFigure(record); main != nullptr) {
      figure = absl::StrCat(FigureLabel(*main), " ", HumanFigure(main->value(), main->unit()));
      if (result.throughput_drop.has_value()) {
        absl::StrAppend(&figure, absl::StrFormat(" (%s -%.1f%%)", kThroughputDropFlag, *result.throughput_drop * 100));
      }
    } else {
      figure = "OK";
    }
    // The flags that keep the run out of aggregates, on the call where they happen.
    for (const v1::Flag& flag : record.flags()) {
      if (IsExcludingFlag(flag.code())) absl::StrAppend(&figure, " ", flag.code());
    }
    if (output_mismatch) absl::StrAppend(&figure, " ", kOutputMismatchFlag);
    Progress(absl::StrCat(where, " ", PhaseName(step.phase), " ", step.call, "/", step.of, ": ", figure,
                          record.simulated() ? " SIMULATED" : ""));
    const bool failed = record.status().code() != v1::RunStatus::CODE_OK;
    const std::string failure = record.status().message();
    const std::string warm_stop =
        absl::StrCat(record.warm_stop().message(), record.simulated() ? " SIMULATED" : "");
    if (auto s = Keep(std::move(result)); !s.ok()) return s;
    if (warm_done) {
      Progress(absl::StrCat(where, " warm: ", warm_stop));
      return false;  // the combination's plan is done: no stop_reason
    }
    if (!session->alive()) {
      stop_reason = absl::StrCat("the ", backend_->name(), " session ended", failed ? ": " : "", failed ? failure : "");
      return false;
    }
    return true;
  };

  for (const Step& step : steps) {
    absl::StatusOr<bool> went = true;
    if (step.fresh_session) went = open(step);
    if (went.ok() && *went) went = run(step);
    if (!went.ok()) {
      close();
      return went.status();
    }
    if (!*went) break;
  }
  close();
  if (made < steps.size() && !stop_reason.empty()) {
    ++result_.stopped_early;
    result_.notes.push_back(absl::StrCat(where, ": stopped at ", last_step, ", ", steps.size() - made, " of ",
                                         steps.size(), " planned runs not made: ", stop_reason));
  }
  return absl::OkStatus();
}

void SeriesRunner::FillIds(const Combination& combination, int repetition, v1::Phase phase, uint32_t call_index,
                           v1::RunRecord* record) {
  record->set_run_id(NewUuid());
  record->set_series_id(spec_.series);
  record->set_task_id(options_.task_id);
  record->set_task_attempt(options_.task_attempt);
  record->set_agent_id(options_.agent_id);
  record->set_backend(spec_.backend);
  record->set_task(spec_.task);
  if (auto it = combination.find("mode"); it != combination.end()) record->set_mode(it->second);
  record->set_phase(phase);
  record->set_call_index(call_index);
  record->mutable_matrix()->clear();
  for (const auto& [axis, value] : combination) (*record->mutable_matrix())[axis] = value;
  record->set_repetition(uint32_t(repetition));
  record->mutable_provenance()->Clear();
  record->mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  record->set_agent_version(kVersion);
  (*record->mutable_params())[kPauseParam] =
      absl::StrFormat("%g", absl::ToDoubleSeconds(spec_.runs.pause_between_runs));
}

absl::Status SeriesRunner::FinishConditions(const SessionInfo* info) {
  v1::MachineConditions& conditions = result_.conditions;
  if (info != nullptr && !info->backend_version.empty()) {
    (*conditions.mutable_backend_versions())[spec_.backend] = info->backend_version;
  }
  if (info != nullptr) {
    for (const auto& [key, value] : info->conditions) {
      (*conditions.mutable_backend_attributes())[absl::StrCat(spec_.backend, ".", key)] = value;
    }
  }
  conditions.set_fingerprint(ConditionsFingerprint(conditions));
  auto folder = SeriesFolderWriter::Open(options_.env, options_.out_dir, conditions);
  if (!folder.ok()) {
    return absl::Status(folder.status().code(),
                        absl::StrCat("series folder ", options_.out_dir, ": ", folder.status().message()));
  }
  folder_ = std::move(*folder);
  if (options_.on_conditions) {
    if (auto s = options_.on_conditions(conditions); !s.ok() && result_.delivery_status.ok()) {
      result_.delivery_status = s;
      Progress(absl::StrCat("records will not be sent: ", s.message()));
    }
  }
  std::vector<RunResult> held = std::move(held_);
  held_.clear();
  for (RunResult& run : held) {
    if (auto s = Keep(std::move(run)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SeriesRunner::Keep(RunResult run) {
  if (folder_ == nullptr) {
    held_.push_back(std::move(run));
    return absl::OkStatus();
  }
  v1::RunRecord& record = run.record;
  record.set_conditions_fingerprint(result_.conditions.fingerprint());
  FitRecordLimit(&record);
  if (auto s = folder_->Add(record); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("series folder ", options_.out_dir, ": ", s.message()));
  }
  if (options_.outbox != nullptr) {
    if (auto s = options_.outbox->Append(record); !s.ok() && result_.delivery_status.ok()) {
      result_.delivery_status = absl::Status(
          s.code(), absl::StrCat("outbox: ", s.message(), " (the records stay in the series folder ",
                                 options_.out_dir, "; send them with `benchfleet-agent import`)"));
      Progress(ToStd(result_.delivery_status.message()));
    }
  }
  if (record.status().code() != v1::RunStatus::CODE_OK) ++result_.failed_runs;
  result_.runs.push_back(std::move(run));
  return absl::OkStatus();
}

}  // namespace benchfleet::agent
