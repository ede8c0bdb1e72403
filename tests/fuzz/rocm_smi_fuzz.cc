// libFuzzer target rocm_smi: rocm-smi --json outputs (ParseRocmSmiJson, ParseRocmSmiPids in agent/probes).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_rocm_smi) over corpus/rocm_smi and regressions/rocm_smi in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/probes/rocm_smi.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = benchfleet::fuzz::AsText(data, size);
  (void)benchfleet::agent::ParseRocmSmiJson(text);
  (void)benchfleet::agent::ParseRocmSmiPids(text);
  return 0;
}
