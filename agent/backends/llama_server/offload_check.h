// Did llama-server run where the mode asked? Reads what a mode's arguments ask llama.cpp to
// offload (-ngl/--gpu-layers/--n-gpu-layers, -dev/--device none) and judges it against what the
// server's own log says it found and did (common/llama_cpp_log.h): the devices, `offloaded N/M
// layers to GPU`, `no usable GPU found`. The server's report decides; nothing is inferred from
// timings. Owner: the llama-server backend. Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_OFFLOAD_CHECK_H_
#define BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_OFFLOAD_CHECK_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "benchfleet/v1/record.pb.h"
#include "common/llama_cpp_log.h"

namespace benchfleet::agent::llama_server {

// What the arguments ask for; the last of -ngl/--gpu-layers/--n-gpu-layers and -dev/--device
// wins, as in llama.cpp's own parser.
struct OffloadRequest {
  enum class Kind {
    kNotGiven,  // no offload argument: llama.cpp's default (on a GPU build, every layer that fits)
    kNone,      // -ngl 0 or -dev none
    kLayers,    // -ngl N, N > 0
    kAll,       // -ngl all / auto / -1
  };
  Kind kind = Kind::kNotGiven;
  int layers = 0;        // kLayers only
  std::string argument;  // as given, for messages: "-ngl 99", "--device none"
};

OffloadRequest ReadOffloadRequest(const std::vector<std::string>& args);

struct OffloadVerdict {
  // For the records' params and the conditions: llama_cpp::DevicesText and
  // llama_cpp::OffloadedLayersText of the report.
  std::string devices;
  std::string offloaded_layers;
  // Not OK when the mode asked for offload, the server offloaded nothing and the spec does not
  // let the mode run without a GPU: FAILED_PRECONDITION quoting the server's words.
  absl::Status open_error;
  // NO_OFFLOAD (allowed to run without a GPU) or PARTIAL_OFFLOAD (fewer layers than asked, not
  // accepted by the spec), with the reason; set on every run of the session.
  std::optional<v1::Flag> flag;
};

// Judges one start of the server in `mode` (arguments `request`), from its log's report.
OffloadVerdict JudgeOffload(const std::string& mode, const OffloadRequest& request,
                            const llama_cpp::LogReport& report, bool allow_no_offload, bool allow_partial_offload);

}  // namespace benchfleet::agent::llama_server

#endif  // BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_OFFLOAD_CHECK_H_
