// comfyui-sim: a SIMULATED ComfyUI 0.3.64 server for tests (tests/sim/README.md, "ComfyUI").
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/sim/comfyui/comfyui_sim.h"
#include "tests/sim/llama_server/http_server.h"

namespace {

int g_shutdown_pipe[2] = {-1, -1};

void OnSignal(int) {
  const char c = 1;
  (void)!::write(g_shutdown_pipe[1], &c, 1);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace benchfleet::sim;
  comfyui::Options options;
  const std::string error = comfyui::ParseOptions(argc, argv, &options);
  if (!error.empty()) {
    std::fprintf(stderr, "usage: main.py [-h] [--listen [IP]] [--port PORT] [--sim-* ...]\nmain.py: error: %s\n",
                 error.c_str());
    return 2;
  }
  if (::pipe2(g_shutdown_pipe, O_CLOEXEC) != 0) return 1;
  ::signal(SIGPIPE, SIG_IGN);
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  std::vector<std::string> args = {"COMFYUI_ROOT/main.py"};
  for (int i = 1; i < argc; i++) args.push_back(argv[i]);
  comfyui::ComfyUiSim sim(options, args);
  std::string startup;
  if (options.device == "cuda") {
    startup += "Total VRAM 24576 MB, total RAM 24105 MB\npytorch version: 1.13.0a0\nSet vram state to: NORMAL_VRAM\n"
               "Device: cuda:0 SIMULATED benchfleet-sim GPU : cudaMallocAsync\n";
  } else {
    startup += "Total VRAM 24105 MB, total RAM 24105 MB\npytorch version: 1.13.0a0\nSet vram state to: DISABLED\nDevice: cpu\n";
  }
  startup += "Python version: 3.11.2 (main, Apr 28 2025, 14:11:48) [GCC 12.2.0]\n";
  startup += std::string("ComfyUI version: ") + comfyui::kSimVersion + "\n";
  std::fputs(startup.c_str(), stderr);
  HttpServer server;
  std::string bind_error;
  if (!server.Bind(options.listen, options.port, &bind_error)) {
    std::fprintf(stderr, "OSError: [Errno 98] error while attempting to bind on address ('%s', %d): %s\n",
                 options.listen.c_str(), options.port, bind_error.c_str());
    return 1;
  }
  sim.StartWorker();
  server.Start([&sim](const HttpRequest& req, HttpResponder& res) { sim.Handle(req, res); });
  std::fprintf(stderr, "Starting server\n\nTo see the GUI go to: http://%s:%d\n", options.listen.c_str(), options.port);
  std::fflush(stderr);
  char c;
  while (::read(g_shutdown_pipe[0], &c, 1) < 0) {
  }
  std::fprintf(stderr, "\nStopped server\n");
  std::fflush(stderr);
  ::_exit(0);  // connection and worker threads are detached; nothing to flush but stderr
}
