// libFuzzer target comfyui_log: the ComfyUI server log importer (synthesis/readers).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_comfyui_log) over corpus/comfyui_log and regressions/comfyui_log in the normal build.
#include <cstddef>
#include <cstdint>

#include "synthesis/readers/file_formats.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  benchfleet::synthesis::ReadResult out;
  benchfleet::synthesis::ReadComfyUiLog("fuzz-input", benchfleet::fuzz::AsText(data, size), &out);
  return 0;
}
