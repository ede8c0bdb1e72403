// libFuzzer target runs_jsonl: a benchfleet series folder read by ReadMeasurementFiles: runs.jsonl (proto
// JSON per line, ReadRecords then the line-by-line fallback) and the conditions.json beside it.
// Input: runs.jsonl, then optionally a NUL byte and conditions.json.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_runs_jsonl) over corpus/runs_jsonl and regressions/runs_jsonl in the normal build.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "synthesis/readers/measurement_files.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/memory_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = benchfleet::fuzz::AsText(data, size);
  const size_t nul = text.find('\0');
  benchfleet::fuzz::MemoryEnv env;
  env.AddFile("/series/runs.jsonl", text.substr(0, nul));
  if (nul != std::string_view::npos) env.AddFile("/series/conditions.json", text.substr(nul + 1));
  (void)benchfleet::synthesis::ReadMeasurementFiles(&env, {"/series"});
  return 0;
}
