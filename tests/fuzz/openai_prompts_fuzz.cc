// libFuzzer target openai_prompts: the openai backend's prompts JSONL file (ParsePromptsJsonl).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_openai_prompts) over corpus/openai_prompts and regressions/openai_prompts in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/openai/openai_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)benchfleet::agent::openai::ParsePromptsJsonl(benchfleet::fuzz::AsText(data, size), "prompts.jsonl");
  return 0;
}
