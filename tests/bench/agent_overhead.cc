// agent_overhead: the agent must not disturb what it measures.
//
// In one run, against a llama-server simulator (or, with --llama-server and --model, a real
// llama-server) already serving, so no server start is timed, in R interleaved rounds (--rounds)
// so that a busy spell of the host falls on both sides instead of one:
//   -lv 4   the bare loop against a server at default verbosity and one at -lv 4 (the agent starts
//           llama-server with -lv 4 for its buffer sizes), both up, their loops alternating:
//           what the verbose log costs a request;
//   bare    N/R POST /completion requests per round from a plain libcurl loop (one reused handle);
//   agent   the same requests as a benchfleet-agent `run` series of 1 cold + N/R warm runs per
//           round, the agent as its own process; its wall times are read back from runs.jsonl.
// Which of bare and agent goes first alternates by round; each round also runs the bare loop with
// a new handle (a new connection) per request, as the agent's client makes one per run. Prints
// the per-run wall time the agent adds (the median over rounds of each round's agent median minus
// the median of that like-for-like bare loop, with the rounds' range; and against the kept-alive
// loop, with what the new connection costs), the agent's own CPU time per run (whole process, marginal: the rounds' CPU less
// R times that of a 1-call series, over the further calls; includes its between-run record
// keeping), and the idle resident memory of an agent process (`serve` with no coordinator).
// Targets (issue 21): at most 0.5 ms added per run, at most 15 MB idle RSS; each printed with
// "met" or "NOT met".
#include <curl/curl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/env.h"
#include "common/series_folder.h"
#include "tests/support/subprocess.h"

namespace benchfleet::bench {
namespace {

using Steady = std::chrono::steady_clock;

constexpr char kPrompt[] = "Explain in one sentence what a GPU is.";

size_t Discard(char*, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(size * n, ' ');
  return size * n;
}

struct Curl {
  CURL* handle = curl_easy_init();
  std::string body;
  ~Curl() { curl_easy_cleanup(handle); }

  // Returns the HTTP status of a GET or (with data) a POST; the wall seconds in *seconds.
  long Request(const std::string& url, const std::string* data, double* seconds) {
    body.clear();
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &Discard);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &body);
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    if (data != nullptr) {
      curl_easy_setopt(handle, CURLOPT_POSTFIELDS, data->c_str());
    } else {
      curl_easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    }
    const auto start = Steady::now();
    CURLcode rc = curl_easy_perform(handle);
    if (seconds != nullptr) *seconds = std::chrono::duration<double>(Steady::now() - start).count();
    curl_slist_free_all(headers);
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    return status;
  }
};

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Runs argv to completion; returns its exit code and its CPU seconds (user + system).
int RunForCpu(const std::vector<std::string>& argv, const std::string& log, double* cpu_seconds) {
  std::fflush(stdout);  // or the child's copy of the buffer is printed again
  pid_t pid = ::fork();
  if (pid == 0) {
    FILE* f = std::freopen(log.c_str(), "a", stdout);
    if (f != nullptr) ::dup2(::fileno(stdout), 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  *cpu_seconds = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
                 usage.ru_stime.tv_usec / 1e6;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Rss {
  long rss_kb = -1;   // VmRSS: every resident page of the process
  long anon_kb = -1;  // RssAnon: its private memory (heap, stacks, written library data)
  long file_kb = -1;  // RssFile: resident pages of mapped files, mostly shared library code
};

Rss ReadRss(pid_t pid) {
  Rss rss;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) rss.rss_kb = std::atol(line.c_str() + 6);
    if (line.rfind("RssAnon:", 0) == 0) rss.anon_kb = std::atol(line.c_str() + 8);
    if (line.rfind("RssFile:", 0) == 0) rss.file_kb = std::atol(line.c_str() + 8);
  }
  return rss;
}

struct Options {
  int runs = 200;
  int rounds = 10;
  int n_predict = 16;
  double tokens_per_second = 2000;
  // A real llama-server and model instead of the simulator (outside the test suite).
  std::string llama_server;
  std::string model;
};

// A llama-server (or the simulator) started for the benchmark, ready to answer.
struct Server {
  std::unique_ptr<testing::Subprocess> process;
  std::string base;  // http://127.0.0.1:PORT
};

absl::StatusOr<Server> StartServer(const Options& options, const std::string& model,
                                   const std::string& log, bool verbose) {
  Server server;
  const int port = testing::FreePort();
  server.base = "http://127.0.0.1:" + std::to_string(port);
  std::vector<std::string> argv = {options.llama_server.empty() ? testing::BinaryPath("llama-server-sim")
                                                                : options.llama_server,
                                   "-m", model, "--host", "127.0.0.1", "--port", std::to_string(port),
                                   "-c", "512", "-ngl", "99"};
  if (verbose) argv.insert(argv.end(), {"-lv", "4"});
  if (options.llama_server.empty()) {
    argv.insert(argv.end(), {"--sim-load-ms", "50", "--sim-gpu-tps", absl::StrCat(options.tokens_per_second)});
  }
  server.process = std::make_unique<testing::Subprocess>(argv, std::map<std::string, std::string>{}, log);
  Curl curl;
  const auto deadline = Steady::now() + std::chrono::seconds(300);
  while (curl.Request(server.base + "/health", nullptr, nullptr) != 200) {
    if (Steady::now() > deadline || !server.process->running()) {
      return absl::UnavailableError(absl::StrCat("the server did not become ready (see ", log, ")"));
    }
    ::usleep(20000);
  }
  return server;
}

// Sends one cold request, then `runs` timed ones; returns their wall seconds. One handle (one
// kept-alive connection) for all, or with `fresh`, a new handle and connection per request as the
// agent's client makes (agent/http/curl_http_client.cc).
absl::StatusOr<std::vector<double>> BareLoop(const std::string& base, const std::string& body, int runs,
                                             bool fresh = false) {
  auto curl = std::make_unique<Curl>();
  std::vector<double> seconds;
  curl->Request(base + "/completion", &body, nullptr);  // the cold call, not counted
  for (int i = 0; i < runs; ++i) {
    double s = 0;
    if (fresh) curl = std::make_unique<Curl>();
    if (curl->Request(base + "/completion", &body, &s) != 200) {
      return absl::InternalError("a bare request failed");
    }
    seconds.push_back(s);
  }
  return seconds;
}

// The requests of `runs` split into `rounds` nearly equal parts: round i gets parts[i].
std::vector<int> Split(int runs, int rounds) {
  std::vector<int> parts;
  for (int i = 0; i < rounds; ++i) parts.push_back(runs / rounds + (i < runs % rounds ? 1 : 0));
  return parts;
}

std::string Verdict(bool met) { return met ? "met" : "NOT met"; }

int Fail(const std::string& message) {
  std::fprintf(stderr, "agent_overhead: %s\n", message.c_str());
  return 1;
}

int Run(const Options& options) {
  const std::string dir = testing::MakeTempDir("agent-overhead");
  std::string model = options.model;
  if (model.empty()) {
    model = dir + "/models/bench.gguf";
    ::mkdir((dir + "/models").c_str(), 0755);
    std::ofstream(model) << "GGUF simulated";
  }
  const bool simulated = options.llama_server.empty();
  const int rounds = std::clamp(options.rounds, 1, std::max(1, options.runs));
  const std::vector<int> parts = Split(options.runs, rounds);
  std::printf("agent_overhead: %d warm runs in %d interleaved rounds, n_predict %d, %s\n", options.runs, rounds,
              options.n_predict,
              simulated ? absl::StrCat("llama-server SIMULATOR at ", options.tokens_per_second,
                                       " tokens/s (SIMULATED server)").c_str()
                        : absl::StrCat("llama-server ", options.llama_server).c_str());
  // The same request as the agent's (temperature 0, fixed seed, prompt cache off).
  const std::string body = absl::StrCat(R"({"prompt":")", kPrompt, R"(","n_predict":)", options.n_predict,
                                        R"(,"temperature":0,"seed":42,"cache_prompt":false})");

  // -lv 4 (the agent starts llama-server with it, for the buffer sizes): does it slow requests?
  // Both servers up at once, their loops alternating round by round; the median of the rounds'
  // differences of medians.
  std::vector<double> verbose_cost_ms;
  {
    auto quiet = StartServer(options, model, dir + "/server-quiet.log", /*verbose=*/false);
    if (!quiet.ok()) return Fail(quiet.status().ToString());
    auto verbose = StartServer(options, model, dir + "/server-verbose.log", /*verbose=*/true);
    if (!verbose.ok()) return Fail(verbose.status().ToString());
    for (int round = 0; round < rounds; ++round) {
      absl::StatusOr<std::vector<double>> q, v;
      if (round % 2 == 0) {
        q = BareLoop(quiet->base, body, parts[round]);
        v = BareLoop(verbose->base, body, parts[round]);
      } else {
        v = BareLoop(verbose->base, body, parts[round]);
        q = BareLoop(quiet->base, body, parts[round]);
      }
      if (!q.ok() || !v.ok()) return Fail("a bare request failed");
      verbose_cost_ms.push_back((Median(*v) - Median(*q)) * 1e3);
    }
  }

  // bare against agent, on one server at the verbosity the agent uses: in each round a bare loop
  // and an agent series of the same number of warm calls, which goes first alternating.
  auto server = StartServer(options, model, dir + "/server.log", /*verbose=*/true);
  if (!server.ok()) return Fail(server.status().ToString());
  const std::string base = server->base;
  const std::string config = dir + "/agent.yaml";
  std::ofstream(config) << "state_dir: " << dir << "/state\nallow:\n  backends: [llama-server]\n"
                        << "  urls: [" << base << "]\n";
  auto write_spec = [&](const std::string& name, int warm) {
    const std::string path = dir + "/" + name + ".yaml";
    std::ofstream(path) << "series: " << name << "\ntask: agent-overhead\nbackend: llama-server\n"
                        << "llama-server:\n  url: " << base << "\n  prompt: " << kPrompt
                        << "\n  n_predict: " << options.n_predict << "\n  seed: 42\n"
                        << "runs:\n  cold: 1\n  warm: " << warm << "\n";
    return path;
  };
  const std::string agent = testing::BinaryPath("benchfleet-agent");
  // One series of 1 warm call: the process's fixed CPU cost, taken off each round's.
  double cpu_one = 0;
  if (RunForCpu({agent, "run", write_spec("one", 1), "--config", config, "--out", dir + "/one"},
                dir + "/agent-one.log", &cpu_one) != 0) {
    return Fail("the agent's series failed (see " + dir + "/agent-one.log)");
  }
  // The agent's warm calls of one round: their wall_duration from the records; its CPU in *cpu.
  auto agent_round = [&](int round, int warm, double* cpu) -> absl::StatusOr<std::vector<double>> {
    const std::string name = absl::StrCat("round-", round);
    if (RunForCpu({agent, "run", write_spec(name, warm), "--config", config, "--out", dir + "/" + name},
                  dir + "/agent-" + name + ".log", cpu) != 0) {
      return absl::InternalError(absl::StrCat("the agent's series failed (see ", dir, "/agent-", name, ".log)"));
    }
    auto records = ReadRecords(Env::Default(), dir + "/" + name);
    if (!records.ok()) return records.status();
    std::vector<double> seconds;
    for (const auto& sourced : *records) {
      const auto& r = sourced.record;
      if (r.phase() != v1::PHASE_WARM) continue;
      seconds.push_back(r.wall_duration().seconds() + r.wall_duration().nanos() / 1e9);
    }
    if (static_cast<int>(seconds.size()) != warm) {
      return absl::InternalError(absl::StrCat(seconds.size(), " warm records in ", name, ", expected ", warm));
    }
    return seconds;
  };
  // added_ms: against the bare loop opening a new connection per request, as the agent's client
  // does (agent/http/http_client.h: a run's timing never depends on an earlier one), like for
  // like; kept_alive_ms: against the bare loop on one kept-alive connection.
  std::vector<double> bare, through_agent, added_ms, kept_alive_ms, fresh_ms;
  double cpu_rounds = 0;
  for (int round = 0; round < rounds; ++round) {
    absl::StatusOr<std::vector<double>> b, a, f;
    double cpu = 0;
    if (round % 2 == 0) {
      b = BareLoop(base, body, parts[round]);
      f = BareLoop(base, body, parts[round], /*fresh=*/true);
      a = agent_round(round, parts[round], &cpu);
    } else {
      a = agent_round(round, parts[round], &cpu);
      f = BareLoop(base, body, parts[round], /*fresh=*/true);
      b = BareLoop(base, body, parts[round]);
    }
    if (!b.ok()) return Fail(b.status().ToString());
    if (!f.ok()) return Fail(f.status().ToString());
    if (!a.ok()) return Fail(a.status().ToString());
    cpu_rounds += cpu;
    added_ms.push_back((Median(*a) - Median(*f)) * 1e3);
    kept_alive_ms.push_back((Median(*a) - Median(*b)) * 1e3);
    fresh_ms.push_back((Median(*f) - Median(*b)) * 1e3);
    bare.insert(bare.end(), b->begin(), b->end());
    through_agent.insert(through_agent.end(), a->begin(), a->end());
  }

  // idle: an agent process with nothing to do (no coordinator answers).
  Rss idle;
  {
    testing::Subprocess idle_agent({agent, "serve", "--config", config, "--state-dir", dir + "/idle-state",
                              "--coordinator", "127.0.0.1:" + std::to_string(testing::FreePort())},
                             {}, dir + "/agent-idle.log");
    ::usleep(1500000);
    idle = ReadRss(idle_agent.pid());
  }

  const double added_median_ms = Median(added_ms);
  const auto [added_min, added_max] = std::minmax_element(added_ms.begin(), added_ms.end());
  std::printf("bare libcurl:  median %.3f ms per request (mean %.3f)\n", Median(bare) * 1e3, Mean(bare) * 1e3);
  std::printf("through agent: median %.3f ms per run (mean %.3f; wall_duration of the records)\n",
              Median(through_agent) * 1e3, Mean(through_agent) * 1e3);
  std::printf("added per run: %+.3f ms, the median over %d rounds of (agent median - median of a bare loop opening a "
              "new connection per request, as the agent does), rounds from %+.3f to %+.3f ms   (target <= 0.5 ms: %s)\n",
              added_median_ms, rounds, *added_min, *added_max, Verdict(added_median_ms <= 0.5).c_str());
  std::printf("against a bare loop on one kept-alive connection: %+.3f ms, of which the new connection per request "
              "%+.3f ms (medians over %d rounds)\n",
              Median(kept_alive_ms), Median(fresh_ms), rounds);
  // Each round's series costs what the one-call series does plus its further calls.
  const int further_calls = options.runs - rounds;
  if (further_calls > 0) {
    std::printf("agent CPU per run: %.3f ms (whole process, marginal over %d calls, incl. record keeping)\n",
                (cpu_rounds - rounds * cpu_one) / further_calls * 1e3, further_calls);
  } else {
    std::printf("agent CPU per run: - (one call per round: no marginal cost to measure)\n");
  }
  std::printf("-lv 4 on the server: %+.3f ms per request against the default verbosity (median over %d rounds)%s\n",
              Median(verbose_cost_ms), rounds,
              simulated ? " (SIMULATED server: says nothing of the real llama-server's logging; "
                          "run with --llama-server and --model for that)"
                        : "");
  std::printf("agent idle RSS: %.1f MB (VmRSS), of which %.1f MB private (RssAnon) and %.1f MB shared "
              "library pages (RssFile)   (target <= 15 MB: %s)\n",
              idle.rss_kb / 1024.0, idle.anon_kb / 1024.0, idle.file_kb / 1024.0,
              Verdict(idle.rss_kb >= 0 && idle.rss_kb <= 15 * 1024).c_str());
  return 0;
}

}  // namespace
}  // namespace benchfleet::bench

int main(int argc, char** argv) {
  benchfleet::bench::Options options;
  CLI::App app{"agent_overhead: what the agent adds to each run it measures"};
  app.add_option("--runs", options.runs, "Warm runs in the series and requests in the bare loop");
  app.add_option("--rounds", options.rounds,
                 "Interleaved rounds: each a bare loop and an agent series of runs/rounds calls, alternating "
                 "which goes first");
  app.add_option("--n-predict", options.n_predict, "Tokens per request");
  app.add_option("--tokens-per-second", options.tokens_per_second, "The simulator's token rate");
  app.add_option("--llama-server", options.llama_server, "A real llama-server binary instead of the simulator");
  app.add_option("--model", options.model, "The model for --llama-server (a .gguf file)");
  CLI11_PARSE(app, argc, argv);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  return benchfleet::bench::Run(options);
}
