// Reading and printing a run's figures: a metric's value and unit by name, and the one number
// format every runner output uses. Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_RUNNER_FIGURES_H_
#define BENCHFLEET_AGENT_RUNNER_FIGURES_H_

#include <optional>
#include <string>
#include <string_view>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::agent {

// Returns the value of the record's metric called name; nullopt when it has none.
std::optional<double> MetricValue(const v1::RunRecord& record, std::string_view name);

// Returns the unit of the record's metric called name; "" when it has none.
std::string MetricUnit(const v1::RunRecord& record, std::string_view name);

// Formats a figure for people: one decimal from 1 up ("52.9", "1234.5"), three significant
// digits below ("0.0532").
std::string FormatFigure(double value);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_RUNNER_FIGURES_H_
