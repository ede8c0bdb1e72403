// libFuzzer target comfyui_history: ComfyUI's GET /history/{prompt_id} answer (ParseHistory, and ErrorText of
// what it found). Input: the prompt id on the first line, then the body.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_comfyui_history) over corpus/comfyui_history and regressions/comfyui_history in the normal build.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/backends/comfyui/comfyui_protocol.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent::comfyui;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [prompt_id, body] = benchfleet::fuzz::SplitFirstLine(benchfleet::fuzz::AsText(data, size));
  static const std::vector<std::string> kGraphNodes = {"1", "2", "3", "4", "5", "6", "7", "8", "9"};
  auto execution = ParseHistory(body, std::string(prompt_id), kGraphNodes);
  if (execution.ok() && execution->has_value()) (void)(*execution)->ErrorText();
  return 0;
}
