// The spread block of `benchfleet runs` and `series show` (cli/run_spread.h), byte for byte, with
// figures computed independently in Python 3.11: statistics.median, statistics.stdev(v) /
// statistics.mean(v), and a separate Python implementation of the splitmix64 percentile bootstrap
// that common/stats/spread.h describes (seed 20261202, 2,000 resamples, 95%).
#include "cli/run_spread.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace benchfleet::cli {
namespace {

const std::string kAgent = "3f2a9c1e-0000-4000-8000-000000000000";

v1::RunRecord RunOf(const std::string& mode, v1::Phase phase, uint32_t call, double tokens_per_second) {
  v1::RunRecord r;
  r.set_run_id(mode + "-" + std::to_string(call));
  r.set_agent_id(kAgent);
  r.set_task("qwen");
  r.set_backend("llama-server");
  r.set_mode(mode);
  r.set_phase(phase);
  r.set_call_index(call);
  r.mutable_start_time()->set_seconds(1767225600 + call + (mode == "cpu" ? 100 : 0));
  (*r.mutable_matrix())["mode"] = mode;
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.set_simulated(true);
  v1::Metric* m = r.add_metrics();
  m->set_name("predicted_per_second");
  m->set_value(tokens_per_second);
  m->set_unit("tokens/s");
  m->set_headline(1);
  m->set_label("generation tokens/s");
  return r;
}

RunAgents Agents() {
  RunAgents agents;
  agents.by_agent_id[kAgent] = {"a100-01", "a100"};
  return agents;
}

// Warm gpu calls 2-11 at the ten figures of tests/unit/common/spread_test.cc, a cold call 1, four
// warm cpu calls, and runs that are not accepted (a cache hit, a failure, an invalidated run).
std::vector<v1::RunRecord> Runs() {
  const std::vector<double> ten = {41.0, 42.5, 40.2, 43.1, 41.7, 39.8, 44.0, 42.2, 40.9, 41.3};
  std::vector<v1::RunRecord> runs = {RunOf("gpu", v1::PHASE_COLD, 1, 52.9)};
  for (size_t i = 0; i < ten.size(); ++i) runs.push_back(RunOf("gpu", v1::PHASE_WARM, static_cast<uint32_t>(i + 2), ten[i]));
  for (uint32_t call = 2; call <= 5; ++call) runs.push_back(RunOf("cpu", v1::PHASE_WARM, call, 9.6));
  v1::RunRecord cached = RunOf("gpu", v1::PHASE_WARM, 12, 900);
  cached.add_flags()->set_code("CACHE_HIT");
  v1::RunRecord failed = RunOf("gpu", v1::PHASE_WARM, 13, 1);
  failed.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  v1::RunRecord invalid = RunOf("gpu", v1::PHASE_WARM, 14, 2);
  invalid.add_flags()->set_code("INVALIDATED");
  runs.push_back(cached);
  runs.push_back(failed);
  runs.push_back(invalid);
  return runs;
}

TEST(RunSpreadTest, EachSettingShowsItsRunsAndFromFiveOnItsMedianIntervalAndCv) {
  // gpu warm, Python: median 41.5, bootstrap (40.6, 42.650000000000006) -> "40.6 to 42.7",
  // CV 0.03127023411065691 -> "3.1%". cpu warm: four runs, below five: no median, no spread.
  EXPECT_EQ(FormatRunSpread(Runs(), Agents()),
            "main figure per setting over its accepted runs (median, 95% CI of the median and CV from 5 runs on):\n"
            "AGENT                     TASK  BACKEND       MODE  PHASE  MATRIX    FIGURE               N   MEDIAN  "
            "95% CI        CV    SOURCE\n"
            "a100-01 (a100, 3f2a9c1e)  qwen  llama-server  cpu   warm   mode=cpu  generation tokens/s  4   -       "
            "-             -     SIMULATED\n"
            "a100-01 (a100, 3f2a9c1e)  qwen  llama-server  gpu   cold   mode=gpu  generation tokens/s  1   -       "
            "-             -     SIMULATED\n"
            "a100-01 (a100, 3f2a9c1e)  qwen  llama-server  gpu   warm   mode=gpu  generation tokens/s  10  41.5    "
            "40.6 to 42.7  3.1%  SIMULATED\n");
}

TEST(RunSpreadTest, TheRunsAreTakenInRunOrderWhateverOrderTheyCameIn) {
  std::vector<v1::RunRecord> runs = Runs();
  std::vector<v1::RunRecord> reversed(runs.rbegin(), runs.rend());
  EXPECT_EQ(FormatRunSpread(reversed, Agents()), FormatRunSpread(runs, Agents()));
}

TEST(RunSpreadTest, FiveRunsAreEnoughAndAMeasuredSettingSaysSo) {
  // Python: median 41.7, bootstrap (40.2, 43.1), CV 0.027707961650578747 -> "2.8%".
  std::vector<v1::RunRecord> runs;
  const std::vector<double> five = {41.0, 42.5, 40.2, 43.1, 41.7};
  for (size_t i = 0; i < five.size(); ++i) {
    runs.push_back(RunOf("gpu", v1::PHASE_WARM, static_cast<uint32_t>(i + 1), five[i]));
    runs.back().set_simulated(false);
  }
  const std::string out = FormatRunSpread(runs, Agents());
  EXPECT_NE(out.find("generation tokens/s  5  41.7    40.2 to 43.1  2.8%  measured\n"), std::string::npos) << out;
}

TEST(RunSpreadTest, PastTheIntervalCapOnlyTheCvIsShown) {
  // 1,001 runs of 100 + (i % 7). Python: median 103, CV 0.019427182040047786 -> "1.9%".
  std::vector<v1::RunRecord> runs;
  for (uint32_t i = 0; i < 1001; ++i) runs.push_back(RunOf("gpu", v1::PHASE_WARM, i + 1, 100 + i % 7));
  const std::string out = FormatRunSpread(runs, Agents());
  EXPECT_NE(out.find("generation tokens/s  1001  103.0   -       1.9%  SIMULATED\n"), std::string::npos) << out;
}

TEST(RunSpreadTest, NothingWithoutAnAcceptedRunThatDeclaresItsMainFigure) {
  v1::RunRecord undeclared;
  undeclared.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  undeclared.add_metrics()->set_name("tokens_per_second");
  v1::RunRecord failed = RunOf("gpu", v1::PHASE_WARM, 1, 40);
  failed.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(FormatRunSpread({undeclared, failed}, Agents()), "");
}

}  // namespace
}  // namespace benchfleet::cli
