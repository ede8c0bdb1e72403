// libFuzzer target comfyui_system_stats: ComfyUI's GET /system_stats answer (ParseSystemStats).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_comfyui_system_stats) over corpus/comfyui_system_stats and regressions/comfyui_system_stats in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/comfyui/comfyui_protocol.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)benchfleet::agent::comfyui::ParseSystemStats(benchfleet::fuzz::AsText(data, size));
  return 0;
}
