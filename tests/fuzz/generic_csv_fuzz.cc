// libFuzzer target generic_csv: the generic CSV importer of README.md (synthesis/readers).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_generic_csv) over corpus/generic_csv and regressions/generic_csv in the normal build.
#include <cstddef>
#include <cstdint>

#include "synthesis/readers/file_formats.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  benchfleet::synthesis::ReadResult out;
  benchfleet::synthesis::ReadGenericCsv("fuzz-input", benchfleet::fuzz::AsText(data, size), &out);
  return 0;
}
