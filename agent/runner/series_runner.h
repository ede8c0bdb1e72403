// SeriesRunner: runs one series of a spec on this machine with one backend, the same way for
// every backend. It owns what backends do not: the order of combinations and phases, call
// indices, repetitions, ids, the pause between runs, THROUGHPUT_DROP, the conditions of the
// series, and keeping every record (series folder, then outbox) between runs, never inside one.
//
// Per repetition, per matrix combination (matrix.h):
//   VALIDATION runs (when runs.validation > 0) on their own session, which is then closed;
//   COLD runs, each on a freshly opened session (the first call after Open is the cold one);
//   WARM runs on the session of the last cold run (with runs.warm.until, until the figures are
//   stable or the maximum is reached: warm_until.h); then Close.
// A combination whose session cannot be opened gets one FAILED record (the run it was opened
// for, with the reason and the backend's log tail) and the series goes on with the next one; a
// session that dies (alive() false) ends its combination. Nothing of the runner's own happens
// inside a timed run: records are written and queued after Run() returns, and on_timed_window
// lets the caller pause the uplink meanwhile.
// Owned by the run command (or a test); one Run() per runner, on one thread.
#ifndef BENCHFLEET_AGENT_RUNNER_SERIES_RUNNER_H_
#define BENCHFLEET_AGENT_RUNNER_SERIES_RUNNER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/backends/backend.h"
#include "agent/config/allow_list.h"
#include "agent/outbox/outbox.h"
#include "agent/probes/device_sampler.h"
#include "agent/runner/output_check.h"
#include "common/spec/series_spec.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "common/env.h"
#include "common/series_folder.h"

namespace benchfleet::agent {

// Params every record of a series carries, besides the backend's and its session's.
inline constexpr char kPauseParam[] = "pause_between_runs_seconds";
// Metric of the device's temperature read just before a run starts, where a probe exists.
inline constexpr char kDeviceTemperatureMetric[] = "device_temperature_at_start";

struct RunnerOptions {
  // Clock (pauses) and files (the series folder). Required.
  Env* env = nullptr;
  // The agent's allow-list: its allow.backends must list the spec's backend. Required.
  const AllowList* allow = nullptr;

  std::string agent_id;  // required
  // The task (this series on this agent); empty makes a new UUID.
  std::string task_id;
  // The task's attempt (TaskAssignment.attempt) this runner makes the runs of, stamped on every
  // record (RunRecord.task_attempt); 0 outside a fleet task.
  uint32_t task_attempt = 0;
  // This machine's conditions, captured once by the caller. The runner adds
  // backend_versions[backend] and backend_attributes["<backend>.<key>"] from the first session that
  // opens, and recomputes the fingerprint.
  v1::MachineConditions conditions;

  // The series folder: spec.yaml, conditions.json, runs.jsonl, runs.csv (and backend logs). It
  // must not hold a series already (runs.jsonl).
  std::string out_dir;
  // Where records are queued for the coordinator after the series folder has them; nullptr keeps
  // them in the folder only.
  Outbox* outbox = nullptr;

  // Called once, with the series' final conditions, before the first record is kept (the run
  // command starts the uplink here, so its Hello carries the backend's version). An error is
  // reported in SeriesResult::delivery_status; the series goes on.
  std::function<absl::Status(const v1::MachineConditions&)> on_conditions;
  // Called with true right before each timed run and false right after it (the run command
  // pauses the uplink meanwhile).
  std::function<void(bool timed)> on_timed_window;
  // Reads the accelerator's temperature in degrees Celsius just before a run (outside the timed
  // window), recorded as the metric device_temperature_at_start; nullopt or unset records none.
  std::function<std::optional<double>()> device_temperature;
  // Watches each timed run (agent/probes/device_sampler.h: the DeviceSampler adds device
  // memory, utilisation, power, temperature, clock, energy and THROTTLED/CONTENDED flags):
  // BeginRun right before the backend's Run, EndRun(record) right after it, inside the timed
  // window; its problems become progress lines. nullptr watches nothing. Outlives the runner.
  RunWatcher* run_watcher = nullptr;
  // One progress line per event (stderr in the run command); unset is silent.
  std::function<void(std::string_view)> progress;
  // Once stop is requested, the runner closes the session (stopping the server it measures) and
  // ends the series: it is looked at before every Open and every run, and the pause between runs
  // ends at once (Clock::WaitForStop). Give the backend the same token (BackendContext::stop) so
  // its own waits end too. A run in progress finishes and is kept; an Open that fails because of
  // the stop is not recorded. Never stopped when unset.
  std::stop_token stop;
};

// One run as the end-of-series report needs it.
struct RunResult {
  v1::RunRecord record;
  // CombinationLabel() of the record's combination.
  std::string label;
  // The fall below the reference (the median of the first warm calls: throughput_drop.h), as a
  // fraction, when flagged THROUGHPUT_DROP.
  std::optional<double> throughput_drop;
};

struct SeriesResult {
  std::string series;
  std::string task;
  std::string task_id;
  std::string backend;
  std::string out_dir;
  // The backend's throughput metric ("" when it has none) and the spec's threshold.
  std::string throughput_metric;
  double throughput_drop_threshold = 0;
  int repetitions = 1;
  // runs.warm.until when the spec gave it, and the metric its intervals are of (the backend's
  // main figure).
  std::optional<WarmUntil> warm_until;
  std::string warm_until_metric;
  // The conditions every record refers to (fingerprint included).
  v1::MachineConditions conditions;
  std::vector<Combination> combinations;

  // Every record kept, in run order.
  std::vector<RunResult> runs;
  int failed_runs = 0;
  // Combinations (per repetition) that ended before their planned runs: their session could not
  // be opened or died.
  int stopped_early = 0;
  // Why a combination stopped before its planned runs, one line each; sessions that did not
  // close cleanly.
  std::vector<std::string> notes;
  // The stop flag ended the series early.
  bool interrupted = false;
  // OK, or the first error queueing a record in the outbox or starting delivery (the records
  // are in the series folder all the same).
  absl::Status delivery_status;

  // True when every planned run was made and none FAILED, and the series was not interrupted
  // (warm calls that runs.warm.until ended as stable before its max count as planned).
  bool clean() const;
};

// FAILED_PRECONDITION when dir already holds a series (its runs.jsonl): a new series gets a new
// folder, so two series never mix in one runs.jsonl.
absl::Status CheckSeriesFolderIsNew(Env* env, const std::string& dir);

class SeriesRunner {
 public:
  // Checks everything that can be checked before running: the options, allow.backends
  // (PERMISSION_DENIED), that spec.backend is backend's name, the runs (warm needs cold;
  // runs.warm.until needs the backend's main figure), the matrix against the backend (INVALID_ARGUMENT with the spec's line) and that out_dir holds no
  // series yet. backend must outlive the runner.
  static absl::StatusOr<std::unique_ptr<SeriesRunner>> Create(const SeriesSpec& spec, Backend* backend,
                                                              RunnerOptions options);

  // The combinations, in run order.
  const std::vector<Combination>& combinations() const { return combinations_; }
  const std::string& task_id() const { return options_.task_id; }

  // Runs the series. FAILED runs are results, not errors: the status is an error only when the
  // series folder cannot be written, which stops the series (records kept so far stay), or
  // (FAILED_PRECONDITION) when called a second time.
  absl::StatusOr<SeriesResult> Run();

 private:
  SeriesRunner(const SeriesSpec& spec, Backend* backend, RunnerOptions options, std::vector<Combination> combos);

  // Runs one combination of one repetition. Returns an error only for the series folder.
  absl::Status RunCombination(const Combination& combination, int repetition);
  // Fills what the runner owns in a record and keeps it. Returns an error only for the folder.
  absl::Status Keep(RunResult run);
  // Fixes the conditions (backend version from info, when given), opens the series folder and
  // writes the records held until then.
  absl::Status FinishConditions(const SessionInfo* info);
  void FillIds(const Combination& combination, int repetition, v1::Phase phase, uint32_t call_index,
               v1::RunRecord* record);
  bool StopRequested();
  void Progress(std::string_view line);

  const SeriesSpec spec_;
  Backend* const backend_;
  RunnerOptions options_;
  const std::vector<Combination> combinations_;

  // The backend's declaration of its figures and the device sampler's, stamped on every record.
  std::vector<FigureDeclaration> figures_;
  SeriesResult result_;
  OutputCheck outputs_;                         // OUTPUT_MISMATCH over the whole series
  std::unique_ptr<SeriesFolderWriter> folder_;  // open once the conditions are final
  std::vector<RunResult> held_;                 // kept before the conditions were final
  int runs_started_ = 0;                        // Run() calls so far, for the pause
  bool ran_ = false;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_RUNNER_SERIES_RUNNER_H_
