// The simulated llama-server: starts like the real one (log, bind, 503 while "loading", ready),
// serves its endpoints with the real wire format, spends real time per token so wall times and
// rates mean something, and misbehaves on purpose when told to (--sim-fail). Owner: tests/sim.
// Thread-safe: each HTTP connection runs on its own thread; shared state is under mu_.
#ifndef BENCHFLEET_TESTS_SIM_LLAMA_SERVER_LLAMA_SERVER_SIM_H_
#define BENCHFLEET_TESTS_SIM_LLAMA_SERVER_LLAMA_SERVER_SIM_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "tests/sim/llama_server/http_server.h"
#include "tests/sim/llama_server/memory_layout.h"
#include "tests/sim/llama_server/responses.h"
#include "tests/sim/llama_server/sim_log.h"
#include "tests/sim/llama_server/sim_options.h"
#include "tests/sim/llama_server/startup_log.h"

namespace benchfleet::sim {

// Set by the SIGINT/SIGTERM handler's owner (main.cc): true once the model is loaded, from when
// a signal means "shut down cleanly" (before, llama-server has no handler and the signal kills it).
extern std::atomic<bool> g_server_ready;

class LlamaServerSim {
 public:
  LlamaServerSim(const SimOptions& options, SimLog& log, std::chrono::steady_clock::time_point start);

  // Starts, loads and serves until `shutdown_fd` becomes readable (a byte written by the signal
  // handler); returns the exit status: 0 after a clean shutdown, 1 when start-up fails.
  int Run(int shutdown_fd);

 private:
  struct Slot {
    int id = 0;
    bool busy = false;
    int task_id = -1;
    int64_t t_last_used = -1;
    std::vector<int32_t> tokens;  // what its KV cache holds: prompt + generated
  };

  // A parsed generation request.
  struct Job {
    bool oai = false;
    int64_t number = 0;  // 1-based count of generation requests since start
    std::string prompt_text;         // the prompt string, or the token list as JSON
    bool prompt_is_tokens = false;
    std::vector<int32_t> prompt_tokens;
    SamplingParams params;
    std::string model_name;  // "model" of the response
  };

  void Handle(const HttpRequest& req, HttpResponder& res);
  void HandleCompletion(const HttpRequest& req, HttpResponder& res, bool oai);
  void Generate(Job job, const HttpRequest& req, HttpResponder& res);
  void HandleMetrics(const HttpRequest& req, HttpResponder& res);
  void HandleSlots(const HttpRequest& req, HttpResponder& res);
  void HandleModels(const HttpRequest& req, HttpResponder& res);
  void HandleTokenize(const HttpRequest& req, HttpResponder& res);

  HeaderList BaseHeaders(const HttpRequest& req) const;
  void SendJson(const HttpRequest& req, HttpResponder& res, int status, const Json& body);
  void SendError(const HttpRequest& req, HttpResponder& res, int code, const std::string& message,
                 const std::string& type);

  // Picks a slot like llama-server (best prompt prefix above 10% similarity, else least recently
  // used), waiting while all are busy; logs the choice. Returns the slot and the shared prefix.
  Slot& AcquireSlot(const std::vector<int32_t>& prompt, size_t* lcp);
  void ReleaseSlot(Slot& slot, std::vector<int32_t> tokens, int64_t n_tokens, bool truncated);

  // Logs what llama-server logs before a task runs; returns its task id.
  int LaunchTask(Slot& slot, const Job& job, int64_t expected_tokens);
  int NextTaskId(int consumed);

  double DecodeRate() const;
  double PromptRate() const;
  double Throttle(int64_t number) const;
  bool FailsOn(FailMode mode, int64_t number) const;
  // Logs a crash like ggml does and aborts (die-on-request).
  [[noreturn]] void Crash();
  // Never returns (hang-on-request): the request thread waits until the process exits.
  [[noreturn]] void HangForever();

  int64_t NowUs() const;
  std::string RandomAlnum(size_t n);

  const SimOptions& o_;
  SimLog& log_;
  const std::chrono::steady_clock::time_point start_;
  const int64_t start_unix_;
  MemoryLayout layout_;
  HostInfo host_;
  std::string model_name_;
  std::string media_marker_;
  SamplingParams defaults_;
  HttpServer http_;

  std::atomic<bool> ready_{false};
  std::atomic<int64_t> request_count_{0};

  std::mutex mu_;
  std::condition_variable slot_freed_;
  std::vector<Slot> slots_;              // GUARDED_BY(mu_)
  int next_task_id_ = 0;                 // GUARDED_BY(mu_)
  int64_t graphs_reused_ = 0;            // GUARDED_BY(mu_)
  bool first_task_ = true;               // GUARDED_BY(mu_)
  MetricsInput totals_;                  // GUARDED_BY(mu_); the gauges are filled on scrape
  double bucket_prompt_tokens_ = 0;      // GUARDED_BY(mu_); since the last scrape
  double bucket_prompt_ms_ = 0;          // GUARDED_BY(mu_)
  double bucket_gen_steps_ = 0;          // GUARDED_BY(mu_)
  double bucket_gen_ms_ = 0;             // GUARDED_BY(mu_)
  double busy_slots_total_ = 0;          // GUARDED_BY(mu_)
  int processing_ = 0;                   // GUARDED_BY(mu_)
  int deferred_ = 0;                     // GUARDED_BY(mu_)
  std::mt19937_64 rng_;                  // GUARDED_BY(mu_)
};

}  // namespace benchfleet::sim

#endif  // BENCHFLEET_TESTS_SIM_LLAMA_SERVER_LLAMA_SERVER_SIM_H_
