// workflow-standin: a stand-in for a benchmark command run by the agent's workflow backend
// (tests/sim/workflow_standin/README.md). It reads the prompts JSONL ({"id": ..., "prompt":
// ...} per line), "answers" each one after --ms-per-request, and writes the results JSON of
// agent/backends/workflow/README.md, marked simulated. Meanwhile it holds --alloc-mib MiB of
// memory it has written to (so it is resident), which the agent's peak memory must find.
// Prompts are answered --batch-size at a time (else $BATCH_SIZE, else 1): a batch of B takes
// --ms-per-request * (1 + 0.15 * (B - 1)) ms, so a larger batch has more tokens/s and a higher
// latency per request, as a real batched server would (the figures are SIMULATED).
//   workflow-standin --prompts FILE --output FILE [--config FILE] [--alloc-mib N]
//                    [--ms-per-request N] [--tokens N] [--batch-size N] [--exit-code N]
//                    [--garbage] [--hang] [--hang-escape]
// --hang: after allocating, it forks a child and both sleep forever (the agent must kill the
// tree); --hang-escape: the same, but the child first leaves the process group (setsid), as a
// daemonising tool would, so only a cgroup finds it; --garbage writes a results file that is not JSON; --exit-code exits with N after
// writing the results. Exit 2 on bad flags or unreadable files.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

int Usage(const std::string& why) {
  std::cerr << "workflow-standin: " << why << "\n"
            << "usage: workflow-standin --prompts FILE --output FILE [--config FILE] [--alloc-mib N]\n"
            << "       [--ms-per-request N] [--tokens N] [--batch-size N] [--exit-code N] [--garbage] [--hang]\n"
            << "       [--hang-escape]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string prompts_path, output_path, config_path;
  long alloc_mib = 0, ms_per_request = 10, tokens = 16, exit_code = 0, batch_size = 0;
  bool garbage = false, hang = false, escape = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (arg == "--garbage") {
      garbage = true;
    } else if (arg == "--hang") {
      hang = true;
    } else if (arg == "--hang-escape") {
      hang = escape = true;
    } else if ((v = value()) == nullptr) {
      return Usage(arg + " needs a value (or is unknown)");
    } else if (arg == "--prompts") {
      prompts_path = v;
    } else if (arg == "--output") {
      output_path = v;
    } else if (arg == "--config") {
      config_path = v;
    } else if (arg == "--alloc-mib") {
      alloc_mib = std::atol(v);
    } else if (arg == "--ms-per-request") {
      ms_per_request = std::atol(v);
    } else if (arg == "--tokens") {
      tokens = std::atol(v);
    } else if (arg == "--batch-size") {
      batch_size = std::atol(v);
      if (batch_size < 1) return Usage("--batch-size needs a number >= 1");
    } else if (arg == "--exit-code") {
      exit_code = std::atol(v);
    } else {
      return Usage("unknown flag " + arg);
    }
  }
  if (prompts_path.empty() || output_path.empty()) return Usage("--prompts and --output are required");
  if (batch_size == 0) {
    const char* env = std::getenv("BATCH_SIZE");
    batch_size = env != nullptr ? std::atol(env) : 1;
    if (batch_size < 1) return Usage(std::string("BATCH_SIZE must be a number >= 1, got '") + env + "'");
  }
  if (!config_path.empty() && !std::ifstream(config_path)) return Usage("cannot read --config " + config_path);

  // The memory, written page by page so that it is resident, not only reserved.
  const size_t bytes = static_cast<size_t>(alloc_mib) << 20;
  std::unique_ptr<char[]> block(bytes > 0 ? new char[bytes] : nullptr);
  const long page = ::sysconf(_SC_PAGESIZE);
  volatile char* p = block.get();
  for (size_t off = 0; off < bytes; off += static_cast<size_t>(page)) p[off] = static_cast<char>(off / page + 1);
  std::cout << "workflow-standin: holding " << alloc_mib << " MiB" << std::endl;

  if (hang) {
    if (::fork() == 0) {
      if (escape) ::setsid();
      for (;;) ::pause();
    }
    std::cerr << "workflow-standin: hanging (as asked)" << std::endl;
    for (;;) ::pause();
  }

  std::ifstream prompts(prompts_path);
  if (!prompts) return Usage("cannot read --prompts " + prompts_path);
  const char* accelerator = std::getenv("ACCELERATOR");
  nlohmann::json results = {{"tool", std::string("workflow-standin 1 ACCELERATOR=") + (accelerator ? accelerator : "")},
                            {"simulated", true},
                            {"batch_size", batch_size},
                            {"requests", nlohmann::json::array()}};
  std::vector<nlohmann::json> ids;
  std::string line;
  long n = 0;
  while (std::getline(prompts, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++n;
    const nlohmann::json prompt = nlohmann::json::parse(line, nullptr, false);
    if (prompt.is_discarded()) {
      std::cerr << "workflow-standin: line " << n << " of the prompts is not JSON" << std::endl;
      return 2;
    }
    ids.push_back(prompt.contains("id") ? prompt["id"] : nlohmann::json(std::to_string(n)));
  }
  // Batch by batch: every request of a batch ends with it.
  const auto batch_time = std::chrono::microseconds(
      static_cast<long>(static_cast<double>(ms_per_request) * 1000.0 * (1.0 + 0.15 * static_cast<double>(batch_size - 1))));
  const auto begin = std::chrono::steady_clock::now();
  for (size_t first = 0; first < ids.size(); first += static_cast<size_t>(batch_size)) {
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(batch_time);
    const double latency = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (size_t i = first; i < std::min(ids.size(), first + static_cast<size_t>(batch_size)); ++i) {
      results["requests"].push_back({{"prompt_id", ids[i]},
                                     {"latency_seconds", latency},
                                     {"output_tokens", tokens},
                                     {"time_to_first_token_seconds", latency / 4}});
    }
  }
  results["duration_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::ofstream out(output_path);
  if (garbage) {
    out << "Traceback (most recent call last):\n  not json at all {";
  } else {
    out << results.dump(2) << "\n";
  }
  out.close();
  std::cout << "workflow-standin: " << n << " requests answered, results in " << output_path << std::endl;
  return static_cast<int>(exit_code);
}
