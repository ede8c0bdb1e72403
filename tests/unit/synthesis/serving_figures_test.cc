// The steady state of serving runs (MSER-5, agent/runner/steady_state.h) and the energy per
// output token and per image (agent/probes/device_sampler.h) in the guide: records carrying
// those figures as the series runner stamps them (labels, units, headline ranks after the
// backend's), listed with the cell's further figures and shown in the decision table's Energy
// column, in English and French, every number with its source.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/analysis/guide_model.h"
#include "synthesis/analysis/table.h"
#include "synthesis/render/render.h"
#include "synthesis/render/sections.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::HasSubstr;

void AddMetric(v1::RunRecord* r, const std::string& name, double value, const std::string& unit, uint32_t headline,
               const std::string& label, v1::Better better) {
  v1::Metric* m = r->add_metrics();
  m->set_name(name);
  m->set_value(value);
  m->set_unit(unit);
  m->set_headline(headline);
  m->set_label(label);
  m->set_better(better);
}

v1::RunRecord Run(const std::string& id, const std::string& task, const std::string& backend, int call) {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_task(task);
  r.set_agent_id("gpu-box");
  r.set_backend(backend);
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(call);
  r.mutable_start_time()->set_seconds(1000 + call);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  return r;
}

// Five warm runs of an openai-like serving task: the main figure, the whole run's mean latency,
// energy per output token, the steady-state mean latency and the warm-up requests (ranks as the
// runner joins them: the backend's 1-5, the device sampler's 6-7, the steady state's 8-9).
std::vector<v1::RunRecord> Serving() {
  std::vector<v1::RunRecord> out;
  const double steady[] = {0.999375, 0.98, 0.97, 0.9995, 0.9999};
  const double warm_up[] = {20, 15, 20, 25, 20};
  for (int i = 0; i < 5; ++i) {
    v1::RunRecord r = Run("o" + std::to_string(i + 1), "chat-serve", "openai", i + 1);
    AddMetric(&r, "tokens_out", 90.9 + i, "tokens/s", 1, "output tokens/s", v1::BETTER_HIGHER);
    AddMetric(&r, "mean_latency", 1.2095, "s", 3, "mean latency", v1::BETTER_LOWER);
    AddMetric(&r, "energy_token", 0.5, "J/token", 6, "energy per output token", v1::BETTER_LOWER);
    AddMetric(&r, "steady_mean", steady[i], "s", 8, "steady-state mean latency", v1::BETTER_LOWER);
    AddMetric(&r, "warm_up", warm_up[i], "requests", 9, "MSER-5 warm-up requests", v1::BETTER_UNSPECIFIED);
    out.push_back(r);
  }
  return out;
}

// Five warm ComfyUI-like runs with energy per image 150, 160, 140, 155, 145 J (median 150).
std::vector<v1::RunRecord> Images() {
  std::vector<v1::RunRecord> out;
  const double joules[] = {150, 160, 140, 155, 145};
  for (int i = 0; i < 5; ++i) {
    v1::RunRecord r = Run("i" + std::to_string(i + 1), "sd-energy", "comfyui", i + 1);
    AddMetric(&r, "per_second", 0.5, "images/s", 1, "images/s", v1::BETTER_HIGHER);
    AddMetric(&r, "energy_image", joules[i], "J/image", 4, "energy per image", v1::BETTER_LOWER);
    out.push_back(r);
  }
  return out;
}

const FurtherFigure& FurtherOf(const Cell& cell, const std::string& label) {
  for (const FurtherFigure& f : cell.further) {
    if (f.label == label) return f;
  }
  ADD_FAILURE() << "no further figure " << label;
  return cell.further.front();
}

TEST(ServingFiguresTest, TheSteadyStateIsListedWithTheWholeRunsFigures) {
  const Analysis a = Analyze(Serving());
  ASSERT_EQ(a.cells.size(), 1u);
  const Cell& cell = a.cells[0];
  // Median of five runs: 0.999375 (the middle of 0.97, 0.98, 0.999375, 0.9995, 0.9999), in ms.
  const FurtherFigure& steady = FurtherOf(cell, "steady-state mean latency");
  ASSERT_TRUE(steady.median_ms.has_value());
  EXPECT_DOUBLE_EQ(steady.median->value, 0.999375);
  EXPECT_DOUBLE_EQ(steady.median_ms->value, 999.375);
  const FurtherFigure& warm_up = FurtherOf(cell, "MSER-5 warm-up requests");
  ASSERT_TRUE(warm_up.median.has_value());
  EXPECT_EQ(warm_up.median->value, 20);
  const FurtherFigure& whole = FurtherOf(cell, "mean latency");
  ASSERT_TRUE(whole.median.has_value());

  // Each median is followed by its spread (five runs: spread_text.h).
  const std::string en = WriteMarkdown(RenderDocument(a, Lang::kEn));
  EXPECT_THAT(en, HasSubstr("  - `mean latency (s)`: median 1.21 [" + whole.median->source_id + "] (`95%` CI "));
  EXPECT_THAT(en, HasSubstr("  - `steady-state mean latency (ms)`: median 999 [" + steady.median_ms->source_id +
                            "] (`95%` CI "));
  EXPECT_THAT(en, HasSubstr("  - `MSER-5 warm-up requests`: median 20.0 [" + warm_up.median->source_id +
                            "] (`95%` CI "));
  const std::string fr = WriteMarkdown(RenderDocument(a, Lang::kFr));
  EXPECT_THAT(fr, HasSubstr("  - `latence moyenne en régime établi (ms)` : médiane 999 [" +
                            steady.median_ms->source_id + "] (IC à `95 %` "));
  EXPECT_THAT(fr, HasSubstr("  - `requêtes d'échauffement (MSER-5)` : médiane 20,0 [" + warm_up.median->source_id +
                            "] (IC à `95 %` "));
}

TEST(ServingFiguresTest, EnergyPerTokenAndPerImageInTheDecisionTable) {
  std::vector<v1::RunRecord> records = Serving();
  for (const v1::RunRecord& r : Images()) records.push_back(r);
  GuideContext context;
  Analysis analysis = Analyze(records);
  GuideModel model;
  DeriveVerdicts(context, &analysis, &model);
  DeriveDecisions(&analysis, &model);
  const Cell* images = nullptr;
  for (const Cell& c : analysis.cells) {
    if (c.key.task == "sd-energy") images = &c;
  }
  ASSERT_NE(images, nullptr);
  const FurtherFigure& per_image = FurtherOf(*images, "energy per image");
  ASSERT_TRUE(per_image.median.has_value());
  EXPECT_EQ(per_image.median->value, 150);

  Document en_doc;
  RenderDecisionSection(analysis, model, Lang::kEn, en_doc);
  std::string en = WriteMarkdown(en_doc);
  EXPECT_THAT(en, HasSubstr(" | Energy |\n"));
  EXPECT_THAT(en, HasSubstr(" | median 150 [" + per_image.median->source_id + "] J/image |\n"));
  EXPECT_THAT(en, HasSubstr(" | median 0.500 ["));
  EXPECT_THAT(en, HasSubstr("] J/token |\n"));
  EXPECT_THAT(en, ::testing::Not(HasSubstr("Energy: not measured")));
  Document fr_doc;
  RenderDecisionSection(analysis, model, Lang::kFr, fr_doc);
  std::string fr = WriteMarkdown(fr_doc);
  EXPECT_THAT(fr, HasSubstr(" | Énergie |\n"));
  EXPECT_THAT(fr, HasSubstr(" | médiane 150 [" + per_image.median->source_id + "] J/image |\n"));
  EXPECT_THAT(fr, HasSubstr("] J/jeton |\n"));
}

}  // namespace
}  // namespace benchfleet::synthesis
