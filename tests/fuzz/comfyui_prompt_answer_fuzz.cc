// libFuzzer target comfyui_prompt_answer: ComfyUI's POST /prompt answer (ParsePromptAnswer as a 200, a 400 and a 500,
// and ParseNodeErrors).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_comfyui_prompt_answer) over corpus/comfyui_prompt_answer and regressions/comfyui_prompt_answer in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/comfyui/comfyui_protocol.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent::comfyui;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = benchfleet::fuzz::AsText(data, size);
  for (int status : {200, 400, 500}) (void)ParsePromptAnswer(status, body);
  (void)ParseNodeErrors(body);
  return 0;
}
