// Graph: the graph of a ComfyUI workflow file in API format ({"3": {"class_type": "KSampler",
// "inputs": {...}}}): what the spec's `workflow:` key names, ComfyUI's own word for it. In code it
// is the Graph, so that in code "workflow" names only the workflow backend
// (agent/backends/workflow/). Also the values a spec sets in it (by node id and input name), and which nodes depend on them
// (directly, or through links [node_id, output_index] from upstream). Owner: the ComfyUI
// backend. Immutable after Parse; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_COMFYUI_GRAPH_H_
#define BENCHFLEET_AGENT_BACKENDS_COMFYUI_GRAPH_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace benchfleet::agent::comfyui {

// One value the spec sets: `set: {seed: {node: "3", input: seed}}`.
struct SetTarget {
  std::string name;  // seed, steps, prompt, width, height, ...
  std::string node;
  std::string input;
};

struct GraphNode {
  std::string class_type;
  std::set<std::string> inputs;    // every input name
  std::set<std::string> upstream;  // node ids its links point at
};

class Graph {
 public:
  // Parses an API-format graph. INVALID_ARGUMENT naming what is wrong ("not JSON", "node 3 has
  // no class_type", "node 9 input images links to node 8, which is not in the graph", or a graph
  // in the UI format, which has "nodes" and "links" lists and is not what /prompt takes).
  static absl::StatusOr<Graph> Parse(std::string_view text);

  const std::map<std::string, GraphNode>& nodes() const { return nodes_; }
  std::vector<std::string> node_ids() const;
  const std::string& text() const { return text_; }

  // Returns the graph (compact JSON) with every target's input replaced by its value, a JSON
  // literal (e.g. "42" or "\"a cat\""). INVALID_ARGUMENT for a target or value that does not fit.
  absl::StatusOr<std::string> Substitute(const std::vector<SetTarget>& targets,
                                         const std::map<std::string, std::string>& values) const;

  // Returns the nodes whose result depends on an input of `roots`: the roots and every node
  // downstream of them.
  std::set<std::string> Dependents(const std::set<std::string>& roots) const;

 private:
  std::string text_;
  std::map<std::string, GraphNode> nodes_;
};

}  // namespace benchfleet::agent::comfyui

#endif  // BENCHFLEET_AGENT_BACKENDS_COMFYUI_GRAPH_H_
