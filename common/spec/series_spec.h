// The series spec: the YAML that says what a series runs (which backend with which settings, how
// many validation, cold and warm runs, the matrix of combinations). The same text is what
// `benchfleet-agent run SPEC.yaml` reads and what a coordinator will send to agents, so it is
// parsed here, once, for every backend. Its schema: common/spec/series-spec.schema.json and the
// "Series spec" section of agent/README.md. Bad specs fail fast with the file, line and key.
// Plain data and pure functions; thread-safe (a parsed SeriesSpec is not modified afterwards).
#ifndef BENCHFLEET_COMMON_SPEC_SERIES_SPEC_H_
#define BENCHFLEET_COMMON_SPEC_SERIES_SPEC_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/env.h"
#include "common/output_determinism.h"
#include "common/spec/target_selector.h"
#include "common/stats/spread.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet {

// The name the spec is copied under in the series folder, verbatim.
inline constexpr char kSpecFile[] = "spec.yaml";

// Upper bounds of the durations of a spec (agent/README.md "Series spec", and the schema): a typo
// such as "pause_between_runs: 100000000h" fails at parse time, file and line named, instead of
// holding an agent for eleven thousand years. Pauses, cooldowns and timeouts: at most a day.
inline constexpr absl::Duration kMaxSpecDuration = absl::Hours(24);
// A stop grace (SIGTERM to SIGKILL of a server the agent stops): at most 10 minutes, so a stop or
// a cancel never waits longer than that for a server to go.
inline constexpr absl::Duration kMaxStopGrace = absl::Minutes(10);
// The fleet deadline (read by the coordinator): at most 30 days after submission.
inline constexpr absl::Duration kMaxSpecDeadline = absl::Hours(24 * 30);

// The spec's fleet keys: `targets` (which agents), `deadline` (a duration after submission or an
// RFC 3339 time), `retry` ({max_attempts: N}) and `regression` ({baseline_runs, threshold}), each
// checked with its line named when present; their bounds are in spec_limits.h. Absent: no targets
// (a spec run by one agent alone needs none; the coordinator refuses a submission without them),
// no deadline, no retry, the coordinator's regression policy.
struct FleetFields {
  std::optional<TargetSelector> targets;
  std::optional<int> baseline_runs;            // regression.baseline_runs
  std::optional<double> regression_threshold;  // regression.threshold
  std::optional<absl::Time> deadline_at;      // an RFC 3339 time
  std::optional<absl::Duration> deadline_in;  // after submission
  int retry_max = 1;

  std::optional<absl::Time> DeadlineFor(absl::Time submitted) const {
    if (deadline_at.has_value()) return deadline_at;
    if (deadline_in.has_value()) return submitted + *deadline_in;
    return std::nullopt;
  }
};


// Returns "" when d is at most max, else the end of an error message naming the bound:
// "must be at most 24h, got 100000000h". For the backends' own duration keys (inline: the
// backends read their sections without linking the spec's parser).
inline std::string DurationAboveBound(absl::Duration d, absl::Duration max) {
  if (d <= max) return "";
  return absl::StrCat("must be at most ", absl::FormatDuration(max), ", got ", absl::FormatDuration(d));
}

// runs.warm.until: the warm calls repeat until the confidence interval of the median of the
// backend's main figure (over the accepted warm calls of the combination and repetition) is
// narrow enough, or until max calls. E.g. `warm: {until: {ci_halfwidth: 2%, max: 30}}`.
struct WarmUntil {
  // The largest relative half-width of the interval, (high - low) / 2 / median, as a fraction
  // (0.02 for "2%").
  double ci_halfwidth = 0;
  // Accepted warm calls needed before the test applies: at least stats::kMinRunsForSpread.
  int min = stats::kMinRunsForSpread;
  // The most warm calls made (RunsSpec::warm holds the same number).
  int max = 0;
  int line = 0;  // 1-based line of the `until` key in the spec
};

// How many runs of each phase, and their pacing (runs: in the spec).
struct RunsSpec {
  // VALIDATION runs first, one per input set (input_index 0, 1, ...).
  int validation = 0;
  // COLD runs: each is the first call after the backend's session is (re)opened.
  int cold = 1;
  // WARM runs after the last cold run, on the same session; call_index 1, 2, ... With
  // warm_until, the most warm runs (warm_until->max): fewer are made once the figures are stable.
  int warm = 0;
  // Set when runs.warm is `{until: {...}}` rather than a count.
  std::optional<WarmUntil> warm_until;
  // How many times the whole sequence (every combination, every phase) is repeated.
  int repetitions = 1;
  // Waited (on the injected clock) before every run but the series' first one.
  absl::Duration pause_between_runs = absl::ZeroDuration();
  // A warm call whose throughput falls more than this fraction below the first warm call's of
  // its combination and repetition is flagged THROUGHPUT_DROP.
  double throughput_drop_threshold = 0.15;
};

// What the spec expects of the runs' outputs (outputs: in the spec).
struct OutputsSpec {
  // outputs.deterministic: true (default), per_machine or false (common/output_determinism.h).
  OutputDeterminism deterministic = OutputDeterminism::kEverywhere;
  // The spec has an outputs: section: every record then says what it expects
  // (params.outputs_deterministic), so the guide reads it from the records.
  bool given = false;
};

// One named axis of the matrix, its values in the spec's order.
struct MatrixAxis {
  std::string name;
  std::vector<std::string> values;
  int line = 0;  // 1-based line of the axis in the spec
};

struct SeriesSpec {
  // Where the text came from ("examples/series/x.yaml", "coordinator task 42"), for messages.
  std::string source;
  // The spec exactly as given: copied verbatim into the series folder (spec.yaml).
  std::string text;

  // The series' name; every record's series_id.
  std::string series;
  // The task name shared across machines; every record's task.
  std::string task;
  // The backend's name, e.g. "llama-server".
  std::string backend;
  // The mapping under the key equal to the backend's name (its settings, checked by the
  // backend's factory); a null node when the spec has none.
  YAML::Node backend_section;
  int backend_section_line = 0;  // 1-based line of its key; 0 when the spec has none

  RunsSpec runs;

  OutputsSpec outputs;

  // The matrix axes in the spec's order; empty when the spec has no matrix.
  std::vector<MatrixAxis> matrix;

  // The fleet keys, which the coordinator reads (coordinator/scheduler/README.md); an agent
  // running a spec alone checks them and does not use them.
  FleetFields fleet;
};

// Parses a spec. source_name names it in messages ("SOURCE:LINE: ..."). INVALID_ARGUMENT naming
// the key and its line for unknown keys, wrong types, missing keys and values out of range.
absl::StatusOr<SeriesSpec> ParseSeriesSpec(std::string_view text, std::string_view source_name);

// Reads and parses the spec file at path (NOT_FOUND and friends from the Env when unreadable).
absl::StatusOr<SeriesSpec> LoadSeriesSpec(Env* env, const std::string& path);

// Parses a spec duration: "0", or a number with a unit, repeated: "500ms", "2s", "1m30s", "1.5h"
// (units ns, us, ms, s, m, h). Negative and infinite durations are refused, and so are durations
// above max ("SOURCE:LINE: KEY must be at most 24h, got 100000000h"). INVALID_ARGUMENT
// ("SOURCE:LINE: KEY must be a duration such as 2s or 500ms (got 'x')") otherwise. For backends'
// sections too, so every duration in a spec reads the same.
absl::StatusOr<absl::Duration> ParseSpecDuration(const YAML::Node& node, std::string_view key,
                                                 std::string_view source_name,
                                                 absl::Duration max = kMaxSpecDuration);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_SPEC_SERIES_SPEC_H_
