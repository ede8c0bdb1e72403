// The guide's sections beyond the synthesis table and the traps, each appended to the guide's
// document tree (document.h; a level 2 heading first) as spans built from the model (spans.h):
// the catalogue's templates filled with values that are never parsed. Every figure is printed with
// RefSpans(); every verbatim identifier, version, date or record text holding digits in a code
// span (CodeSpans()), so the guide's number test can check that each remaining number carries its
// source. Internal to synthesis/render.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_SECTIONS_H_
#define BENCHFLEET_SYNTHESIS_RENDER_SECTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "synthesis/analysis/guide_model.h"
#include "synthesis/render/document.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// The conditions of every series (render_conditions.cc), an appendix: its heading is collapsed.
void RenderConditionsSection(const GuideModel& model, Lang lang, Document& doc);
// A size as the conditions recorded it ("80 GiB", "15,5 Gio"), for a code span: quoted, not a
// figure of the guide.
std::string ConditionsSizeText(uint64_t bytes, Lang lang);

// The answer paragraph under the title (render_decision.cc).
void RenderAnswer(const GuideModel& model, Lang lang, Document& doc);
// The decision table of every task (render_decision.cc).
void RenderDecisionSection(const Analysis& analysis, const GuideModel& model, Lang lang, Document& doc);
// What to watch: the traps in plain words (render_decision.cc).
void RenderWatchSection(const GuideModel& model, Lang lang, Document& doc);
// Regression checks: the coordinator's newest verdict of each point, one line each, when there
// are any (render_regression.cc).
void RenderRegressionSection(const GuideModel& model, Lang lang, Document& doc);
// The Workflow v6 method's tables, when there are any (render_decision.cc).
void RenderRepetitionSection(const GuideModel& model, Lang lang, Document& doc);

// The outputs of the same inputs across machines, when any set of inputs was run twice or more
// (render_outputs.cc).
void RenderOutputsSection(const GuideModel& model, Lang lang, Document& doc);

// 4. Verdicts, with the targets used and the rule for a cell's figure (render_model.cc).
void RenderVerdictsSection(const GuideModel& model, Lang lang, Document& doc);
// 5. Thresholds for moving to a dedicated GPU, the arithmetic shown (render_model.cc).
void RenderThresholdsSection(const GuideModel& model, Lang lang, Document& doc);
// 6. Cost, when the targets give prices; the arithmetic shown (render_model.cc).
void RenderCostSection(const GuideModel& model, Lang lang, Document& doc);
// 7. Rules drawn from the measurements (render_model.cc).
void RenderRulesSection(const GuideModel& model, Lang lang, Document& doc);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_SECTIONS_H_
