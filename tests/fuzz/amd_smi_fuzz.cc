// libFuzzer target amd_smi: amd-smi --json outputs (ParseAmdSmiStatic, ParseAmdSmiMetric with its
// VRAM totals, ParseAmdSmiProcess in agent/probes).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_amd_smi) over corpus/amd_smi and regressions/amd_smi in the normal build.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "agent/probes/amd_smi.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = benchfleet::fuzz::AsText(data, size);
  (void)benchfleet::agent::ParseAmdSmiStatic(text);
  std::vector<std::optional<uint64_t>> vram_totals;
  (void)benchfleet::agent::ParseAmdSmiMetric(text, &vram_totals);
  (void)benchfleet::agent::ParseAmdSmiProcess(text);
  return 0;
}
