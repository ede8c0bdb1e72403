// Records of a made-up sweep for the tests of the guide's charts (tests/browser, the chart unit
// tests): what the guide's fixtures lack, a numeric matrix axis swept on two machines with a
// latency among the further headline figures. Header only; thread-safe.
#ifndef BENCHFLEET_TESTS_SUPPORT_GUIDE_SWEEP_RECORDS_H_
#define BENCHFLEET_TESTS_SUPPORT_GUIDE_SWEEP_RECORDS_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::testing {

// The inputs of the golden guide (tests/golden/guide), relative to the source tree: the guide's
// series folders and the real captures. The chart and browser tests read the same ones.
inline const std::vector<std::string>& GoldenGuideInputs() {
  static const std::vector<std::string> inputs = {
      "tests/fixtures/guide/series-a100",
      "tests/fixtures/guide/series-m1pro",
      "tests/fixtures/guide/series-demo-sd15-txt2img",
      "tests/fixtures/guide/series-demo-sd15-cache-trap",
      "tests/fixtures/llama-bench/llama-bench.json",
      "tests/fixtures/comfyui/server_log.txt",
      "tests/fixtures/llama-server/startup_verbose_lv4.log",
  };
  return inputs;
}

// GoldenGuideInputs() under `source_dir` (absolute paths).
inline std::vector<std::string> GoldenGuideInputsUnder(const std::string& source_dir) {
  std::vector<std::string> out;
  for (const std::string& p : GoldenGuideInputs()) out.push_back(source_dir + "/" + p);
  return out;
}

// Task "llama-sweep-openai" (the default targets' "llama*" entry: tokens) on two machines, classes
// a100 (five warm runs per value: medians) and l4 (three: ranges), concurrency 1, 4, 8 and 16, the
// output rate as main figure, a TTFT p99 and a mean latency as further headline figures.
inline std::vector<v1::RunRecord> GuideSweepRecords() {
  std::vector<v1::RunRecord> out;
  int n = 0;
  for (const char* machine : {"sweep-a100", "sweep-l4"}) {
    const bool fast = std::string(machine) == "sweep-a100";
    for (int concurrency : {1, 4, 8, 16}) {
      for (uint32_t call = 1; call <= (fast ? 5u : 3u); ++call) {
        v1::RunRecord r;
        r.set_run_id(std::string(machine) + "-c" + std::to_string(concurrency) + "-" + std::to_string(call));
        r.set_series_id("sweep");
        r.set_task("llama-sweep-openai");
        r.set_agent_id(machine);
        r.set_backend("openai");
        r.set_mode("external");
        r.set_phase(v1::PHASE_WARM);
        r.set_call_index(call);
        r.mutable_start_time()->set_seconds(1772359200 + ++n);
        r.mutable_wall_duration()->set_seconds(2);
        r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
        r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
        (*r.mutable_params())["class"] = fast ? "a100" : "l4";
        (*r.mutable_matrix())["concurrency"] = std::to_string(concurrency);
        const double rate = (fast ? 900.0 : 300.0) * std::sqrt(concurrency) * (1 + 0.01 * call);
        const double ttft = (fast ? 0.03 : 0.09) * concurrency * (1 + 0.02 * call);
        struct M {
          const char* name;
          double value;
          const char* unit;
          v1::Better better;
          uint32_t headline;
          const char* label;
        };
        for (const M& m : {M{"output_tokens_per_second", rate, "tokens/s", v1::BETTER_HIGHER, 1, "output tokens/s"},
                           M{"ttft_p99_seconds", ttft, "s", v1::BETTER_LOWER, 2, "TTFT p99"},
                           M{"latency_mean_seconds", ttft * 2, "s", v1::BETTER_LOWER, 3, "mean latency"}}) {
          auto* metric = r.add_metrics();
          metric->set_name(m.name);
          metric->set_value(m.value);
          metric->set_unit(m.unit);
          metric->set_better(m.better);
          metric->set_headline(m.headline);
          metric->set_label(m.label);
        }
        out.push_back(r);
      }
    }
  }
  return out;
}

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_SUPPORT_GUIDE_SWEEP_RECORDS_H_
