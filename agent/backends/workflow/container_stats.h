// The memory of a container that a workflow command starts (a `docker run --name {container} ...`
// template), as the container runtime reports it: `docker stats --no-stream --format '{{json .}}'
// NAME`, sampled on a thread of its own while the command runs; the highest MemUsage seen is the
// run's CONTAINER_PEAK. A sampled peak is a lower bound: a spike between two samples is missed.
// Owner: the workflow backend. The parsers are pure; ContainerMemorySampler's Start/Stop are
// called from one thread, its own thread only runs the tool and updates the peak under a mutex.
#ifndef BENCHFLEET_AGENT_BACKENDS_WORKFLOW_CONTAINER_STATS_H_
#define BENCHFLEET_AGENT_BACKENDS_WORKFLOW_CONTAINER_STATS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/probes/command_runner.h"
#include "common/clock.h"

namespace benchfleet::agent::workflow {

// Parses a size as docker prints it: "1.5GiB", "796 KiB", "0B", "3.568MB", "512kB". Binary units
// (KiB, MiB, GiB, TiB) count 1024, decimal ones (kB/KB, MB, GB, TB) 1000, as Docker's go-units
// writes them. INVALID_ARGUMENT for anything else ("--", "", "12 parsecs").
absl::StatusOr<uint64_t> ParseDockerSize(std::string_view text);

// One line of `docker stats --no-stream --format '{{json .}}'`.
struct DockerStats {
  std::string name;  // "Name", else "Container" (when "Name" is empty or "--")
  uint64_t memory_used_bytes = 0;
  std::optional<uint64_t> memory_limit_bytes;
};

// Parses one such line: its MemUsage "USED / LIMIT" (e.g. "1.5GiB / 62.8GiB"). INVALID_ARGUMENT
// when the line is not a JSON object, has no MemUsage, or MemUsage is "--" (a container that is
// not running) or not a size.
absl::StatusOr<DockerStats> ParseDockerStatsLine(std::string_view line);

// Returns the program that reads a container's stats for a command whose argv[0] is program: the
// same one when its file name is "docker", else "docker" from the agent's PATH.
std::string DockerProgramFor(const std::string& program);

// What the samples of one run show.
struct ContainerPeak {
  std::optional<uint64_t> peak_bytes;  // nullopt: no sample succeeded
  int samples = 0;                     // successful samples
  int attempts = 0;
  std::string last_error;  // why the last failed attempt failed ("" when none did)
};

class ContainerMemorySampler {
 public:
  // docker: the program (DockerProgramFor); container: the name the agent gave the container.
  ContainerMemorySampler(CommandRunner* runner, Clock* clock, std::string docker, std::string container,
                         absl::Duration period, absl::Duration timeout = absl::Seconds(5));
  ~ContainerMemorySampler();  // stops the thread
  ContainerMemorySampler(const ContainerMemorySampler&) = delete;
  ContainerMemorySampler& operator=(const ContainerMemorySampler&) = delete;

  // Samples now, then every period on a thread of its own, until Stop.
  void Start();
  // Stops the thread (waits for a sample in flight) and returns what the samples showed.
  ContainerPeak Stop();
  // Takes one sample: runs the tool once and keeps the highest MemUsage. A container that does not
  // exist yet (the image is still being pulled) or any other failure counts as a failed attempt.
  void SampleOnce();
  // Returns the samples' figures so far.
  ContainerPeak peak();

  // The command line of one sample, for the record's source.
  std::vector<std::string> argv() const;

 private:
  void Loop();

  CommandRunner* runner_;
  Clock* clock_;
  std::string docker_;
  std::string container_;
  absl::Duration period_;
  absl::Duration timeout_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  ContainerPeak peak_ ABSL_GUARDED_BY(mu_);
};

}  // namespace benchfleet::agent::workflow

#endif  // BENCHFLEET_AGENT_BACKENDS_WORKFLOW_CONTAINER_STATS_H_
