#include "agent/simulate/simulated_series.h"

#include <cmath>
#include <random>

#include "common/figures.h"
#include "common/hashing.h"
#include "common/proto_time.h"
#include "common/record_metric.h"
#include "common/version.h"

namespace benchfleet::agent {
namespace {

constexpr char kModel[] = "qwen2.5-3b-instruct-q4_k_m.gguf";
constexpr char kPrompt[] = "Explain in three sentences why the sky is blue.";
constexpr int kPromptTokens = 24;
constexpr int kCompletionTokens = 128;
constexpr absl::Duration kGapBetweenRuns = absl::Milliseconds(500);

struct Figures {
  double tokens_per_second;
  double time_to_first_token_seconds;
};

// The generated figures. GPU warm calls 1..4 are fixed (52.9, 52.6, 30.0, 28.2): the third warm
// call is where the simulated GPU throttles and stays throttled.
Figures FiguresFor(bool gpu, v1::Phase phase, uint32_t call_index, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> noise(-1.0, 1.0);
  auto round1 = [](double v) { return std::round(v * 10.0) / 10.0; };
  auto round3 = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  if (gpu) {
    if (phase == v1::PHASE_COLD) return {51.8, 2.412};
    static constexpr double kFirstWarm[] = {52.9, 52.6, 30.0, 28.2};
    const double tps = call_index <= 4 ? kFirstWarm[call_index - 1] : round1(28.2 + 0.4 * noise(rng));
    return {tps, round3(0.045 + 0.004 * noise(rng))};
  }
  if (phase == v1::PHASE_COLD) return {9.1, 6.815};
  return {round1(9.6 + 0.2 * noise(rng)), round3(0.62 + 0.03 * noise(rng))};
}

// The simulated backend's figures (common/figures.h), stamped on every record it makes.
constexpr FigureDeclaration kSimulatedFigures[] = {
    {.name = "tokens_per_second", .unit = "tokens/s", .better = v1::BETTER_HIGHER, .headline = 1,
     .label = "tokens/s"},
    {.name = "time_to_first_token_seconds", .unit = "s", .better = v1::BETTER_LOWER, .headline = 2,
     .label = "time to first token"},
    {.name = "prompt_tokens", .unit = "tokens"},
    {.name = "completion_tokens", .unit = "tokens", .output_tokens = true},
};

}  // namespace

std::vector<v1::RunRecord> GenerateSimulatedSeries(const SimulatedSeriesOptions& options) {
  std::mt19937_64 rng(options.seed);
  const int gpu_runs = (options.runs + 1) / 2;
  const std::string prompt_sha256 = Sha256Hex(kPrompt);
  std::vector<v1::RunRecord> records;
  std::vector<absl::Duration> durations;
  records.reserve(options.runs > 0 ? options.runs : 0);
  for (int i = 0; i < options.runs; ++i) {
    const bool gpu = i < gpu_runs;
    const int position = gpu ? i : i - gpu_runs;  // 0 is the cold call
    const v1::Phase phase = position == 0 ? v1::PHASE_COLD : v1::PHASE_WARM;
    const uint32_t call_index = position == 0 ? 1 : static_cast<uint32_t>(position);
    const Figures figures = FiguresFor(gpu, phase, call_index, rng);

    v1::RunRecord& record = records.emplace_back();
    record.set_run_id(NewUuid());
    record.set_series_id(options.series_id);
    record.set_task_id(options.task_id);
    record.set_agent_id(options.agent_id);
    record.set_conditions_fingerprint(options.conditions_fingerprint);
    record.set_backend(kSimulatedBackend);
    record.set_task(kSimulatedTask);
    record.set_mode(gpu ? "gpu" : "cpu");
    record.set_phase(phase);
    record.set_call_index(call_index);
    record.set_repetition(1);
    (*record.mutable_matrix())["mode"] = record.mode();
    auto& params = *record.mutable_params();
    params["model"] = kModel;
    params["n_predict"] = std::to_string(kCompletionTokens);
    params["n_gpu_layers"] = gpu ? "99" : "0";
    params["seed"] = "42";
    params["prompt_sha256"] = prompt_sha256;

    AddMetric(&record, "tokens_per_second", figures.tokens_per_second, "tokens/s");
    AddMetric(&record, "time_to_first_token_seconds", figures.time_to_first_token_seconds, "s");
    AddMetric(&record, "prompt_tokens", kPromptTokens, "tokens");
    AddMetric(&record, "completion_tokens", kCompletionTokens, "tokens");
    StampFigures(kSimulatedFigures, &record);
    v1::MemoryFigure* memory = record.add_memory();
    memory->set_kind(gpu ? v1::MEMORY_KIND_DEVICE_BUFFER : v1::MEMORY_KIND_HOST_BUFFER);
    memory->set_scope(gpu ? "CUDA0" : "CPU_Mapped");
    memory->set_bytes(gpu ? 1'918'312'448 : 1'930'486'784);
    memory->set_source("simulated");

    record.mutable_status()->set_code(v1::RunStatus::CODE_OK);
    record.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
    record.set_simulated(true);
    record.set_agent_version(kVersion);
    // Whole nanoseconds, so that end_time - start_time is exactly wall_duration.
    durations.push_back(absl::Nanoseconds(std::llround(
        1e9 * (figures.time_to_first_token_seconds + kCompletionTokens / figures.tokens_per_second))));
  }

  // Lay the runs out backwards from end_time.
  absl::Time end = options.end_time;
  for (int i = static_cast<int>(records.size()) - 1; i >= 0; --i) {
    const absl::Time start = end - durations[i];
    SetTimestamp(start, records[i].mutable_start_time());
    SetTimestamp(end, records[i].mutable_end_time());
    SetDuration(durations[i], records[i].mutable_wall_duration());
    end = start - kGapBetweenRuns;
  }
  return records;
}

}  // namespace benchfleet::agent
