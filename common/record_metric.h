// Appends a measured figure to a run record: the one way the agent's parts (device sampler,
// steady state, simulated series) add a metric by name, value and unit. Header only; thread-safe
// on distinct records.
#ifndef BENCHFLEET_COMMON_RECORD_METRIC_H_
#define BENCHFLEET_COMMON_RECORD_METRIC_H_

#include <string>
#include <string_view>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet {

inline void AddMetric(v1::RunRecord* record, std::string_view name, double value, std::string_view unit) {
  v1::Metric* metric = record->add_metrics();
  metric->set_name(std::string(name));
  metric->set_value(value);
  metric->set_unit(std::string(unit));
}

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_RECORD_METRIC_H_
