// comfyui-sim's server: ComfyUI 0.3.64's HTTP endpoints and websocket messages as captured in
// tests/fixtures/comfyui, a prompt queue run by one worker thread that spends real time per node
// and per sampler step, ComfyUI's execution cache (classic, lru:N, none), deterministic PNG
// outputs and fault injection. Owner: tests/sim. Thread-safe: HTTP handlers run concurrently,
// all state is guarded by one mutex.
#ifndef BENCHFLEET_TESTS_SIM_COMFYUI_COMFYUI_SIM_H_
#define BENCHFLEET_TESTS_SIM_COMFYUI_COMFYUI_SIM_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/sim/comfyui/node_table.h"
#include "tests/sim/comfyui/py_json.h"
#include "tests/sim/comfyui/websocket.h"
#include "tests/sim/llama_server/http_server.h"

namespace benchfleet::sim::comfyui {

// The version the simulator reports: the captured server's, marked SIMULATED.
inline constexpr char kSimVersion[] = "0.3.64-benchfleet-sim (SIMULATED)";

struct Options {
  std::string listen = "127.0.0.1";
  int port = 8188;
  int step_ms = 5;          // --sim-step-ms: per KSampler step
  int node_ms = 10;         // --sim-node-ms: per executed node (ImageScale above 1024 px: 10x)
  std::string fail_mode;    // --sim-fail: hang-on-prompt, no-websocket, garbage-history, missing-image
  int fail_n = 0;           // the prompt number hang-on-prompt counts to (1-based, executed prompts)
  std::string cache = "classic";  // --sim-cache classic | lru | none
  int lru_size = 0;
  std::string device = "cpu";     // --sim-device cpu | cuda
  bool free_lag = true;           // --sim-free-lag / --no-sim-free-lag
  int free_lag_ms = 100;          // --sim-free-lag-ms: how long a /free waits for the queue
  int max_steps = 1000;           // --sim-max-steps: KSampler steps above this fail at run time
  std::vector<std::string> checkpoints = {"v1-5-pruned-emaonly.safetensors", "v1-5-pruned-emaonly-fp16.safetensors"};  // --sim-checkpoints a,b
};

// Parses argv; returns "" or an argparse-style error ("unrecognized arguments: --x").
std::string ParseOptions(int argc, char** argv, Options* options);

class ComfyUiSim {
 public:
  ComfyUiSim(Options options, std::vector<std::string> argv);
  ~ComfyUiSim();
  ComfyUiSim(const ComfyUiSim&) = delete;
  ComfyUiSim& operator=(const ComfyUiSim&) = delete;

  // Answers one HTTP request (the websocket upgrade included: it then holds the connection).
  void Handle(const HttpRequest& req, HttpResponder& res);
  // Starts the worker thread that executes queued prompts.
  void StartWorker();

 private:
  struct QueueItem {
    int64_t number = 0;
    std::string prompt_id;
    Json prompt;
    Json extra_data;
    std::vector<std::string> outputs;
    std::string client_id;
  };
  struct CachedNode {
    uint64_t value = 0;  // the node's "tensor": a hash of its signature
    int width = 0, height = 0;
    Json ui;             // SaveImage's {"images": [...]}, else null
    int64_t generation = 0;
  };

  void Worker();
  void Execute(const QueueItem& item, std::unique_lock<std::mutex>& lock);
  void ApplyFree();
  void Send(const std::string& client_id, const std::string& type, const Json& data);
  void Broadcast(const std::string& type, const Json& data);
  Json StatusData() const;  // {"status": {"exec_info": {"queue_remaining": n}}}
  Json QueueEntry(const QueueItem& item) const;

  void PostPrompt(const HttpRequest& req, HttpResponder& res);
  void GetHistory(const std::string& id, HttpResponder& res);
  void GetView(const HttpRequest& req, HttpResponder& res);
  void WebSocketSession(const HttpRequest& req, HttpResponder& res);
  void Log(const std::string& line);

  const Options options_;
  const std::vector<std::string> argv_;
  const NodeTable table_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  int64_t next_number_ = 0;
  int64_t executed_prompts_ = 0;
  std::deque<QueueItem> pending_;
  std::unique_ptr<QueueItem> running_;
  bool interrupt_ = false;
  bool free_pending_ = false;
  std::chrono::steady_clock::time_point free_deadline_;
  int64_t generation_ = 0;
  std::map<std::string, CachedNode> cache_;
  std::vector<std::pair<std::string, Json>> history_;  // in execution order
  std::map<std::string, std::string> files_;           // "subfolder/filename" -> PNG bytes
  std::map<std::string, std::shared_ptr<WebSocket>> sockets_;
  std::mutex log_mu_;
};

}  // namespace benchfleet::sim::comfyui

#endif  // BENCHFLEET_TESTS_SIM_COMFYUI_COMFYUI_SIM_H_
