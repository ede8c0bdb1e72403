// libFuzzer target openai_answer: an OpenAI-compatible server's whole answer and error bodies (ParseAnswer,
// ParseErrorMessage: choices, message, usage, finish_reason).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_openai_answer) over corpus/openai_answer and regressions/openai_answer in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/openai/openai_stream.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = benchfleet::fuzz::AsText(data, size);
  (void)benchfleet::agent::openai::ParseAnswer(body);
  (void)benchfleet::agent::openai::ParseErrorMessage(body);
  return 0;
}
