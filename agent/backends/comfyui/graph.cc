#include "agent/backends/comfyui/graph.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace benchfleet::agent::comfyui {

using Json = nlohmann::json;

absl::StatusOr<Graph> Graph::Parse(std::string_view text) {
  const Json json = Json::parse(text.begin(), text.end(), nullptr, false);
  if (json.is_discarded()) return absl::InvalidArgumentError("the workflow is not JSON");
  if (!json.is_object() || json.empty()) {
    return absl::InvalidArgumentError("the workflow must be a JSON object of nodes in ComfyUI's API format");
  }
  if (json.contains("nodes") && json.contains("links")) {
    return absl::InvalidArgumentError(
        "the workflow is in ComfyUI's UI format (nodes and links lists); export it with \"Save (API)\"");
  }
  Graph w;
  w.text_ = std::string(text);
  for (const auto& [id, node] : json.items()) {
    if (!node.is_object() || !node.contains("class_type") || !node["class_type"].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("the workflow's node ", id, " has no class_type"));
    }
    GraphNode n;
    n.class_type = node["class_type"].get<std::string>();
    if (node.contains("inputs")) {
      if (!node["inputs"].is_object()) {
        return absl::InvalidArgumentError(absl::StrCat("the workflow's node ", id, " has inputs that are not a map"));
      }
      for (const auto& [input, value] : node["inputs"].items()) {
        n.inputs.insert(input);
        if (value.is_array() && value.size() == 2 && value[0].is_string() && value[1].is_number_integer()) {
          n.upstream.insert(value[0].get<std::string>());
        }
      }
    }
    w.nodes_[id] = std::move(n);
  }
  for (const auto& [id, node] : w.nodes_) {
    for (const std::string& up : node.upstream) {
      if (!w.nodes_.contains(up)) {
        return absl::InvalidArgumentError(
            absl::StrCat("the workflow's node ", id, " links to node ", up, ", which is not in the graph"));
      }
    }
  }
  return w;
}

std::vector<std::string> Graph::node_ids() const {
  std::vector<std::string> ids;
  for (const auto& [id, node] : nodes_) ids.push_back(id);
  return ids;
}

absl::StatusOr<std::string> Graph::Substitute(const std::vector<SetTarget>& targets,
                                                 const std::map<std::string, std::string>& values) const {
  Json json = Json::parse(text_, nullptr, false);
  for (const SetTarget& t : targets) {
    auto v = values.find(t.name);
    if (v == values.end()) return absl::InvalidArgumentError(absl::StrCat("no value for ", t.name));
    Json value = Json::parse(v->second, nullptr, false);
    if (value.is_discarded()) {
      return absl::InvalidArgumentError(absl::StrCat("the value of ", t.name, " is not a JSON literal: ", v->second));
    }
    if (!json.contains(t.node) || !json[t.node].is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(t.name, ": the workflow has no node ", t.node));
    }
    json[t.node]["inputs"][t.input] = std::move(value);
  }
  return json.dump();
}

std::set<std::string> Graph::Dependents(const std::set<std::string>& roots) const {
  std::set<std::string> out(roots);
  bool grew = true;
  while (grew) {  // graphs are small: iterate to the fixed point
    grew = false;
    for (const auto& [id, node] : nodes_) {
      if (out.contains(id)) continue;
      for (const std::string& up : node.upstream) {
        if (out.contains(up)) {
          out.insert(id);
          grew = true;
          break;
        }
      }
    }
  }
  return out;
}

}  // namespace benchfleet::agent::comfyui
