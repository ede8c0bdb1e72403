// The node classes comfyui-sim knows (the capture graph's image nodes and SD 1.5 txt2img's), their
// inputs as ComfyUI's /object_info gives them, and ComfyUI's validate_prompt: the same error
// types, messages, details and order (tests/fixtures/comfyui/post_prompt_invalid_*). Owner:
// tests/sim. Thread-safe: the table is immutable after construction.
#ifndef BENCHFLEET_TESTS_SIM_COMFYUI_NODE_TABLE_H_
#define BENCHFLEET_TESTS_SIM_COMFYUI_NODE_TABLE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/sim/comfyui/py_json.h"

namespace benchfleet::sim::comfyui {

struct NodeClass {
  std::string name;
  Json required;                     // {"input": ["TYPE" or [choices], {options}]} in order
  std::vector<std::string> outputs;  // return types
  bool output_node = false;
  Json info;  // /object_info extras: display_name, description, python_module, category, output_tooltips
};

class NodeTable {
 public:
  // `checkpoints`: the names CheckpointLoaderSimple accepts.
  explicit NodeTable(std::vector<std::string> checkpoints);
  const NodeClass* Find(const std::string& name) const;
  // Returns GET /object_info/{name}'s body ({} for an unknown class), or every class when name is "".
  Json ObjectInfo(const std::string& name) const;

 private:
  std::map<std::string, NodeClass> classes_;
};

// The outcome of validating a prompt: ok, or the 400 body and the log lines ComfyUI prints.
struct Validation {
  bool ok = false;
  Json body;                        // {"error": {...}, "node_errors": {...}}
  std::vector<std::string> log;     // "Failed to validate prompt for output 9:" ...
  std::vector<std::string> outputs; // output node ids, in prompt order (when ok)
  Json prompt;                      // the prompt as ComfyUI runs it: STRING inputs converted by str()
};

// Validates a prompt (the "prompt" object of POST /prompt) as ComfyUI's validate_prompt does.
Validation ValidatePrompt(const NodeTable& table, const Json& prompt);

}  // namespace benchfleet::sim::comfyui

#endif  // BENCHFLEET_TESTS_SIM_COMFYUI_NODE_TABLE_H_
