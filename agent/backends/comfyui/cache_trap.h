// The cache trap: ComfyUI serves a node from its execution cache when the node's inputs (and
// everything upstream) equal an earlier prompt's, so a run can "finish" without doing the work it
// measures. This decides when a run is flagged CACHE_HIT. Where ComfyUI's own report exists (its
// execution_cached message, on the websocket or in /history's status messages), it alone decides;
// only where it does not (an imported log, a report lost) may timing decide, and the reason then
// says it was inferred. Owner: the ComfyUI backend. Pure functions; an OutputHistory is used
// from one thread.
#ifndef BENCHFLEET_AGENT_BACKENDS_COMFYUI_CACHE_TRAP_H_
#define BENCHFLEET_AGENT_BACKENDS_COMFYUI_CACHE_TRAP_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/backends/comfyui/graph.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::agent::comfyui {

inline constexpr char kCacheHitFlag[] = "CACHE_HIT";

// The class types ComfyUI's core marks OUTPUT_NODE that save or preview a result (SaveImage,
// PreviewImage, ...). A custom output node the agent does not know is still found: see OutputNodes.
bool IsKnownOutputClass(const std::string& class_type);

// Returns the workflow's output nodes: nodes of a known output class, nodes no other node links to
// (ComfyUI runs a graph from its output nodes, so such a node is one, or never runs), and
// `image_nodes` (the nodes that gave this run's images).
std::set<std::string> OutputNodes(const Graph& graph, const std::vector<std::string>& image_nodes);

// Returns "2 (ImageAddNoise), 3 (ImageScale)": each node's id and, where the workflow has it,
// its class_type, in `nodes`' order.
std::string NameNodes(const Graph& graph, const std::vector<std::string>& nodes);

// Returns the nodes of `cached` whose result depends on a value of `targets`, in cached's order.
std::vector<std::string> CachedMeasuredNodes(const Graph& graph, const std::vector<SetTarget>& targets,
                                             const std::vector<std::string>& cached);

// What ComfyUI reported about one finished run.
struct CacheReport {
  std::vector<std::string> cached;       // execution_cached.nodes, in the server's order
  std::vector<std::string> executed;     // the nodes it ran
  std::vector<std::string> image_nodes;  // the nodes that gave the run's images
};

// Returns the reason to flag a run CACHE_HIT from ComfyUI's report, "" when there is none. Nothing
// cached is never a reason, however fast the run. Otherwise, in this order:
//   1. a COLD run with any cached node: "a cold state could not be established";
//   2. no node executed: every node came from the cache;
//   3. a cached node depends on a per-run target (`per_run_targets`: the seed, or every `set`
//      target when there is no seed; none without a `set` section);
//   4. no node but output nodes (OutputNodes) executed: every node whose work the run measures
//      came from the cache (e.g. only SaveImage's filename_prefix changed).
// Every reason names the cached nodes it rests on (id and class_type).
std::string ReportedCacheHitReason(v1::Phase phase, const Graph& graph,
                                   const std::vector<SetTarget>& per_run_targets, const CacheReport& report);

// The images each set of inputs gave so far (inputs: the substituted graph's sha256).
class OutputHistory {
 public:
  // For a run without ComfyUI's report only: returns the reason to flag it CACHE_HIT when an
  // earlier run of the same inputs gave the same images and this one took less than threshold
  // ("... inferred from timing: ComfyUI reported no execution_cached message ..."); "" otherwise.
  std::string Check(const std::string& inputs, const std::vector<std::string>& image_sha256s, absl::Duration wall,
                    absl::Duration threshold) const;

  // Remembers what a successful run of inputs gave.
  void Remember(const std::string& inputs, const std::vector<std::string>& image_sha256s);

 private:
  std::map<std::string, std::vector<std::vector<std::string>>> seen_;
};

}  // namespace benchfleet::agent::comfyui

#endif  // BENCHFLEET_AGENT_BACKENDS_COMFYUI_CACHE_TRAP_H_
