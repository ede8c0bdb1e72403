// DeviceSampler: watches the accelerators during each timed run. BeginRun() reads the devices
// at once and then every `period` on a thread of its own; EndRun(record) reads them once more,
// stops the thread and adds to the record what the readings show (AnnotateRun below). Only
// reading and parsing happen during the run: no file is written, nothing is sent.
// Owner: whoever runs the series (the series runner's hook). BeginRun/EndRun are called from
// one thread, in pairs; the sampler's own thread only reads the monitor.
#ifndef BENCHFLEET_AGENT_PROBES_DEVICE_SAMPLER_H_
#define BENCHFLEET_AGENT_PROBES_DEVICE_SAMPLER_H_

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "agent/probes/device_monitor.h"
#include "benchfleet/v1/record.pb.h"
#include "common/clock.h"
#include "common/figures.h"

namespace benchfleet::agent {

inline constexpr char kThrottledFlag[] = "THROTTLED";
inline constexpr char kContendedFlag[] = "CONTENDED";
inline constexpr char kEnergyMetric[] = "device_energy_joules";
inline constexpr char kEnergyPerTokenMetric[] = "device_energy_joules_per_output_token";
inline constexpr char kEnergyPerImageMetric[] = "device_energy_joules_per_image";

// The declaration of the figures the sampler adds (common/figures.h), which the runner stamps after
// the backend's own: energy per output token and per image are headline figures where measured.
inline constexpr FigureDeclaration kDeviceFigures[] = {
    {.name = kEnergyPerTokenMetric, .unit = "J/token", .better = v1::BETTER_LOWER, .headline = 1,
     .label = "energy per output token"},
    {.name = kEnergyPerImageMetric, .unit = "J/image", .better = v1::BETTER_LOWER, .headline = 2,
     .label = "energy per image"},
    {.name = kEnergyMetric, .unit = "J", .better = v1::BETTER_LOWER},
};

// The run's own time window on the monotonic clock.
struct RunWindow {
  absl::Duration start;
  absl::Duration end;
};

struct AnnotateOptions {
  // The monitor's memory_source() and vendor(), for MemoryFigure.source and scopes.
  std::string memory_source;
  std::string vendor;
  // True for the processes of the agent's own tree (not contention). Unset: none is ours.
  std::function<bool(int64_t pid)> is_own_process;
  // Without throttle reasons (AMD): a sample is throttled when its clock is below this fraction
  // of the maximum while utilisation is at least load_percent.
  double clock_fraction = 0.9;
  double load_percent = 80;
  // The record's metrics that count output tokens (the backend's declaration says which:
  // OutputTokenFigures), first found wins; else the sum of requests[].output_tokens when the
  // record has requests.
  std::vector<std::string> output_token_metrics;
  // The record's metrics that count images (ImageFigures of the declaration), first found wins.
  std::vector<std::string> image_metrics;
};

// Returns the energy in joules of power samples (at, watts) over window, by the trapezoid
// rule with linear interpolation at the window's edges. nullopt when fewer than two samples,
// when they do not cover the whole window (the first after its start or the last before its
// end), or when the window is empty.
std::optional<double> IntegrateEnergy(const std::vector<std::pair<absl::Duration, double>>& power,
                                      RunWindow window);

// Adds to record what the readings of one run show (readings in time order; the first taken
// right before the run, the last right after it):
// - per device, a MemoryFigure MEMORY_KIND_DEVICE_USED with the peak of memory used (scope
//   "nvidia:0"), and metrics device_{memory_used_bytes,utilization_percent,power_watts,
//   temperature_celsius,sm_clock_mhz}_{mean,peak} (prefix "device<index>_" with several devices);
//   device_samples, the number of readings;
// - device_energy_joules over window (every device's power must cover it; else none at all) and
//   device_energy_joules_per_output_token when the record counts output tokens, and
//   device_energy_joules_per_image when it counts images;
// - THROTTLED when a device's throttle reasons say so, or (no reasons reported) its clock was
//   below clock_fraction of its maximum under load;
// - CONTENDED when a process not of the agent's tree used a device, naming it.
void AnnotateRun(const std::vector<DeviceReading>& readings, RunWindow window, const AnnotateOptions& options,
                 v1::RunRecord* record);

struct SamplerOptions {
  DeviceMonitor* monitor = nullptr;  // required, outlives the sampler
  Clock* clock = nullptr;            // required: paces the thread, stamps the window
  absl::Duration period = absl::Seconds(1);
  std::function<bool(int64_t pid)> is_own_process;
  double clock_fraction = 0.9;
  double load_percent = 80;
};

// What watches a timed run from outside the backend: the series runner calls BeginRun right
// before the backend's Run and EndRun right after it, on the runner's thread.
class RunWatcher {
 public:
  virtual ~RunWatcher() = default;
  // The backend's figures that count output tokens (OutputTokenFigures of its declaration), for
  // figures per token; called by the runner before its first run. Ignored by default.
  virtual void SetOutputTokenFigures(std::vector<std::string> names) {}
  // The backend's figures that count images (ImageFigures), for figures per image; ignored by default.
  virtual void SetImageFigures(std::vector<std::string> names) {}
  virtual void BeginRun() = 0;
  // Adds what was observed to record; returns the problems met, one line each (for progress).
  virtual std::vector<std::string> EndRun(v1::RunRecord* record) = 0;
};

class DeviceSampler : public RunWatcher {
 public:
  explicit DeviceSampler(SamplerOptions options);
  ~DeviceSampler();  // stops a run still being sampled
  DeviceSampler(const DeviceSampler&) = delete;
  DeviceSampler& operator=(const DeviceSampler&) = delete;

  // Keeps the names for EndRun's energy per token (AnnotateOptions::output_token_metrics).
  void SetOutputTokenFigures(std::vector<std::string> names) override;
  // Keeps the names for EndRun's energy per image (AnnotateOptions::image_metrics).
  void SetImageFigures(std::vector<std::string> names) override;
  // Reads the devices now, then every period until EndRun.
  void BeginRun() override;
  // Reads once more, stops, and annotates record (AnnotateRun) over the record's start_time and
  // end_time (mapped onto the monotonic clock), or over BeginRun..EndRun when the record has no
  // times. Returns the readings' problems and failures, one line per distinct one with
  // " (N times)" when repeated (for the operator's log).
  std::vector<std::string> EndRun(v1::RunRecord* record) override;

 private:
  void ReadOnce();
  void Loop();

  SamplerOptions options_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<DeviceReading> readings_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> problems_ ABSL_GUARDED_BY(mu_);
  absl::Time wall_at_begin_;
  absl::Duration mono_at_begin_;
  bool running_ = false;
  std::vector<std::string> output_token_metrics_;
  std::vector<std::string> image_metrics_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_DEVICE_SAMPLER_H_
