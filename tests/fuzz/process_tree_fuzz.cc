// libFuzzer target process_tree: /proc/PID/stat as the process tree check reads it (ParseProcStatParent in
// agent/probes).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_process_tree) over corpus/process_tree and regressions/process_tree in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/probes/process_tree.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)benchfleet::agent::ParseProcStatParent(benchfleet::fuzz::AsText(data, size));
  return 0;
}
