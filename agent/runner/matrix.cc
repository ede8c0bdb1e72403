#include "agent/runner/matrix.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/string_views.h"

namespace benchfleet::agent {

absl::StatusOr<std::vector<Combination>> ExpandMatrix(const SeriesSpec& spec, const Backend& backend) {
  const std::vector<std::string> known = backend.matrix_axes();
  std::vector<MatrixAxis> axes;
  for (const MatrixAxis& axis : spec.matrix) {
    if (std::find(known.begin(), known.end(), axis.name) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          spec.source, ":", axis.line, ": matrix axis '", axis.name, "' is not one the ", backend.name(),
          " backend understands (its axes: ", known.empty() ? "none" : absl::StrJoin(known, ", "), ")"));
    }
    axes.push_back(axis);
  }
  for (const std::string& name : known) {
    const bool listed = std::any_of(spec.matrix.begin(), spec.matrix.end(),
                                    [&](const MatrixAxis& axis) { return axis.name == name; });
    if (listed) continue;
    std::vector<std::string> values = backend.default_axis_values(name);
    if (!values.empty()) axes.push_back(MatrixAxis{name, std::move(values), 0});
  }

  std::vector<Combination> combinations = {Combination{}};
  for (const MatrixAxis& axis : axes) {
    std::vector<Combination> next;
    next.reserve(combinations.size() * axis.values.size());
    for (const Combination& outer : combinations) {
      for (const std::string& value : axis.values) {
        Combination c = outer;
        c[axis.name] = value;
        next.push_back(std::move(c));
      }
    }
    combinations = std::move(next);
  }
  for (const Combination& c : combinations) {
    if (absl::Status s = backend.CheckCombination(c); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(spec.source, ": matrix combination ", CombinationLabel(c), ": ",
                                                 s.message()));
    }
  }
  return combinations;
}

std::string CombinationLabel(const Combination& combination) {
  std::vector<std::string> parts;
  if (auto it = combination.find("mode"); it != combination.end()) parts.push_back(it->second);
  for (const auto& [name, value] : combination) {
    if (name != "mode") parts.push_back(absl::StrCat(name, "=", value));
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, " ");
}

}  // namespace benchfleet::agent
