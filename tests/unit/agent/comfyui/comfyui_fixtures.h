// Reads the ComfyUI captures of tests/fixtures/comfyui for the tests here: the body of one HTTP
// exchange, or the websocket messages of runs 1-8. Thread-safe.
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_COMFYUI_COMFYUI_FIXTURES_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_COMFYUI_COMFYUI_FIXTURES_H_

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace benchfleet::agent::comfyui::testing {

inline nlohmann::json Capture(const std::string& name) {
  std::ifstream in(std::string(BENCHFLEET_COMFYUI_FIXTURES) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// Returns the body of a captured HTTP exchange as the server sent it (JSON text).
inline std::string CapturedBody(const std::string& name) { return Capture(name)["body_json"].dump(); }

// Returns every websocket message of runs 1-8, in order, as the server sent them.
inline std::vector<std::string> CapturedWsMessages() {
  std::vector<std::string> out;
  for (const auto& m : Capture("ws_messages_runs1to8.json")) out.push_back(m["text"].dump());
  return out;
}

// The prompt ids of runs 1-8, in order (from the captures' execution_start messages).
inline std::vector<std::string> CapturedPromptIds() {
  std::vector<std::string> out;
  for (const auto& m : Capture("ws_messages_runs1to8.json")) {
    if (m["text"]["type"] == "execution_start") out.push_back(m["text"]["data"]["prompt_id"]);
  }
  return out;
}

}  // namespace benchfleet::agent::comfyui::testing

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_COMFYUI_COMFYUI_FIXTURES_H_
