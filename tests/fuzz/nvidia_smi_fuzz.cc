// libFuzzer target nvidia_smi: nvidia-smi's CSV outputs (ParseNvidiaGpuInfo, FillAccelerator,
// ParseNvidiaSamples, NvidiaReasonNames, ParseNvidiaComputeApps in agent/probes).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_nvidia_smi) over corpus/nvidia_smi and regressions/nvidia_smi in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/probes/nvidia_smi.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = benchfleet::fuzz::AsText(data, size);
  if (auto gpus = ParseNvidiaGpuInfo(text); gpus.ok()) {
    for (const NvidiaGpuInfo& gpu : *gpus) {
      benchfleet::v1::Accelerator accelerator;
      FillAccelerator(gpu, &accelerator);
    }
  }
  (void)ParseNvidiaSamples(text);
  (void)ParseNvidiaComputeApps(text);
  if (size >= 8) {
    uint64_t mask = 0;
    for (int i = 0; i < 8; ++i) mask = mask << 8 | data[i];
    (void)NvidiaReasonNames(mask);
  }
  return 0;
}
