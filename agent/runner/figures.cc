#include "agent/runner/figures.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace benchfleet::agent {

std::optional<double> MetricValue(const v1::RunRecord& record, std::string_view name) {
  for (const v1::Metric& metric : record.metrics()) {
    if (metric.name() == name) return metric.value();
  }
  return std::nullopt;
}

std::string MetricUnit(const v1::RunRecord& record, std::string_view name) {
  for (const v1::Metric& metric : record.metrics()) {
    if (metric.name() == name) return metric.unit();
  }
  return "";
}

std::string FormatFigure(double value) {
  if (value == 0 || std::fabs(value) >= 1) return absl::StrFormat("%.1f", value);
  return absl::StrFormat("%.3g", value);
}

}  // namespace benchfleet::agent
