// docker stats for a container the workflow command starts: sizes in Docker's units, the
// `{{json .}}` lines of tests/fixtures/probes/docker/ (written from Docker's documented output),
// and the sampler's peak through a scripted runner on a simulated clock (no docker needed).
#include "agent/backends/workflow/container_stats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <thread>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/unit/agent/probes/fake_tools.h"

namespace benchfleet::agent::workflow {
namespace {

using testing::Fixture;
using testing::Printed;

std::vector<std::string> FixtureLines() {
  return absl::StrSplit(Fixture("probes/docker/stats-json.txt"), '\n', absl::SkipEmpty());
}

TEST(DockerStatsTest, SizesInDockersUnits) {
  EXPECT_EQ(ParseDockerSize("0B").value(), 0u);
  EXPECT_EQ(ParseDockerSize("796KiB").value(), 796u * 1024);
  EXPECT_EQ(ParseDockerSize("64MiB").value(), 64u << 20);
  EXPECT_EQ(ParseDockerSize("1.5GiB").value(), 1610612736u);
  EXPECT_EQ(ParseDockerSize("2TiB").value(), uint64_t{2} << 40);
  EXPECT_EQ(ParseDockerSize(" 115.2 MiB ").value(), 120795955u);  // an older CLI: space before the unit
  EXPECT_EQ(ParseDockerSize("512kB").value(), 512000u);            // decimal units are powers of 1000
  EXPECT_EQ(ParseDockerSize("512KB").value(), 512000u);
  EXPECT_EQ(ParseDockerSize("3.568MB").value(), 3568000u);
  EXPECT_EQ(ParseDockerSize("1GB").value(), 1000000000u);
  EXPECT_EQ(ParseDockerSize("--").status().message(), "not a size: '--'");
  EXPECT_EQ(ParseDockerSize("").status().message(), "not a size: ''");
  EXPECT_EQ(ParseDockerSize("-5MiB").status().message(), "not a size: '-5MiB'");
  EXPECT_EQ(ParseDockerSize("12 parsecs").status().message(), "not a size: '12 parsecs' (unknown unit)");
  EXPECT_EQ(ParseDockerSize("1.2.3MiB").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseDockerSize("99999999999TiB").status().message(), "not a size: '99999999999TiB' (too large)");
}

TEST(DockerStatsTest, JsonLinesOfTheFixture) {
  const std::vector<std::string> lines = FixtureLines();
  ASSERT_EQ(lines.size(), 4u);
  auto small = ParseDockerStatsLine(lines[0]);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->name, "benchfleet-4242-1767225600-1");
  EXPECT_EQ(small->memory_used_bytes, 796u * 1024);
  EXPECT_EQ(small->memory_limit_bytes, uint64_t{64} << 20);
  auto loaded = ParseDockerStatsLine(lines[1]);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->memory_used_bytes, 1610612736u);  // "1.5GiB / 62.79GiB"
  EXPECT_EQ(loaded->memory_limit_bytes, 67420249129u);
  EXPECT_EQ(ParseDockerStatsLine(lines[2]).status().message(),
            "docker stats: container benchfleet-4242-1767225600-3 is not running (MemUsage '-- / --')");
  auto spaced = ParseDockerStatsLine(lines[3]);
  ASSERT_TRUE(spaced.ok()) << spaced.status();
  EXPECT_EQ(spaced->name, "fervent_panini");
  EXPECT_EQ(spaced->memory_used_bytes, 120795955u);

  EXPECT_EQ(ParseDockerStatsLine("").status().message(), "docker stats: not a JSON object: ''");
  EXPECT_EQ(ParseDockerStatsLine("Error response from daemon: No such container: x").status().message(),
            "docker stats: not a JSON object: 'Error response from daemon: No such container: x'");
  EXPECT_EQ(ParseDockerStatsLine(R"({"Name": "x"})").status().message(), "docker stats: no MemUsage in the line");
  EXPECT_EQ(ParseDockerStatsLine(R"({"Name": "x", "MemUsage": "lots / 2GiB"})").status().message(),
            "docker stats: MemUsage not a size: 'lots'");
  auto no_limit = ParseDockerStatsLine(R"({"Name": "x", "MemUsage": "1MiB"})");
  ASSERT_TRUE(no_limit.ok());
  EXPECT_EQ(no_limit->memory_limit_bytes, std::nullopt);
}

TEST(DockerStatsTest, TheProgramIsTheTemplatesDockerElseDockerOnPath) {
  EXPECT_EQ(DockerProgramFor("/usr/bin/docker"), "/usr/bin/docker");
  EXPECT_EQ(DockerProgramFor("/opt/bench/run-in-docker.sh"), "docker");
  EXPECT_EQ(DockerProgramFor("/usr/bin/dockerd"), "docker");
}

// Answers `docker stats` with the next scripted output; thread-safe.
class SequenceRunner : public CommandRunner {
 public:
  void Then(absl::StatusOr<CommandOutput> output) {
    std::lock_guard<std::mutex> lock(mu_);
    answers_.push_back(std::move(output));
  }
  absl::StatusOr<CommandOutput> Run(const std::vector<std::string>& argv, absl::Duration) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(absl::StrJoin(argv, " "));
    if (answers_.empty()) return absl::DeadlineExceededError("docker did not finish within 5s");
    absl::StatusOr<CommandOutput> next = answers_.front();
    answers_.pop_front();
    return next;
  }
  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::deque<absl::StatusOr<CommandOutput>> answers_;
  std::vector<std::string> calls_;
};

CommandOutput NoSuchContainer(const std::string& name) {
  CommandOutput out = Printed("", 1);
  out.stderr_text = "Error response from daemon: No such container: " + name + "\n";
  return out;
}

std::string Line(const std::string& name, const std::string& usage) {
  return R"({"BlockIO":"0B / 0B","CPUPerc":"99.10%","Container":")" + name + R"(","MemUsage":")" + usage +
         R"(","Name":")" + name + R"(","PIDs":"3"})" + "\n";
}

TEST(ContainerMemorySamplerTest, KeepsTheHighestSampleAndCountsTheFailures) {
  SequenceRunner runner;
  const std::string name = "benchfleet-1-2-3";
  runner.Then(NoSuchContainer(name));  // the image is still being pulled
  runner.Then(Printed(Line(name, "300MiB / 62.79GiB")));
  runner.Then(Printed(Line(name, "1.5GiB / 62.79GiB")));
  runner.Then(Printed(Line(name, "1GiB / 62.79GiB")));
  runner.Then(Printed(Line(name, "-- / --")));  // stopped
  SimulatedClock clock;
  ContainerMemorySampler sampler(&runner, &clock, "/usr/bin/docker", name, absl::Seconds(1));
  for (int i = 0; i < 5; ++i) sampler.SampleOnce();
  ContainerPeak peak = sampler.peak();
  EXPECT_EQ(peak.peak_bytes, 1610612736u);
  EXPECT_EQ(peak.samples, 3);
  EXPECT_EQ(peak.attempts, 5);
  EXPECT_EQ(peak.last_error, "docker stats: container benchfleet-1-2-3 is not running (MemUsage '-- / --')");
  EXPECT_EQ(runner.calls().at(0), "/usr/bin/docker stats --no-stream --format {{json .}} benchfleet-1-2-3");
}

TEST(ContainerMemorySamplerTest, NoSampleSaysWhy) {
  SequenceRunner runner;
  runner.Then(NoSuchContainer("c"));
  runner.Then(absl::NotFoundError("docker: not found on PATH"));
  SimulatedClock clock;
  ContainerMemorySampler sampler(&runner, &clock, "docker", "c", absl::Seconds(1));
  sampler.SampleOnce();
  EXPECT_EQ(sampler.peak().last_error,
            "docker stats --no-stream --format {{json .}} c exited with code 1: Error response from daemon: No such "
            "container: c");
  sampler.SampleOnce();
  const ContainerPeak peak = sampler.peak();
  EXPECT_EQ(peak.peak_bytes, std::nullopt);
  EXPECT_EQ(peak.samples, 0);
  EXPECT_EQ(peak.attempts, 2);
  EXPECT_EQ(peak.last_error, "docker: not found on PATH");
}

// Waits (without sleeping for real) until pred holds.
template <typename Pred>
void SpinUntil(Pred pred) {
  while (!pred()) std::this_thread::yield();
}

TEST(ContainerMemorySamplerTest, SamplesAtOnceThenEveryPeriodUntilStopped) {
  SequenceRunner runner;
  runner.Then(Printed(Line("c", "100MiB / 1GiB")));
  runner.Then(Printed(Line("c", "700MiB / 1GiB")));
  runner.Then(Printed(Line("c", "200MiB / 1GiB")));
  SimulatedClock clock;
  ContainerMemorySampler sampler(&runner, &clock, "docker", "c", absl::Seconds(1));
  sampler.Start();
  SpinUntil([&] { return runner.calls().size() == 1 && clock.sleepers() == 1; });
  clock.Advance(absl::Milliseconds(999));
  SpinUntil([&] { return clock.sleepers() == 1; });
  EXPECT_EQ(runner.calls().size(), 1u);  // not before the period
  clock.Advance(absl::Milliseconds(1));
  SpinUntil([&] { return runner.calls().size() == 2 && clock.sleepers() == 1; });
  clock.Advance(absl::Seconds(1));
  SpinUntil([&] { return runner.calls().size() == 3 && clock.sleepers() == 1; });
  // Stop from another thread while this one moves the clock in small steps, so the sampler's
  // sleep ends and it sees the stop before its next period.
  std::atomic<bool> stopped{false};
  ContainerPeak peak;
  std::thread stopper([&] {
    peak = sampler.Stop();
    stopped = true;
  });
  while (!stopped) {
    if (clock.sleepers() > 0) clock.Advance(absl::Milliseconds(1));
    std::this_thread::yield();
  }
  stopper.join();
  EXPECT_EQ(peak.peak_bytes, uint64_t{700} << 20);
  EXPECT_EQ(peak.samples, 3);
  EXPECT_EQ(peak.attempts, 3);
  EXPECT_EQ(runner.calls().size(), 3u);
}

}  // namespace
}  // namespace benchfleet::agent::workflow
