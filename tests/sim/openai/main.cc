// openai-sim: a SIMULATED OpenAI-compatible server for tests (tests/sim/README.md, "openai").
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "tests/sim/llama_server/http_server.h"
#include "tests/sim/openai/openai_sim.h"

namespace {

int g_shutdown_pipe[2] = {-1, -1};

void OnSignal(int) {
  const char c = 1;
  (void)!::write(g_shutdown_pipe[1], &c, 1);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace benchfleet::sim;
  openai::Options options;
  if (argc == 2 && std::string(argv[1]) == "--help") {
    std::fputs(openai::Usage().c_str(), stdout);
    return 0;
  }
  const std::string error = openai::ParseOptions(argc - 1, argv + 1, &options);
  if (!error.empty()) {
    std::fprintf(stderr, "openai-sim: %s\n%s", error.c_str(), openai::Usage().c_str());
    return 2;
  }
  if (::pipe2(g_shutdown_pipe, O_CLOEXEC) != 0) return 1;
  ::signal(SIGPIPE, SIG_IGN);
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  openai::OpenAiSim sim(options);
  HttpServer server;
  std::string bind_error;
  if (!server.Bind(options.host, options.port, &bind_error)) {
    std::fprintf(stderr, "openai-sim: cannot listen on %s:%d: %s\n", options.host.c_str(), options.port,
                 bind_error.c_str());
    return 1;
  }
  server.Start([&sim](const HttpRequest& req, HttpResponder& res) { sim.Handle(req, res); });
  std::fprintf(stderr, "openai-sim (%s): serving %s on http://%s:%d/v1 (%.1f tokens/s, first token after %lld ms)\n",
               openai::kFingerprint, options.model.c_str(), options.host.c_str(), options.port,
               options.tokens_per_second, static_cast<long long>(options.ttft_ms));
  std::fflush(stderr);
  char c;
  while (::read(g_shutdown_pipe[0], &c, 1) < 0) {
  }
  std::fprintf(stderr, "openai-sim: stopped after %lld generation requests\n", static_cast<long long>(sim.requests()));
  std::fflush(stderr);
  ::_exit(0);  // connection threads are detached; nothing to flush but stderr
}
