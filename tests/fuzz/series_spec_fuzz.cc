// libFuzzer target series_spec: ParseSeriesSpec (common/spec) over any text, as a user's spec file.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_series_spec) over corpus/series_spec and regressions/series_spec in the normal build.
#include <cstddef>
#include <cstdint>

#include "common/spec/series_spec.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)benchfleet::ParseSeriesSpec(benchfleet::fuzz::AsText(data, size), "fuzz.yaml");
  return 0;
}
