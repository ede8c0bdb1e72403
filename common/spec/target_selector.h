// TargetSelector: which agents a series goes to, from the spec's `targets` key: `all`, or a map
// with `agents: [id, ...]` and/or `labels: [expression, ...]` (every expression must hold on the
// agent's latest labels). Expressions: "key=value" (or "=="), "key!=value", "key in (a, b)",
// "key notin (a, b)", "key" (the label is set), "!key" (it is not). See
// coordinator/scheduler/README.md. Parsed with the rest of the spec (series_spec.h).
// Plain data and pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_SPEC_TARGET_SELECTOR_H_
#define BENCHFLEET_COMMON_SPEC_TARGET_SELECTOR_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "benchfleet/v1/conditions.pb.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet {

struct LabelExpression {
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
  Op op = Op::kEquals;
  std::string key;
  std::set<std::string> values;  // one for kEquals / kNotEquals
  std::string text;              // as written, for messages
};

struct TargetSelector {
  bool all = false;
  std::vector<std::string> agents;  // empty: any agent
  std::vector<LabelExpression> labels;

  // True when the agent is selected: `all`, or in `agents` (when given) and every label
  // expression holds on the labels of its latest conditions.
  bool Matches(std::string_view agent_id, const v1::MachineConditions& conditions) const;

  // Returns the selector as the spec said it, e.g. "agents [a, b], labels [class=a100]".
  std::string Describe() const;
};

// Parses one label expression. INVALID_ARGUMENT with the reason (no source or line).
absl::StatusOr<LabelExpression> ParseLabelExpression(std::string_view text);

// Parses the spec's `targets` node (null or undefined when the spec has none). INVALID_ARGUMENT
// "SOURCE:LINE: field targets...: reason".
absl::StatusOr<TargetSelector> ParseTargets(const YAML::Node& node, std::string_view source);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_SPEC_TARGET_SELECTOR_H_
