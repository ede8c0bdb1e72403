// libFuzzer target comfyui_ws: ComfyUI's websocket messages of one run (ExecutionTracker::Feed). Input: the
// prompt id on the first line, then one text message per line.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_comfyui_ws) over corpus/comfyui_ws and regressions/comfyui_ws in the normal build.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/backends/comfyui/comfyui_protocol.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent::comfyui;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto [prompt_id, rest] = benchfleet::fuzz::SplitFirstLine(benchfleet::fuzz::AsText(data, size));
  ExecutionTracker tracker{std::string(prompt_id)};
  while (!rest.empty()) {
    auto [message, next] = benchfleet::fuzz::SplitFirstLine(rest);
    (void)tracker.Feed(message);
    rest = next;
  }
  (void)tracker.execution().ErrorText();
  return 0;
}
