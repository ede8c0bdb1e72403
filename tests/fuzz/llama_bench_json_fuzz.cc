// libFuzzer target llama_bench_json: the llama-bench -o json / -o jsonl importer (synthesis/readers).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_llama_bench_json) over corpus/llama_bench_json and regressions/llama_bench_json in the normal build.
#include <cstddef>
#include <cstdint>

#include "synthesis/readers/file_formats.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  benchfleet::synthesis::ReadResult out;
  benchfleet::synthesis::ReadLlamaBenchJson("fuzz-input", benchfleet::fuzz::AsText(data, size), &out);
  return 0;
}
