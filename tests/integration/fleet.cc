#include "tests/integration/fleet.h"

#include <fstream>
#include <sstream>

#include "absl/time/clock.h"

namespace benchfleet::testing {

CoordinatorProcess::CoordinatorProcess(std::string database_url, std::string work_dir)
    : database_url_(std::move(database_url)),
      work_dir_(std::move(work_dir)),
      port_(FreePort()),
      metrics_port_(FreePort()) {}

bool CoordinatorProcess::Start(absl::Duration timeout) {
  ++starts_;
  const std::string log_path = work_dir_ + "/coordinator.log";
  const size_t log_before = ReadAll(log_path).size();
  process_ = std::make_unique<Subprocess>(
      std::vector<std::string>{BinaryPath("benchfleet-coordinator"), "--plaintext", "--listen", address(),
                               "--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port_)},
      std::map<std::string, std::string>{{"BENCHFLEET_DATABASE_URL", database_url_}}, log_path);
  return PollUntil(
      [&] {
        return ReadAll(log_path).find("listening on", log_before) != std::string::npos ||
               !process_->running();
      },
      timeout) &&
         process_->running();
}

void CoordinatorProcess::Kill(int signo) { process_->Signal(signo); }

int CoordinatorProcess::Wait() { return process_->Wait(); }

std::string CoordinatorProcess::log() const { return ReadAll(work_dir_ + "/coordinator.log"); }

std::unique_ptr<Subprocess> StartAgent(const std::string& work_dir, const std::string& name,
                                       std::vector<std::string> args) {
  args.insert(args.begin(), BinaryPath("benchfleet-agent"));
  return std::make_unique<Subprocess>(std::move(args), std::map<std::string, std::string>{},
                                      work_dir + "/" + name + ".log");
}

int SimulateSeries(const std::string& work_dir, const std::string& cls, int runs, const std::string& coordinator) {
  const std::string config = work_dir + "/" + cls + ".yaml";
  std::ofstream(config) << "labels:\n  class: " << cls << "\n";
  return StartAgent(work_dir, "sim-" + cls,
                    {"simulate", "--config", config, "--runs", std::to_string(runs), "--out",
                     work_dir + "/series-" + cls, "--state-dir", work_dir + "/state-" + cls, "--coordinator",
                     coordinator})
      ->Wait();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace benchfleet::testing
