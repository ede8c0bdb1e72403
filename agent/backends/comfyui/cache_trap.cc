#include "agent/backends/comfyui/cache_trap.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace benchfleet::agent::comfyui {

std::vector<std::string> CachedMeasuredNodes(const Workflow& workflow, const std::vector<SetTarget>& targets,
                                             const std::vector<std::string>& cached) {
  std::set<std::string> roots;
  for (const SetTarget& t : targets) roots.insert(t.node);
  const std::set<std::string> dependent = workflow.Dependents(roots);
  std::vector<std::string> out;
  for (const std::string& node : cached) {
    if (dependent.contains(node)) out.push_back(node);
  }
  return out;
}

std::string CachedNodesReason(v1::Phase phase, const Workflow& workflow, const std::vector<SetTarget>& targets,
                              const std::vector<std::string>& cached) {
  if (phase == v1::PHASE_COLD && !cached.empty()) {
    return absl::StrCat("cold run: execution_cached lists ", cached.size(), " node(s) (", absl::StrJoin(cached, ", "),
                        ") after POST /free: a cold state could not be established");
  }
  const std::vector<std::string> measured = CachedMeasuredNodes(workflow, targets, cached);
  if (measured.empty()) return "";
  std::vector<std::string> names;
  for (const SetTarget& t : targets) names.push_back(t.name);
  return absl::StrCat("execution_cached lists node(s) ", absl::StrJoin(measured, ", "),
                      " that depend on values the spec sets per run (", absl::StrJoin(names, ", "),
                      "): the work being measured was skipped");
}

std::string OutputHistory::Check(const std::string& inputs, const std::vector<std::string>& image_sha256s,
                                 absl::Duration wall, absl::Duration threshold) const {
  if (image_sha256s.empty() || wall >= threshold) return "";
  auto it = seen_.find(inputs);
  if (it == seen_.end()) return "";
  for (const std::vector<std::string>& earlier : it->second) {
    if (earlier == image_sha256s) {
      return absl::StrCat("the images equal an earlier run's of the same inputs and the run took ",
                          absl::FormatDuration(wall), " (under cache_hit_threshold ", absl::FormatDuration(threshold),
                          "): served from a cache");
    }
  }
  return "";
}

void OutputHistory::Remember(const std::string& inputs, const std::vector<std::string>& image_sha256s) {
  std::vector<std::vector<std::string>>& list = seen_[inputs];
  if (std::find(list.begin(), list.end(), image_sha256s) == list.end()) list.push_back(image_sha256s);
}

}  // namespace benchfleet::agent::comfyui
