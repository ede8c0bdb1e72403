// What the deploy tests read out of a PromQL expression without a PromQL parser: the metric
// names it selects and the values a label matcher names. Enough for the expressions of deploy/
// (Grafana's $variables and label_values(...) included); tests/prometheus/ has a real Prometheus
// parse every one. Pure; thread-safe.
#ifndef BENCHFLEET_TESTS_DEPLOY_PROMQL_NAMES_H_
#define BENCHFLEET_TESTS_DEPLOY_PROMQL_NAMES_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace benchfleet::testing {

// Returns the metric names `expr` selects: identifiers outside strings, label matchers ({...}),
// ranges ([...]) and grouping clauses (by/without/on/ignoring/group_left/group_right (...)), that
// are not functions, keywords or Grafana variables. For Grafana's `label_values(selector, label)`
// only the selector counts.
std::set<std::string> MetricNamesIn(std::string_view expr);

struct LabelMatcher {
  std::string op;  // "=", "=~", "!=", "!~"
  std::string value;
};

// Returns every matcher of `label` in `expr`, in order.
std::vector<LabelMatcher> MatchersOf(std::string_view expr, const std::string& label);

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_DEPLOY_PROMQL_NAMES_H_
