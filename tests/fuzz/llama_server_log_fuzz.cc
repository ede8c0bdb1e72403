// libFuzzer target llama_server_log: the llama-server log importer (synthesis/readers: print_timing lines, buffer sizes).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_llama_server_log) over corpus/llama_server_log and regressions/llama_server_log in the normal build.
#include <cstddef>
#include <cstdint>

#include "synthesis/readers/file_formats.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  benchfleet::synthesis::ReadResult out;
  benchfleet::synthesis::ReadLlamaServerLog("fuzz-input", benchfleet::fuzz::AsText(data, size), &out);
  return 0;
}
