// Text forms of JSON as ComfyUI's Python writes them: json.dumps (", " and ": " separators,
// ASCII only) for HTTP bodies and websocket messages, and repr() of a dict for its log lines.
// Owner: tests/sim. Thread-safe (pure functions).
#ifndef BENCHFLEET_TESTS_SIM_COMFYUI_PY_JSON_H_
#define BENCHFLEET_TESTS_SIM_COMFYUI_PY_JSON_H_

#include <string>

#include "nlohmann/json.hpp"

namespace benchfleet::sim::comfyui {

using Json = nlohmann::ordered_json;

// Returns json.dumps(j) as Python writes it: {"a": 1, "b": [1, 2]}.
std::string PyDumps(const Json& j);
// Returns repr() of the value as Python prints it: {'a': 1, 'b': None, 'c': "it's"}.
std::string PyRepr(const Json& j);
// Returns repr() of a str: 'x', or "x'y" when it holds a single quote and no double one.
std::string PyReprString(const std::string& s);

}  // namespace benchfleet::sim::comfyui

#endif  // BENCHFLEET_TESTS_SIM_COMFYUI_PY_JSON_H_
