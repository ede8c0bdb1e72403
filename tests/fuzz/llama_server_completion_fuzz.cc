// libFuzzer target llama_server_completion: llama-server's POST /completion JSON answer and error bodies
// (ParseCompletionJson, CompletionMetrics, ParseServerError in agent/backends/llama_server).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_llama_server_completion) over corpus/llama_server_completion and regressions/llama_server_completion in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/llama_server/completion_parser.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent::llama_server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = benchfleet::fuzz::AsText(data, size);
  if (auto completion = ParseCompletionJson(body); completion.ok()) (void)CompletionMetrics(*completion);
  (void)ParseServerError(body);
  return 0;
}
