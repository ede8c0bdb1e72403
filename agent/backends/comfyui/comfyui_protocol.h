// Parsers of what ComfyUI answers (captured in tests/fixtures/comfyui): /system_stats, POST /prompt
// (accepted, or 400 with `error` and `node_errors`), /history/{prompt_id}, and the websocket
// messages of one run (execution_start, execution_cached, executing, executed, progress,
// execution_success, execution_error). Untrusted input: every shape error is a Status, never a
// throw. Owner: the ComfyUI backend. Pure functions; an ExecutionTracker is used from one thread.
#ifndef BENCHFLEET_AGENT_BACKENDS_COMFYUI_COMFYUI_PROTOCOL_H_
#define BENCHFLEET_AGENT_BACKENDS_COMFYUI_COMFYUI_PROTOCOL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace benchfleet::agent::comfyui {

struct Device {
  std::string name;  // e.g. "cuda:0 NVIDIA H200 : cudaMallocAsync", or "cpu"
  std::string type;  // "cuda", "cpu", ...
  uint64_t vram_total = 0;
  uint64_t vram_free = 0;
  uint64_t torch_vram_total = 0;
  uint64_t torch_vram_free = 0;
};

struct SystemStats {
  std::string os;
  std::string comfyui_version;
  std::string python_version;
  std::string pytorch_version;
  std::vector<Device> devices;
  // True when comfyui_version contains "SIMULATED" (tests/sim's comfyui-sim).
  bool simulated = false;
};

// Parses GET /system_stats. INVALID_ARGUMENT when the body is not JSON or lacks system/devices.
absl::StatusOr<SystemStats> ParseSystemStats(std::string_view body);

// One entry of a 400's node_errors.
struct NodeError {
  std::string node;        // node id, e.g. "3"
  std::string class_type;  // e.g. "KSampler"
  std::string input;       // extra_info.input_name, "" when none
  std::string message;     // "Value smaller than min of 1 (steps)": message, details in brackets
};

// Parses POST /prompt's answer. 200: returns the prompt_id. 400: INVALID_ARGUMENT
// "ComfyUI rejected the workflow: <error.message>[ (details)]; node 3 (KSampler) input steps:
// Value 0 smaller than min of 1; ..." (every node error, sorted by node id). Another status or a
// body that is not JSON: UNAVAILABLE/INTERNAL with the status and the start of the body.
absl::StatusOr<std::string> ParsePromptAnswer(int http_status, std::string_view body);

// Parses a 400's node_errors (exposed for tests and the series log).
std::vector<NodeError> ParseNodeErrors(std::string_view body);

struct ImageRef {
  std::string node;  // the output node
  std::string filename;
  std::string subfolder;
  std::string type;  // "output", "temp"
};

// What one run did, from the websocket or from /history.
struct Execution {
  bool finished = false;  // execution_success or execution_error seen
  bool success = false;
  std::optional<int64_t> start_ms;  // the server's execution_start timestamp (ms since epoch)
  std::optional<int64_t> end_ms;    // execution_success's (or execution_error's) timestamp
  bool cached_seen = false;         // an execution_cached message arrived
  std::vector<std::string> cached;  // execution_cached.nodes, in the server's order
  std::vector<std::string> executed;  // nodes seen in `executing` (websocket) or derived (history)
  std::vector<ImageRef> images;
  // execution_error
  std::string error_node;
  std::string error_node_type;
  std::string error_exception_type;
  std::string error_message;
  // Returns "node 2 (ImageBlur) raised RuntimeError: <message>" for a failed run.
  std::string ErrorText() const;
};

// Progress of the current node (websocket `progress`: e.g. step 3 of 20 of the KSampler).
struct Progress {
  std::string node;
  int64_t value = 0;
  int64_t max = 0;
};

// Follows the websocket messages of one prompt; messages of other prompts (and `status`,
// `progress_state`, previews) are ignored.
class ExecutionTracker {
 public:
  explicit ExecutionTracker(std::string prompt_id) : prompt_id_(std::move(prompt_id)) {}

  // Takes one text message. INVALID_ARGUMENT when it is not a JSON object with a "type".
  // Returns the progress when the message was a `progress` of this prompt.
  absl::StatusOr<std::optional<Progress>> Feed(std::string_view message);

  const Execution& execution() const { return execution_; }

 private:
  std::string prompt_id_;
  Execution execution_;
};

// Parses GET /history/{prompt_id}. Returns nullopt when the server does not know the prompt yet
// (`{}`) or it has not finished. `executed` is derived: on success every node of `graph_nodes`
// not in `cached`; on error execution_error's `executed` plus the failing node.
// INVALID_ARGUMENT when the body is not JSON of the expected shape.
absl::StatusOr<std::optional<Execution>> ParseHistory(std::string_view body, const std::string& prompt_id,
                                                      const std::vector<std::string>& graph_nodes);

}  // namespace benchfleet::agent::comfyui

#endif  // BENCHFLEET_AGENT_BACKENDS_COMFYUI_COMFYUI_PROTOCOL_H_
