// libFuzzer target cpu_host: the CPU host probe's inputs (ParseLscpuJson, ParseLoadAvg, CountCpuList in
// agent/probes).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_cpu_host) over corpus/cpu_host and regressions/cpu_host in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/probes/cpu_host.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = benchfleet::fuzz::AsText(data, size);
  (void)benchfleet::agent::ParseLscpuJson(text);
  (void)benchfleet::agent::ParseLoadAvg(text);
  (void)benchfleet::agent::CountCpuList(text);
  return 0;
}
