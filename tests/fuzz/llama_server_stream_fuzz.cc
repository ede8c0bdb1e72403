// libFuzzer target llama_server_stream: llama-server's streamed /completion answer (SSE): ParseCompletionStream
// over the whole body and SseTokenWatcher fed piece by piece. Input: a first line whose length
// (1..64) is the piece size, then the body.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_llama_server_stream) over corpus/llama_server_stream and regressions/llama_server_stream in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/llama_server/completion_parser.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent::llama_server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [first, body] = benchfleet::fuzz::SplitFirstLine(benchfleet::fuzz::AsText(data, size));
  if (auto completion = ParseCompletionStream(body); completion.ok()) (void)CompletionMetrics(*completion);
  SseTokenWatcher watcher;
  benchfleet::fuzz::ForEachPiece(body, first.size() % 64 + 1, [&](std::string_view piece) { watcher.Feed(piece); });
  return 0;
}
