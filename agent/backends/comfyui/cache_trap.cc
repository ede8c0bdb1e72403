#include "agent/backends/comfyui/cache_trap.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace benchfleet::agent::comfyui {
namespace {

// OUTPUT_NODE classes of ComfyUI's core (nodes.py, comfy_extras) and of the websocket_image_save
// custom node it ships: they save or show a result, the work measured is upstream of them.
constexpr const char* kOutputClasses[] = {"SaveImage",    "PreviewImage", "SaveAnimatedWEBP", "SaveAnimatedPNG",
                                          "SaveLatent",   "SaveAudio",    "PreviewAudio",     "SaveVideo",
                                          "SaveWEBM",     "SaveImageWebsocket"};

}  // namespace

bool IsKnownOutputClass(const std::string& class_type) {
  return std::find_if(std::begin(kOutputClasses), std::end(kOutputClasses),
                      [&](const char* c) { return class_type == c; }) != std::end(kOutputClasses);
}

std::set<std::string> OutputNodes(const Graph& graph, const std::vector<std::string>& image_nodes) {
  std::set<std::string> linked_to;
  for (const auto& [id, node] : graph.nodes()) linked_to.insert(node.upstream.begin(), node.upstream.end());
  std::set<std::string> out(image_nodes.begin(), image_nodes.end());
  for (const auto& [id, node] : graph.nodes()) {
    if (IsKnownOutputClass(node.class_type) || !linked_to.contains(id)) out.insert(id);
  }
  return out;
}

std::string NameNodes(const Graph& graph, const std::vector<std::string>& nodes) {
  std::vector<std::string> names;
  for (const std::string& id : nodes) {
    auto it = graph.nodes().find(id);
    names.push_back(it == graph.nodes().end() ? id : absl::StrCat(id, " (", it->second.class_type, ")"));
  }
  return absl::StrJoin(names, ", ");
}

std::vector<std::string> CachedMeasuredNodes(const Graph& graph, const std::vector<SetTarget>& targets,
                                             const std::vector<std::string>& cached) {
  std::set<std::string> roots;
  for (const SetTarget& t : targets) roots.insert(t.node);
  const std::set<std::string> dependent = graph.Dependents(roots);
  std::vector<std::string> out;
  for (const std::string& node : cached) {
    if (dependent.contains(node)) out.push_back(node);
  }
  return out;
}

std::string ReportedCacheHitReason(v1::Phase phase, const Graph& graph,
                                   const std::vector<SetTarget>& per_run_targets, const CacheReport& report) {
  const std::vector<std::string>& cached = report.cached;
  if (cached.empty()) return "";  // the server says it reused nothing: whatever the timing, the run measured
  if (phase == v1::PHASE_COLD) {
    return absl::StrCat("cold run: execution_cached lists ", cached.size(), " node(s) after POST /free, ",
                        NameNodes(graph, cached), ": a cold state could not be established");
  }
  if (report.executed.empty()) {
    return absl::StrCat("ComfyUI executed no node: execution_cached lists every node of the run, ",
                        NameNodes(graph, cached), ": nothing was measured");
  }
  const std::vector<std::string> measured = CachedMeasuredNodes(graph, per_run_targets, cached);
  if (!measured.empty()) {
    std::vector<std::string> names;
    for (const SetTarget& t : per_run_targets) names.push_back(t.name);
    return absl::StrCat("execution_cached lists node(s) ", NameNodes(graph, measured),
                        " that depend on values the spec sets per run (", absl::StrJoin(names, ", "),
                        "): the work being measured was skipped");
  }
  const std::set<std::string> outputs = OutputNodes(graph, report.image_nodes);
  const bool only_outputs = std::all_of(report.executed.begin(), report.executed.end(),
                                        [&](const std::string& node) { return outputs.contains(node); });
  if (only_outputs) {
    std::vector<std::string> cached_work;
    for (const std::string& node : cached) {
      if (!outputs.contains(node)) cached_work.push_back(node);
    }
    if (cached_work.empty()) cached_work = cached;
    return absl::StrCat("only output node(s) ", NameNodes(graph, report.executed),
                        " executed; execution_cached lists the work upstream of them, ",
                        NameNodes(graph, cached_work), ": the work being measured was skipped");
  }
  return "";
}

std::string OutputHistory::Check(const std::string& inputs, const std::vector<std::string>& image_sha256s,
                                 absl::Duration wall, absl::Duration threshold) const {
  if (image_sha256s.empty() || wall >= threshold) return "";
  auto it = seen_.find(inputs);
  if (it == seen_.end()) return "";
  if (std::find(it->second.begin(), it->second.end(), image_sha256s) == it->second.end()) return "";
  return absl::StrCat("served from a cache, inferred from timing: ComfyUI reported no execution_cached message, and "
                      "the images equal an earlier run's of the same inputs while the run took ",
                      absl::FormatDuration(wall), " (under cache_hit_threshold ", absl::FormatDuration(threshold), ")");
}

void OutputHistory::Remember(const std::string& inputs, const std::vector<std::string>& image_sha256s) {
  std::vector<std::vector<std::string>>& list = seen_[inputs];
  if (std::find(list.begin(), list.end(), image_sha256s) == list.end()) list.push_back(image_sha256s);
}

}  // namespace benchfleet::agent::comfyui
