#include "agent/backends/llama_server/offload_check.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/run_flags.h"

namespace benchfleet::agent::llama_server {
namespace {

// The server's words about its offload, with the log line they are on.
std::string ServerWords(const llama_cpp::LogReport& report) {
  if (!report.no_gpu_warning.empty()) {
    return absl::StrCat("\"", report.no_gpu_warning, "\" (its log, line ", report.no_gpu_line, ")");
  }
  if (report.offload.has_value()) {
    return absl::StrCat("\"offloaded ", report.offload->offloaded, "/", report.offload->total,
                        " layers to GPU\" (its log, line ", report.offload->line, ")");
  }
  return "no GPU in its device list";
}

}  // namespace

OffloadRequest ReadOffloadRequest(const std::vector<std::string>& args) {
  OffloadRequest request;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    const std::string& flag = args[i];
    const std::string& value = args[i + 1];
    if (flag == "-ngl" || flag == "--gpu-layers" || flag == "--n-gpu-layers") {
      request.argument = absl::StrCat(flag, " ", value);
      int layers = 0;
      if (value == "all" || value == "auto") {
        request.kind = OffloadRequest::Kind::kAll;
      } else if (absl::SimpleAtoi(value, &layers)) {
        request.kind = layers == 0  ? OffloadRequest::Kind::kNone
                       : layers < 0 ? OffloadRequest::Kind::kAll
                                    : OffloadRequest::Kind::kLayers;
        request.layers = std::max(layers, 0);
      }
      ++i;
    } else if ((flag == "-dev" || flag == "--device") && value == "none") {
      request.kind = OffloadRequest::Kind::kNone;
      request.argument = absl::StrCat(flag, " ", value);
      ++i;
    }
  }
  return request;
}

OffloadVerdict JudgeOffload(const std::string& mode, const OffloadRequest& request,
                            const llama_cpp::LogReport& report, bool allow_no_offload, bool allow_partial_offload) {
  OffloadVerdict verdict;
  verdict.devices = llama_cpp::DevicesText(report);
  verdict.offloaded_layers = llama_cpp::OffloadedLayersText(report);
  std::optional<int> offloaded, total;
  if (report.offload.has_value()) {
    offloaded = report.offload->offloaded;
    total = report.offload->total;
  } else if (report.no_usable_gpu()) {
    offloaded = 0;
  }

  using Kind = OffloadRequest::Kind;
  // With no offload argument, llama.cpp offloads every layer that fits on a GPU build (one that
  // prints an offload line); on a build without a GPU nothing was asked.
  const bool asks = request.kind == Kind::kLayers || request.kind == Kind::kAll ||
                    (request.kind == Kind::kNotGiven && report.offload.has_value());
  if (!asks || !offloaded.has_value()) return verdict;
  const std::string asked = request.argument.empty() ? "no offload argument: llama.cpp's default, every layer that fits"
                                                     : request.argument;

  if (*offloaded == 0) {
    if (!allow_no_offload) {
      verdict.open_error = absl::FailedPreconditionError(absl::StrCat(
          "mode ", mode, " asks llama-server to offload layers to a GPU (", asked,
          "), but the server offloaded none: ", ServerWords(report),
          ". Its runs would measure the CPU under the name ", mode,
          "; list the mode in llama-server.allow_no_offload to run it anyway (flagged ", std::string(kNoOffloadFlag), ")"));
      return verdict;
    }
    v1::Flag& flag = verdict.flag.emplace();
    flag.set_code(std::string(kNoOffloadFlag));
    flag.set_reason(absl::StrCat("mode ", mode, " asks for GPU offload (", asked,
                                 ") but llama-server offloaded no layer: ", ServerWords(report),
                                 "; it ran on the CPU (allowed by llama-server.allow_no_offload)"));
    return verdict;
  }
  if (!total.has_value()) return verdict;
  const int expected = request.kind == Kind::kLayers ? std::min(request.layers, *total) : *total;
  if (*offloaded < expected && !allow_partial_offload) {
    v1::Flag& flag = verdict.flag.emplace();
    flag.set_code(std::string(kPartialOffloadFlag));
    flag.set_reason(absl::StrCat("llama-server offloaded ", *offloaded, "/", *total, " layers to GPU (its log, line ",
                                 report.offload->line, "), fewer than mode ", mode, " asks (", asked, ": ", expected,
                                 "); not accepted by llama-server.allow_partial_offload"));
  }
  return verdict;
}

}  // namespace benchfleet::agent::llama_server
