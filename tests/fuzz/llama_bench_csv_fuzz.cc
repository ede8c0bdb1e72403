// libFuzzer target llama_bench_csv: the llama-bench -o csv importer (synthesis/readers).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_llama_bench_csv) over corpus/llama_bench_csv and regressions/llama_bench_csv in the normal build.
#include <cstddef>
#include <cstdint>

#include "synthesis/readers/file_formats.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  benchfleet::synthesis::ReadResult out;
  benchfleet::synthesis::ReadLlamaBenchCsv("fuzz-input", benchfleet::fuzz::AsText(data, size), &out);
  return 0;
}
