// The cache trap: ComfyUI serves a node from its execution cache when the node's inputs (and
// everything upstream) equal the last prompt's, so a run can "finish" without doing the work it
// measures. This decides when a run is flagged CACHE_HIT: (1) execution_cached lists a node that
// depends, directly or through upstream links, on a value the spec sets per run; (2) a cold run
// (after POST /free) reports any cached node: a cold state could not be established; (3) its
// images equal an earlier run's of the same inputs and it took less than cache_hit_threshold.
// Owner: the ComfyUI backend. Pure functions; an OutputHistory is used from one thread.
#ifndef BENCHFLEET_AGENT_BACKENDS_COMFYUI_CACHE_TRAP_H_
#define BENCHFLEET_AGENT_BACKENDS_COMFYUI_CACHE_TRAP_H_

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/backends/comfyui/workflow.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::agent::comfyui {

inline constexpr char kCacheHitFlag[] = "CACHE_HIT";

// Returns the nodes of `cached` whose result depends on a value of `targets`, in cached's order.
std::vector<std::string> CachedMeasuredNodes(const Workflow& workflow, const std::vector<SetTarget>& targets,
                                             const std::vector<std::string>& cached);

// Returns the reason to flag a run CACHE_HIT from its execution_cached nodes, "" when there is
// none. For a COLD run any cached node is a reason ("... a cold state could not be established").
std::string CachedNodesReason(v1::Phase phase, const Workflow& workflow, const std::vector<SetTarget>& targets,
                              const std::vector<std::string>& cached);

// The images each set of inputs gave so far (inputs: the substituted graph's sha256).
class OutputHistory {
 public:
  // Returns the reason to flag a run CACHE_HIT when an earlier run of the same inputs gave the
  // same images and this one took less than threshold; "" otherwise.
  std::string Check(const std::string& inputs, const std::vector<std::string>& image_sha256s, absl::Duration wall,
                    absl::Duration threshold) const;

  // Remembers what a successful run of inputs gave.
  void Remember(const std::string& inputs, const std::vector<std::string>& image_sha256s);

 private:
  std::map<std::string, std::vector<std::vector<std::string>>> seen_;
};

}  // namespace benchfleet::agent::comfyui

#endif  // BENCHFLEET_AGENT_BACKENDS_COMFYUI_CACHE_TRAP_H_
