#include "agent/runner/figures.h"

#include "common/figures.h"

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

std::string FormatFigure(double value) { return FormatFigureNumber(value); }

}  // namespace benchfleet::agent
