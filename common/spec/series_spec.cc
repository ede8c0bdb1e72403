#include "common/spec/series_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <span>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/spec/spec_limits.h"
#include "common/yaml_error.h"
#include "common/string_views.h"
#include "common/yaml_text.h"

namespace benchfleet {
namespace {

// The fleet keys of the spec's root map (FleetFields).
absl::StatusOr<FleetFields> ParseFleetFields(const YAML::Node& root, const std::string& source) {
  const YamlErrorAt error(source);
  FleetFields fields;
  if (const YAML::Node node = root["targets"]) {
    absl::StatusOr<TargetSelector> targets = ParseTargets(node, source);
    if (!targets.ok()) return targets.status();
    fields.targets = *std::move(targets);
  }

  if (const YAML::Node node = root["deadline"]; node && !node.IsNull()) {
    const std::string text = node.IsScalar() ? node.Scalar() : "";
    const absl::Status bad = error(
        node, absl::StrCat("field deadline: must be a duration after submission (2h, 90m) or an RFC 3339 "
                           "time (2026-01-02T03:00:00Z), got '",
                           text, "'"));
    if (!node.IsScalar()) return bad;
    absl::Time at;
    std::string parse_error;
    if (absl::ParseTime(absl::RFC3339_full, text, &at, &parse_error)) {
      fields.deadline_at = at;
    } else {
      absl::StatusOr<absl::Duration> in = ParseSpecDuration(node, "deadline", source, kMaxSpecDeadline);
      if (absl::Duration d; !in.ok() && absl::ParseDuration(text, &d) && d > kMaxSpecDeadline) {
        return error(node, absl::StrCat("field deadline: ", DurationAboveBound(d, kMaxSpecDeadline)));
      }
      if (!in.ok()) return bad;
      if (*in <= absl::ZeroDuration()) return error(node, "field deadline: must be more than 0");
      fields.deadline_in = *in;
    }
  }

  if (const YAML::Node node = root["retry"]; node && !node.IsNull()) {
    if (!node.IsMap()) return error(node, "field retry: must be a map such as {max_attempts: 3}");
    for (const auto& kv : node) {
      const std::string key = kv.first.as<std::string>();
      if (key != "max_attempts") {
        return error(kv.first, absl::StrCat("field retry.", key, ": unknown key (expected max_attempts)"));
      }
      int n = 0;
      bool ok = kv.second.IsScalar();
      if (ok) {
        try {
          n = kv.second.as<int>();
        } catch (const YAML::Exception&) {
          ok = false;
        }
      }
      if (!ok || n < 1 || n > kMaxTaskAttempts) {
        return error(kv.second, absl::StrCat("field retry.max_attempts: must be a whole number from 1 to ",
                                             kMaxTaskAttempts, " (1: no retry)"));
      }
      fields.retry_max = n;
    }
  }

  if (const YAML::Node node = root["regression"]; node && !node.IsNull()) {
    if (!node.IsMap()) {
      return error(node, "field regression: must be a map such as {baseline_runs: 5, threshold: 0.05}");
    }
    for (const auto& kv : node) {
      const std::string key = kv.first.as<std::string>();
      const std::string text = kv.second.IsScalar() ? kv.second.Scalar() : "";
      if (key == "baseline_runs") {
        int n = 0;
        if (!absl::SimpleAtoi(text, &n) || n < kMinBaselineRuns || n > kMaxBaselineRuns) {
          return error(kv.second, absl::StrCat("field regression.baseline_runs: must be a whole number from ",
                                               kMinBaselineRuns, " to ", kMaxBaselineRuns, ", got '", text, "'"));
        }
        fields.baseline_runs = n;
      } else if (key == "threshold") {
        double t = 0;
        if (!absl::SimpleAtod(text, &t) || !std::isfinite(t) || t <= 0 || t >= 1) {
          return error(kv.second, absl::StrCat("field regression.threshold: must be a fraction between 0 and 1 "
                                               "(0.05 means 5%), got '",
                                               text, "'"));
        }
        fields.regression_threshold = t;
      } else {
        return error(kv.first, absl::StrCat("field regression.", key,
                                            ": unknown key (expected baseline_runs, threshold)"));
      }
    }
  }
  return fields;
}

constexpr const char* kRunsKeys[] = {"validation", "cold", "warm", "repetitions", "pause_between_runs",
                                     "throughput_drop_threshold"};
// The top-level keys besides the backend's own section (its key is the backend's name).
constexpr const char* kFixedTopKeys[] = {"series", "task", "backend", "runs", "outputs", "matrix",
                                         "targets", "deadline", "retry", "regression"};
constexpr const char* kOutputsKeys[] = {"deterministic"};
// Sanity bounds: a typo such as "warm: 40000000" fails here instead of running for a month.
constexpr int64_t kMaxRunsPerPhase = 1'000'000;
constexpr int64_t kMaxRepetitions = 100'000;
constexpr size_t kMaxNameLength = 128;

using ErrorAt = YamlErrorAt;

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

// A YAML value as the spec's author wrote it, for messages.
std::string Shown(const YAML::Node& node) {
  if (node.IsScalar() && node.Tag() == "!") return absl::StrCat("\"", node.Scalar(), "\" (quoted: a string)");
  if (node.IsScalar()) return absl::StrCat("'", node.Scalar(), "'");
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  return "nothing";
}

// Plain (unquoted) scalars are YAML's numbers and booleans; quoted ones are strings.
bool IsPlainScalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "?"; }

bool IsNameChar(char c, bool upper_ok) {
  return absl::ascii_isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'z') ||
         (upper_ok && c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '-';
}

// Checks that node is a map with only known keys, none twice.
absl::Status CheckKeys(const YAML::Node& node, std::string_view prefix, const std::vector<std::string>& known,
                       const ErrorAt& error) {
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    const std::string name = key.IsScalar() ? key.Scalar() : "?";
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return error(key, absl::StrCat("unknown key '", ToAbsl(prefix), name, "' (known keys: ",
                                     absl::StrJoin(known, ", "), ")"));
    }
    if (!seen.insert(name).second) {
      return error(key, absl::StrCat("key '", ToAbsl(prefix), name, "' is given twice"));
    }
  }
  return absl::OkStatus();
}

// A name such as a series or task: letters, digits, '.', '_', '-'.
absl::StatusOr<std::string> Name(const YAML::Node& node, std::string_view key, bool upper_ok, const ErrorAt& error) {
  const std::string allowed = upper_ok ? "letters, digits, '.', '_' and '-'"
                                       : "lower-case letters, digits, '.', '_' and '-'";
  if (!node.IsScalar() || node.Scalar().empty()) {
    return error(node, absl::StrCat(ToAbsl(key), " must be a non-empty name (", allowed, "), got ", Shown(node)));
  }
  const std::string& value = node.Scalar();
  const bool ok = value.size() <= kMaxNameLength && absl::ascii_isalnum(static_cast<unsigned char>(value[0])) &&
                  std::all_of(value.begin(), value.end(), [&](char c) { return IsNameChar(c, upper_ok); });
  if (!ok) {
    return error(node, absl::StrCat(ToAbsl(key), " must start with a letter or digit and hold only ", allowed,
                                    " (at most ", kMaxNameLength, " characters), got '", value, "'"));
  }
  return value;
}

absl::StatusOr<int> Count(const YAML::Node& node, std::string_view key, int64_t min, int64_t max,
                          const ErrorAt& error) {
  int64_t value = 0;
  if (!IsPlainScalar(node) || !absl::SimpleAtoi(node.Scalar(), &value) || value < min || value > max) {
    return error(node, absl::StrCat(ToAbsl(key), " must be a whole number from ", min, " to ", max, ", got ",
                                    Shown(node)));
  }
  return static_cast<int>(value);
}

// "2%", "0.5%": a number followed by '%', above 0 and below 100; returns the fraction (0.02).
std::optional<double> Percentage(const YAML::Node& node) {
  if (!node.IsScalar()) return std::nullopt;
  const std::string& text = node.Scalar();
  double percent = 0;
  const absl::string_view number = absl::string_view(text).substr(0, text.empty() ? 0 : text.size() - 1);
  // Digits and a decimal point only: SimpleAtod would also take " 2", "1e1" and "nan".
  const bool digits = !number.empty() && absl::ascii_isdigit(static_cast<unsigned char>(number[0])) &&
                      std::all_of(number.begin(), number.end(), [](char c) {
                        return absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '.';
                      });
  if (!digits || text.back() != '%' || !absl::SimpleAtod(number, &percent) || !std::isfinite(percent) ||
      percent <= 0 || percent >= 100) {
    return std::nullopt;
  }
  return percent / 100;
}

// runs.warm as a map: {until: {ci_halfwidth: 2%, max: 30, min: 5}}.
absl::StatusOr<WarmUntil> ParseWarmUntil(const YAML::Node& warm, const ErrorAt& error) {
  if (auto s = CheckKeys(warm, "runs.warm.", {"until"}, error); !s.ok()) return s;
  const YAML::Node until = warm["until"];
  constexpr const char* kForm = "{ci_halfwidth: 2%, max: 30} (min, the accepted calls before the test applies, "
                                "is optional)";
  if (!until) return error(warm, absl::StrCat("runs.warm as a map must be {until: ", kForm, "}"));
  if (!until.IsMap()) return error(until, absl::StrCat("runs.warm.until must be a map such as ", kForm, ", got ",
                                                       Shown(until)));
  if (auto s = CheckKeys(until, "runs.warm.until.", {"ci_halfwidth", "max", "min"}, error); !s.ok()) return s;
  WarmUntil result;
  result.line = LineOf(warm.begin()->first);  // the `until` key, the map's only one
  const YAML::Node halfwidth = until["ci_halfwidth"];
  if (!halfwidth) {
    return error(until, "runs.warm.until: missing key 'ci_halfwidth' (the largest half-width of the 95% confidence "
                        "interval of the median, relative to the median, e.g. 2%)");
  }
  const std::optional<double> fraction = Percentage(halfwidth);
  if (!fraction.has_value()) {
    return error(halfwidth, absl::StrCat("runs.warm.until.ci_halfwidth must be a percentage above 0% and below 100% "
                                         "such as 2% or 0.5%, got ",
                                         Shown(halfwidth)));
  }
  result.ci_halfwidth = *fraction;
  if (const YAML::Node min = until["min"]) {
    auto count = Count(min, "runs.warm.until.min", stats::kMinRunsForSpread, kMaxRunsPerPhase, error);
    if (!count.ok()) return count.status();
    result.min = *count;
  }
  const YAML::Node max = until["max"];
  if (!max) return error(until, "runs.warm.until: missing key 'max' (the most warm calls, e.g. 30)");
  auto count = Count(max, "runs.warm.until.max", result.min, kMaxRunsPerPhase, error);
  if (!count.ok()) return count.status();
  result.max = *count;
  return result;
}

absl::StatusOr<RunsSpec> ParseRuns(const YAML::Node& node, std::string_view source, const ErrorAt& error) {
  RunsSpec runs;
  if (node.IsNull()) return runs;
  if (!node.IsMap()) {
    return error(node, absl::StrCat("runs must be a map with the keys ", absl::StrJoin(kRunsKeys, ", "),
                                    ", got ", Shown(node)));
  }
  if (auto s = CheckKeys(node, "runs.", {std::begin(kRunsKeys), std::end(kRunsKeys)}, error); !s.ok()) return s;

  struct CountField {
    const char* key;
    int* out;
    int64_t min;
    int64_t max;
  };
  for (const CountField& field : {CountField{"validation", &runs.validation, 0, kMaxRunsPerPhase},
                                  CountField{"cold", &runs.cold, 0, kMaxRunsPerPhase},
                                  CountField{"warm", &runs.warm, 0, kMaxRunsPerPhase},
                                  CountField{"repetitions", &runs.repetitions, 1, kMaxRepetitions}}) {
    const YAML::Node value = node[field.key];
    if (!value) continue;
    if (field.out == &runs.warm && value.IsMap()) {
      auto until = ParseWarmUntil(value, error);
      if (!until.ok()) return until.status();
      runs.warm_until = *until;
      runs.warm = until->max;
      continue;
    }
    auto count = Count(value, absl::StrCat("runs.", field.key), field.min, field.max, error);
    if (!count.ok()) return count.status();
    *field.out = *count;
  }
  if (const YAML::Node value = node["pause_between_runs"]) {
    auto pause = ParseSpecDuration(value, "runs.pause_between_runs", source);
    if (!pause.ok()) return pause.status();
    runs.pause_between_runs = *pause;
  }
  if (const YAML::Node value = node["throughput_drop_threshold"]) {
    double threshold = 0;
    if (!IsPlainScalar(value) || !absl::SimpleAtod(value.Scalar(), &threshold) || !std::isfinite(threshold) ||
        threshold <= 0 || threshold >= 1) {
      return error(value, absl::StrCat("runs.throughput_drop_threshold must be a fraction between 0 and 1 "
                                       "(0.15 means 15%), got ",
                                       Shown(value)));
    }
    runs.throughput_drop_threshold = threshold;
  }
  if (runs.warm > 0 && runs.cold == 0) {
    return error(node["warm"], "runs.warm needs runs.cold of at least 1: the first call after the backend "
                               "is (re)opened is the cold run, never a warm one");
  }
  if (runs.validation == 0 && runs.cold == 0 && runs.warm == 0) {
    return error(node, "runs: nothing to run (validation, cold and warm are all 0)");
  }
  return runs;
}

absl::StatusOr<OutputsSpec> ParseOutputs(const YAML::Node& node, const ErrorAt& error) {
  OutputsSpec outputs;
  outputs.given = true;
  if (node.IsNull()) return outputs;
  if (!node.IsMap()) {
    return error(node, absl::StrCat("outputs must be a map with the key deterministic, got ", Shown(node)));
  }
  if (auto s = CheckKeys(node, "outputs.", {std::begin(kOutputsKeys), std::end(kOutputsKeys)}, error); !s.ok()) {
    return s;
  }
  if (const YAML::Node value = node["deterministic"]) {
    // true and false as YAML booleans (unquoted); per_machine as a word.
    bool flag = false;
    std::optional<OutputDeterminism> d;
    if (IsPlainScalar(value) && YAML::convert<bool>::decode(value, flag)) {
      d = flag ? OutputDeterminism::kEverywhere : OutputDeterminism::kNone;
    } else if (value.IsScalar() && value.Scalar() == "per_machine") {
      d = OutputDeterminism::kPerMachine;
    }
    if (!d.has_value()) {
      return error(value, absl::StrCat("outputs.deterministic must be true (the same outputs on every run and "
                                       "every machine), per_machine (on every run of one machine) or false, got ",
                                       Shown(value)));
    }
    outputs.deterministic = *d;
  }
  return outputs;
}

absl::StatusOr<std::vector<MatrixAxis>> ParseMatrix(const YAML::Node& node, const ErrorAt& error) {
  std::vector<MatrixAxis> axes;
  if (node.IsNull()) return axes;
  if (!node.IsMap()) {
    return error(node, absl::StrCat("matrix must be a map of axis: [values...], got ", Shown(node)));
  }
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    const std::string name = key.IsScalar() ? key.Scalar() : "";
    const bool name_ok = !name.empty() && name.size() <= kMaxNameLength && name[0] >= 'a' && name[0] <= 'z' &&
                         std::all_of(name.begin(), name.end(), [](char c) {
                           return (c >= 'a' && c <= 'z') || absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
                                  c == '_';
                         });
    if (!name_ok) {
      return error(key, absl::StrCat("matrix axis names must be lower_snake_case (a-z, 0-9, '_'), got ",
                                     Shown(key)));
    }
    if (!seen.insert(name).second) return error(key, absl::StrCat("key 'matrix.", name, "' is given twice"));
    const YAML::Node& list = entry.second;
    if (!list.IsSequence() || list.size() == 0) {
      return error(list.IsNull() ? key : list,
                   absl::StrCat("matrix.", name, " must be a non-empty list of values, got ", Shown(list)));
    }
    MatrixAxis axis{name, {}, LineOf(key)};
    std::set<std::string> values;
    for (const YAML::Node& item : list) {
      if (!item.IsScalar() || item.Scalar().empty()) {
        return error(item, absl::StrCat("matrix.", name, " values must be non-empty scalars, got ", Shown(item)));
      }
      if (!values.insert(item.Scalar()).second) {
        return error(item, absl::StrCat("matrix.", name, " lists '", item.Scalar(), "' twice"));
      }
      axis.values.push_back(item.Scalar());
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

absl::StatusOr<SeriesSpec> Parse(const YAML::Node& root, std::string_view text, std::string_view source) {
  const ErrorAt error(source);
  SeriesSpec spec;
  spec.source = std::string(source);
  spec.text = std::string(text);
  std::vector<std::string> known(std::begin(kFixedTopKeys), std::end(kFixedTopKeys));
  if (!root.IsMap()) {
    return error(root, absl::StrCat("the top level must be a map with the keys ", absl::StrJoin(known, ", "),
                                    " and the backend's section; got ", Shown(root)));
  }

  // The backend names its own section's key, so it is read before the keys are checked.
  if (const YAML::Node node = root["backend"]) {
    auto backend = Name(node, "backend", /*upper_ok=*/false, error);
    if (!backend.ok()) return backend.status();
    if (std::find(known.begin(), known.end(), *backend) != known.end()) {
      return error(node, absl::StrCat("backend '", *backend, "' is a key of the spec itself, not a backend name"));
    }
    spec.backend = *backend;
    known.insert(known.begin() + 3, spec.backend);  // after "backend", as in the README
  }
  if (auto s = CheckKeys(root, "", known, error); !s.ok()) return s;
  for (const char* required : {"series", "task", "backend"}) {
    if (!root[required]) return error(root, absl::StrCat("missing key '", required, "'"));
  }

  auto series = Name(root["series"], "series", /*upper_ok=*/true, error);
  if (!series.ok()) return series.status();
  spec.series = *series;
  auto task = Name(root["task"], "task", /*upper_ok=*/true, error);
  if (!task.ok()) return task.status();
  spec.task = *task;

  if (const YAML::Node section = root[spec.backend]) {
    if (!section.IsMap() && !section.IsNull()) {
      return error(section, absl::StrCat(spec.backend, " must be a map (the settings of the ", spec.backend,
                                         " backend), got ", Shown(section)));
    }
    spec.backend_section = section;
    for (const auto& entry : root) {
      if (entry.first.IsScalar() && entry.first.Scalar() == spec.backend) {
        spec.backend_section_line = LineOf(entry.first);
      }
    }
  }
  if (const YAML::Node node = root["runs"]) {
    auto runs = ParseRuns(node, source, error);
    if (!runs.ok()) return runs.status();
    spec.runs = *runs;
  }
  if (const YAML::Node node = root["outputs"]) {
    auto outputs = ParseOutputs(node, error);
    if (!outputs.ok()) return outputs.status();
    spec.outputs = *outputs;
  }
  if (const YAML::Node node = root["matrix"]) {
    auto matrix = ParseMatrix(node, error);
    if (!matrix.ok()) return matrix.status();
    spec.matrix = std::move(*matrix);
  }
  absl::StatusOr<FleetFields> fleet = ParseFleetFields(root, spec.source);
  if (!fleet.ok()) return fleet.status();
  spec.fleet = *std::move(fleet);
  return spec;
}

}  // namespace

absl::StatusOr<absl::Duration> ParseSpecDuration(const YAML::Node& node, std::string_view key,
                                                 std::string_view source_name, absl::Duration max) {
  const ErrorAt error(source_name);
  auto bad = [&] {
    return error(node, absl::StrCat(ToAbsl(key), " must be a duration such as 2s or 500ms (units ns, us, ms, "
                                                 "s, m, h), got ",
                                    Shown(node)));
  };
  if (!node.IsScalar()) return bad();
  const std::string& text = node.Scalar();
  absl::Duration d;
  // absl also reads "-1s" and "inf"; neither is a pause or a timeout.
  if (text.empty() || !(absl::ascii_isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.') ||
      !absl::ParseDuration(text, &d) || d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return bad();
  }
  if (std::string above = DurationAboveBound(d, max); !above.empty()) {
    return error(node, absl::StrCat(ToAbsl(key), " ", above));
  }
  return d;
}

absl::StatusOr<SeriesSpec> ParseSeriesSpec(std::string_view text, std::string_view source_name) {
  // Binary or non-UTF-8 bytes would reach yaml-cpp (and the protobuf string fields a spec's values
  // end up in) as garbage: refuse them first, at their line and column.
  if (absl::Status s = CheckYamlText(text, source_name); !s.ok()) return s;
  // yaml-cpp reports everything by exception; none may cross this boundary.
  try {
    return Parse(YAML::Load(std::string(text)), text, source_name);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(source_name), ":", e.mark.line + 1, ":",
                                                   e.mark.column + 1, ": not valid YAML: ", e.msg));
  }
}

absl::StatusOr<SeriesSpec> LoadSeriesSpec(Env* env, const std::string& path) {
  auto text = env->ReadFile(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(), absl::StrCat("cannot read series spec: ", text.status().message()));
  }
  return ParseSeriesSpec(*text, path);
}

}  // namespace benchfleet
