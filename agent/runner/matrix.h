// The matrix of a series: the spec's named axes (plus the backend's default axes) combined into
// the list of combinations the runner measures, in order. Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_RUNNER_MATRIX_H_
#define BENCHFLEET_AGENT_RUNNER_MATRIX_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/backends/backend.h"
#include "common/spec/series_spec.h"

namespace benchfleet::agent {

// Returns the combinations to run, in order: the cartesian product of the axes, the first axis
// outermost (it changes slowest). The axes are the spec's, in the spec's order, then each axis
// of backend.matrix_axes() the spec does not list and whose default_axis_values() is non-empty,
// in matrix_axes() order. No axis at all gives one empty combination. INVALID_ARGUMENT (with the
// spec's line) for an axis the backend does not understand, or a combination its
// CheckCombination refuses.
absl::StatusOr<std::vector<Combination>> ExpandMatrix(const SeriesSpec& spec, const Backend& backend);

// Returns a short name of a combination for the operator: the mode's value first ("gpu"), then
// the other axes as name=value in name order ("gpu n_predict=128"); "-" when it is empty.
std::string CombinationLabel(const Combination& combination);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_RUNNER_MATRIX_H_
