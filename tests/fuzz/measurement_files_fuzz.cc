// libFuzzer target measurement_files: ReadMeasurementFiles over one file of any content: format detection
// (runs.jsonl, runs.csv, llama-bench json/jsonl/csv/markdown, generic CSV, ComfyUI and llama-server
// logs) and then the detected importer, as `benchfleet guide FILE` reads a user's file.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_measurement_files) over corpus/measurement_files and regressions/measurement_files in the normal build.
#include <cstddef>
#include <cstdint>

#include "synthesis/readers/measurement_files.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/memory_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  benchfleet::fuzz::MemoryEnv env;
  env.AddFile("/in/measurements.txt", benchfleet::fuzz::AsText(data, size));
  (void)benchfleet::synthesis::ReadMeasurementFiles(&env, {"/in/measurements.txt"});
  return 0;
}
