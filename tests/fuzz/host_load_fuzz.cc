// libFuzzer target host_load: /proc/stat and /proc/PID/stat as the host load monitor reads them (ParseProcStatCpu,
// ParseProcessTimes in agent/probes).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_host_load) over corpus/host_load and regressions/host_load in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/probes/host_load.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = benchfleet::fuzz::AsText(data, size);
  (void)benchfleet::agent::ParseProcStatCpu(text);
  (void)benchfleet::agent::ParseProcessTimes(text);
  return 0;
}
