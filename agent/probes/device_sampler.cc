#include "agent/probes/device_sampler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/probes/nvidia_smi.h"
#include "common/proto_time.h"
#include "common/record_metric.h"

namespace benchfleet::agent {
namespace {

struct Series {
  double sum = 0;
  double peak = 0;
  int count = 0;
  void Add(double v) {
    peak = count == 0 ? v : std::max(peak, v);
    sum += v;
    ++count;
  }
  double mean() const { return count == 0 ? 0 : sum / count; }
};

struct DeviceStats {
  Series memory, utilization, power, temperature, clock;
  std::vector<std::pair<absl::Duration, double>> power_points;
  int samples = 0;
  int throttled = 0;     // samples slowed down
  uint64_t reasons = 0;  // union of the throttle reasons seen
  bool has_reasons = false;
  std::vector<std::string> slowdowns;  // what the tool said, in order, repeats folded
  double slowest_clock = 0;  // lowest clock of a throttled sample (clock inference)
  double max_clock = 0;
};

void AddSeries(v1::RunRecord* record, const std::string& prefix, const char* what, const Series& s, const char* unit) {
  if (s.count == 0) return;
  AddMetric(record, absl::StrCat(prefix, what, "_mean"), s.mean(), unit);
  AddMetric(record, absl::StrCat(prefix, what, "_peak"), s.peak, unit);
}

std::optional<double> OutputTokens(const v1::RunRecord& record, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    for (const v1::Metric& metric : record.metrics()) {
      if (metric.name() == name) return metric.value();
    }
  }
  if (record.requests_size() == 0) return std::nullopt;
  double tokens = 0;
  for (const v1::RequestTiming& request : record.requests()) tokens += request.output_tokens();
  return tokens;
}

std::optional<double> Images(const v1::RunRecord& record, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    for (const v1::Metric& metric : record.metrics()) {
      if (metric.name() == name) return metric.value();
    }
  }
  return std::nullopt;
}

std::string Mib(uint64_t bytes) { return absl::StrFormat("%.0f MiB", bytes / (1024.0 * 1024.0)); }

}  // namespace

std::optional<double> IntegrateEnergy(const std::vector<std::pair<absl::Duration, double>>& power,
                                      RunWindow window) {
  if (power.size() < 2 || window.end <= window.start) return std::nullopt;
  if (power.front().first > window.start || power.back().first < window.end) return std::nullopt;
  auto at = [](const std::pair<absl::Duration, double>& a, const std::pair<absl::Duration, double>& b,
               absl::Duration t) {
    const double span = absl::ToDoubleSeconds(b.first - a.first);
    if (span <= 0) return b.second;
    return a.second + (b.second - a.second) * absl::ToDoubleSeconds(t - a.first) / span;
  };
  double joules = 0;
  for (size_t i = 1; i < power.size(); ++i) {
    const auto& a = power[i - 1];
    const auto& b = power[i];
    const absl::Duration lo = std::max(a.first, window.start);
    const absl::Duration hi = std::min(b.first, window.end);
    if (hi <= lo) continue;
    joules += absl::ToDoubleSeconds(hi - lo) * (at(a, b, lo) + at(a, b, hi)) / 2;
  }
  return joules;
}

void AnnotateRun(const std::vector<DeviceReading>& readings, RunWindow window, const AnnotateOptions& options,
                 v1::RunRecord* record) {
  if (readings.empty()) return;
  std::map<std::string, DeviceStats> devices;
  std::map<int64_t, const DeviceProcess*> others;
  for (const DeviceReading& reading : readings) {
    for (const DeviceSample& sample : reading.devices) {
      DeviceStats& d = devices[sample.device];
      ++d.samples;
      if (sample.memory_used_bytes) d.memory.Add(static_cast<double>(*sample.memory_used_bytes));
      if (sample.utilization_percent) d.utilization.Add(*sample.utilization_percent);
      if (sample.power_watts) {
        d.power.Add(*sample.power_watts);
        d.power_points.emplace_back(reading.at, *sample.power_watts);
      }
      if (sample.temperature_celsius) d.temperature.Add(*sample.temperature_celsius);
      if (sample.sm_clock_mhz) d.clock.Add(*sample.sm_clock_mhz);
      if (!sample.slowdown.empty()) {
        ++d.throttled;
        if (d.slowdowns.empty() || d.slowdowns.back() != sample.slowdown) d.slowdowns.push_back(sample.slowdown);
      } else if (sample.throttle_reasons) {
        d.has_reasons = true;
        if (*sample.throttle_reasons & kNvidiaThrottleMask) {
          ++d.throttled;
          d.reasons |= *sample.throttle_reasons & kNvidiaThrottleMask;
        }
      } else if (sample.sm_clock_mhz && sample.max_sm_clock_mhz && sample.utilization_percent &&
                 *sample.max_sm_clock_mhz > 0 && *sample.utilization_percent >= options.load_percent &&
                 *sample.sm_clock_mhz < options.clock_fraction * *sample.max_sm_clock_mhz) {
        d.slowest_clock = d.throttled == 0 ? *sample.sm_clock_mhz : std::min(d.slowest_clock, *sample.sm_clock_mhz);
        d.max_clock = *sample.max_sm_clock_mhz;
        ++d.throttled;
      }
    }
    for (const DeviceProcess& process : reading.processes) {
      if (options.is_own_process && options.is_own_process(process.pid)) continue;
      const DeviceProcess*& seen = others[process.pid];
      if (seen == nullptr || process.used_bytes.value_or(0) > seen->used_bytes.value_or(0)) seen = &process;
    }
  }

  const bool one = devices.size() == 1;
  bool energy_known = true;
  double energy = 0;
  std::vector<std::string> throttled;
  for (const auto& [index, d] : devices) {
    const std::string prefix = one ? "device_" : absl::StrCat("device", index, "_");
    const std::string scope = absl::StrCat(options.vendor, ":", index);
    if (d.memory.count > 0) {
      v1::MemoryFigure* figure = record->add_memory();
      figure->set_kind(v1::MEMORY_KIND_DEVICE_USED);
      figure->set_scope(scope);
      figure->set_bytes(static_cast<uint64_t>(d.memory.peak));
      figure->set_source(absl::StrCat(options.memory_source, ", peak of ", d.memory.count, " samples"));
    }
    AddSeries(record, prefix, "memory_used_bytes", d.memory, "bytes");
    AddSeries(record, prefix, "utilization_percent", d.utilization, "%");
    AddSeries(record, prefix, "power_watts", d.power, "W");
    AddSeries(record, prefix, "temperature_celsius", d.temperature, "celsius");
    AddSeries(record, prefix, "sm_clock_mhz", d.clock, "MHz");
    if (auto joules = IntegrateEnergy(d.power_points, window); joules.has_value()) {
      energy += *joules;
    } else {
      energy_known = false;
    }
    if (d.throttled > 0 && !d.slowdowns.empty()) {
      throttled.push_back(absl::StrCat(scope, " ", absl::StrJoin(d.slowdowns, ", "), " in ", d.throttled, " of ",
                                       d.samples, " samples"));
    } else if (d.throttled > 0 && d.has_reasons) {
      throttled.push_back(absl::StrCat(scope, " clocks event reasons ", NvidiaReasonNames(d.reasons), " in ",
                                       d.throttled, " of ", d.samples, " samples"));
    } else if (d.throttled > 0) {
      throttled.push_back(absl::StrFormat("%s clock down to %.0f MHz, below %.0f%% of its maximum %.0f MHz at "
                                          ">= %.0f%% utilisation, in %d of %d samples",
                                          scope, d.slowest_clock, options.clock_fraction * 100, d.max_clock,
                                          options.load_percent, d.throttled, d.samples));
    }
  }
  AddMetric(record, "device_samples", static_cast<double>(readings.size()), "samples");
  if (energy_known && !devices.empty()) {
    AddMetric(record, kEnergyMetric, energy, "J");
    if (auto tokens = OutputTokens(*record, options.output_token_metrics); tokens.has_value() && *tokens > 0) {
      AddMetric(record, kEnergyPerTokenMetric, energy / *tokens, "J/token");
    }
    if (auto images = Images(*record, options.image_metrics); images.has_value() && *images > 0) {
      AddMetric(record, kEnergyPerImageMetric, energy / *images, "J/image");
    }
  }
  if (!throttled.empty()) {
    v1::Flag* flag = record->add_flags();
    flag->set_code(kThrottledFlag);
    flag->set_reason(absl::StrJoin(throttled, "; "));
  }
  if (!others.empty()) {
    std::vector<std::string> who;
    for (const auto& [pid, process] : others) {
      who.push_back(absl::StrCat("pid ", pid, " ", process->name.empty() ? "(unnamed)" : process->name,
                                 process->used_bytes ? absl::StrCat(" (", Mib(*process->used_bytes), ")") : ""));
    }
    v1::Flag* flag = record->add_flags();
    flag->set_code(kContendedFlag);
    const std::string where = options.vendor == "cpu" ? std::string("using the CPUs")
                                                       : absl::StrCat("on the ", options.vendor, " device(s)");
    flag->set_reason(absl::StrCat("other processes ", where, " during the run: ", absl::StrJoin(who, ", ")));
  }
}

DeviceSampler::DeviceSampler(SamplerOptions options) : options_(std::move(options)) {}

DeviceSampler::~DeviceSampler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void DeviceSampler::ReadOnce() {
  auto reading = options_.monitor->Read();
  std::lock_guard<std::mutex> lock(mu_);
  if (reading.ok()) {
    for (const std::string& problem : reading->problems) problems_.push_back(problem);
    readings_.push_back(std::move(*reading));
  } else {
    problems_.emplace_back(reading.status().message());
  }
}

void DeviceSampler::Loop() {
  Clock& clock = *options_.clock;
  absl::Duration next = clock.Monotonic() + options_.period;
  // Sleeps in short slices so EndRun never waits a whole period for the thread.
  const absl::Duration slice = std::min(options_.period, absl::Milliseconds(50));
  while (!stop_) {
    const absl::Duration now = clock.Monotonic();
    if (now < next) {
      clock.SleepFor(std::min(slice, next - now));
      continue;
    }
    ReadOnce();
    next += options_.period;
    if (next < clock.Monotonic()) next = clock.Monotonic() + options_.period;  // a slow read: no burst
  }
}

void DeviceSampler::SetOutputTokenFigures(std::vector<std::string> names) { output_token_metrics_ = std::move(names); }

void DeviceSampler::SetImageFigures(std::vector<std::string> names) { image_metrics_ = std::move(names); }

void DeviceSampler::BeginRun() {
  if (running_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    readings_.clear();
    problems_.clear();
  }
  running_ = true;
  stop_ = false;
  ReadOnce();
  // After the first reading: the window starts where the readings do, so they cover it.
  wall_at_begin_ = options_.clock->Now();
  mono_at_begin_ = options_.clock->Monotonic();
  thread_ = std::thread([this] { Loop(); });
}

std::vector<std::string> DeviceSampler::EndRun(v1::RunRecord* record) {
  if (!running_) return {"the device sampler was not started for this run"};
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  running_ = false;
  const absl::Duration mono_at_end = options_.clock->Monotonic();
  ReadOnce();

  RunWindow window{mono_at_begin_, mono_at_end};
  if (record->has_start_time() && record->has_end_time()) {
    auto to_mono = [&](const google::protobuf::Timestamp& t) {
      return mono_at_begin_ + (ToTime(t) - wall_at_begin_);
    };
    // Clamped to the sampled span: the run lies inside BeginRun..EndRun by construction, so
    // this only absorbs the rounding of the wall-to-monotonic mapping.
    window = {std::clamp(to_mono(record->start_time()), mono_at_begin_, mono_at_end),
              std::clamp(to_mono(record->end_time()), mono_at_begin_, mono_at_end)};
  }
  AnnotateOptions annotate;
  annotate.memory_source = options_.monitor->memory_source();
  annotate.vendor = options_.monitor->vendor();
  annotate.is_own_process = options_.is_own_process;
  annotate.clock_fraction = options_.clock_fraction;
  annotate.load_percent = options_.load_percent;
  annotate.output_token_metrics = output_token_metrics_;
  annotate.image_metrics = image_metrics_;
  std::lock_guard<std::mutex> lock(mu_);
  AnnotateRun(readings_, window, annotate, record);
  // One line per distinct problem, in order of first sight: a tool failing at 1 Hz says so once.
  std::vector<std::string> distinct;
  std::map<std::string, int> seen;
  for (const std::string& problem : problems_) {
    if (seen[problem]++ == 0) distinct.push_back(problem);
  }
  for (std::string& line : distinct) {
    if (const int n = seen[line]; n > 1) absl::StrAppend(&line, " (", n, " times)");
  }
  return distinct;
}

}  // namespace benchfleet::agent
