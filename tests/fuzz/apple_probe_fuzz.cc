// libFuzzer target apple_probe: the macOS probe's tool outputs (ParseSysctlFacts, ParseSystemProfilerJson,
// ParsePmsetTherm and ThermalState::Slowdown in agent/probes).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_apple_probe) over corpus/apple_probe and regressions/apple_probe in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/probes/apple_probe.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = benchfleet::fuzz::AsText(data, size);
  (void)ParseSysctlFacts(text);
  (void)ParseSystemProfilerJson(text);
  if (auto therm = ParsePmsetTherm(text); therm.ok()) (void)therm->Slowdown();
  return 0;
}
