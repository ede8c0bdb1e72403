#include "agent/backends/comfyui/comfyui_protocol.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "common/simulated.h"

namespace benchfleet::agent::comfyui {
namespace {

using Json = nlohmann::json;

Json ParseJson(std::string_view body) { return Json::parse(body.begin(), body.end(), nullptr, false); }

std::string Str(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

uint64_t U64(const Json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return 0;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer()) return it->get<int64_t>() < 0 ? 0 : uint64_t(it->get<int64_t>());
  const double d = it->get<double>();
  // Converting a double beyond uint64_t's range is undefined: such a size is no size.
  return d >= 0 && d < 0x1p64 ? static_cast<uint64_t>(d) : 0;
}

std::optional<int64_t> I64(const Json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  // Converting a double beyond int64_t's range is undefined: such a timestamp is none.
  const double d = it->get<double>();
  if (!(d >= -0x1p63 && d < 0x1p63)) return std::nullopt;
  return static_cast<int64_t>(d);
}

std::vector<std::string> StringList(const Json& object, const char* key) {
  std::vector<std::string> out;
  if (!object.is_object()) return out;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const Json& item : *it) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

std::string Start(std::string_view body) {
  std::string s(body.substr(0, 200));
  if (body.size() > 200) s += "...";
  return s;
}

// Applies one message (type, data) of a run to execution; returns the progress of `progress`.
std::optional<Progress> Apply(const std::string& type, const Json& data, Execution* execution) {
  if (type == "execution_start") {
    execution->start_ms = I64(data, "timestamp");
  } else if (type == "execution_cached") {
    execution->cached_seen = true;
    execution->cached = StringList(data, "nodes");
  } else if (type == "executing") {
    if (data.is_object() && data.contains("node") && data["node"].is_string()) {
      const std::string node = data["node"].get<std::string>();
      if (std::find(execution->executed.begin(), execution->executed.end(), node) == execution->executed.end()) {
        execution->executed.push_back(node);
      }
    }
  } else if (type == "executed") {
    const std::string node = Str(data, "node");
    if (data.is_object() && data.contains("output") && data["output"].is_object()) {
      const Json& output = data["output"];
      if (output.contains("images") && output["images"].is_array()) {
        for (const Json& image : output["images"]) {
          execution->images.push_back({node, Str(image, "filename"), Str(image, "subfolder"), Str(image, "type")});
        }
      }
    }
  } else if (type == "execution_success") {
    execution->finished = true;
    execution->success = true;
    execution->end_ms = I64(data, "timestamp");
  } else if (type == "execution_error" || type == "execution_interrupted") {
    execution->finished = true;
    execution->success = false;
    execution->end_ms = I64(data, "timestamp");
    execution->error_node = Str(data, "node_id");
    execution->error_node_type = Str(data, "node_type");
    execution->error_exception_type = Str(data, "exception_type");
    execution->error_message = Str(data, "exception_message");
    if (type == "execution_interrupted") execution->error_message = "the run was interrupted";
    while (!execution->error_message.empty() && execution->error_message.back() == '\n') {
      execution->error_message.pop_back();
    }
  } else if (type == "progress") {
    Progress p;
    p.node = Str(data, "node");
    p.value = I64(data, "value").value_or(0);
    p.max = I64(data, "max").value_or(0);
    return p;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<SystemStats> ParseSystemStats(std::string_view body) {
  const Json json = ParseJson(body);
  if (!json.is_object() || !json.contains("system") || !json["system"].is_object() || !json.contains("devices") ||
      !json["devices"].is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("/system_stats is not ComfyUI's (no system and devices): ", Start(body)));
  }
  SystemStats stats;
  const Json& system = json["system"];
  stats.os = Str(system, "os");
  stats.comfyui_version = Str(system, "comfyui_version");
  stats.python_version = Str(system, "python_version");
  stats.pytorch_version = Str(system, "pytorch_version");
  for (const Json& d : json["devices"]) {
    Device device;
    device.name = Str(d, "name");
    device.type = Str(d, "type");
    device.vram_total = U64(d, "vram_total");
    device.vram_free = U64(d, "vram_free");
    device.torch_vram_total = U64(d, "torch_vram_total");
    device.torch_vram_free = U64(d, "torch_vram_free");
    stats.devices.push_back(std::move(device));
  }
  stats.simulated = SaysSimulated(stats.comfyui_version);
  return stats;
}

std::vector<NodeError> ParseNodeErrors(std::string_view body) {
  std::vector<NodeError> out;
  const Json json = ParseJson(body);
  if (!json.is_object() || !json.contains("node_errors") || !json["node_errors"].is_object()) return out;
  for (const auto& [node, entry] : json["node_errors"].items()) {
    const std::string class_type = Str(entry, "class_type");
    if (!entry.is_object() || !entry.contains("errors") || !entry["errors"].is_array()) continue;
    for (const Json& error : entry["errors"]) {
      NodeError e;
      e.node = node;
      e.class_type = class_type;
      if (error.is_object() && error.contains("extra_info")) e.input = Str(error["extra_info"], "input_name");
      e.message = Str(error, "message");
      const std::string details = Str(error, "details");
      if (!details.empty()) e.message = absl::StrCat(e.message, " (", details, ")");
      out.push_back(std::move(e));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const NodeError& a, const NodeError& b) {
    if (a.node.size() != b.node.size()) return a.node.size() < b.node.size();
    return a.node < b.node;
  });
  return out;
}

absl::StatusOr<std::string> ParsePromptAnswer(int http_status, std::string_view body) {
  const Json json = ParseJson(body);
  if (json.is_discarded()) {
    return absl::InternalError(
        absl::StrCat("POST /prompt answered ", http_status, " with a body that is not JSON: ", Start(body)));
  }
  if (http_status == 200) {
    const std::string id = Str(json, "prompt_id");
    if (id.empty()) return absl::InternalError(absl::StrCat("POST /prompt answered 200 without a prompt_id: ", Start(body)));
    return id;
  }
  if (http_status == 400 && json.is_object() && json.contains("error")) {
    const Json& error = json["error"];
    std::string text = error.is_string() ? error.get<std::string>() : Str(error, "message");
    const std::string details = Str(error, "details");
    if (!details.empty()) text = absl::StrCat(text, " (", details, ")");
    std::vector<std::string> parts;
    for (const NodeError& e : ParseNodeErrors(body)) {
      parts.push_back(absl::StrCat("node ", e.node, " (", e.class_type, ")",
                                   e.input.empty() ? "" : absl::StrCat(" input ", e.input), ": ", e.message));
    }
    return absl::InvalidArgumentError(absl::StrCat("ComfyUI rejected the workflow: ", text,
                                                   parts.empty() ? "" : "; ", absl::StrJoin(parts, "; ")));
  }
  return absl::UnavailableError(absl::StrCat("POST /prompt answered ", http_status, ": ", Start(body)));
}

std::string Execution::ErrorText() const {
  return absl::StrCat("node ", error_node.empty() ? "?" : error_node, " (",
                      error_node_type.empty() ? "?" : error_node_type, ") raised ",
                      error_exception_type.empty() ? "an error" : error_exception_type, ": ", error_message);
}

absl::StatusOr<std::optional<Progress>> ExecutionTracker::Feed(std::string_view message) {
  const Json json = ParseJson(message);
  if (!json.is_object() || !json.contains("type") || !json["type"].is_string()) {
    return absl::InvalidArgumentError(absl::StrCat("a websocket message that is not ComfyUI's: ", Start(message)));
  }
  const std::string type = json["type"].get<std::string>();
  const Json data = json.contains("data") ? json["data"] : Json::object();
  if (Str(data, "prompt_id") != prompt_id_) return std::optional<Progress>();
  return Apply(type, data, &execution_);
}

absl::StatusOr<std::optional<Execution>> ParseHistory(std::string_view body, const std::string& prompt_id,
                                                      const std::vector<std::string>& graph_nodes) {
  const Json json = ParseJson(body);
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("/history answered a body that is not a JSON object: ", Start(body)));
  }
  auto it = json.find(prompt_id);
  if (it == json.end()) return std::optional<Execution>();
  const Json& entry = *it;
  if (!entry.is_object() || !entry.contains("status") || !entry["status"].is_object()) {
    return std::optional<Execution>();  // queued or running: no status yet
  }
  const Json& status = entry["status"];
  Execution execution;
  if (status.contains("messages") && status["messages"].is_array()) {
    for (const Json& m : status["messages"]) {
      if (!m.is_array() || m.size() != 2 || !m[0].is_string()) continue;
      Apply(m[0].get<std::string>(), m[1], &execution);
    }
  }
  const std::string status_str = Str(status, "status_str");
  if (status_str != "success" && status_str != "error") return std::optional<Execution>();
  execution.finished = true;
  execution.success = status_str == "success";
  if (execution.success) {
    for (const std::string& node : graph_nodes) {
      if (std::find(execution.cached.begin(), execution.cached.end(), node) == execution.cached.end()) {
        execution.executed.push_back(node);
      }
    }
  } else {
    for (const Json& m : status.value("messages", Json::array())) {
      if (m.is_array() && m.size() == 2 && m[0] == "execution_error") execution.executed = StringList(m[1], "executed");
    }
    if (!execution.error_node.empty()) execution.executed.push_back(execution.error_node);
  }
  if (entry.contains("outputs") && entry["outputs"].is_object()) {
    execution.images.clear();
    for (const auto& [node, output] : entry["outputs"].items()) {
      if (!output.is_object() || !output.contains("images") || !output["images"].is_array()) continue;
      for (const Json& image : output["images"]) {
        execution.images.push_back({node, Str(image, "filename"), Str(image, "subfolder"), Str(image, "type")});
      }
    }
  }
  return std::optional<Execution>(std::move(execution));
}

}  // namespace benchfleet::agent::comfyui
