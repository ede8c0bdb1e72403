#include "synthesis/render/spread_text.h"

#include <cmath>
#include <vector>

#include "common/stats/spread.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/spans.h"

namespace benchfleet::synthesis {
namespace {

// "`95%`" (French: "`95 %`"): the interval's level, a constant of the method.
Spans LevelText(double level, Lang lang) {
  const std::string percent = std::to_string(std::lround(level * 100));
  return CodeSpans(percent + (lang == Lang::kFr ? " %" : "%"));
}

}  // namespace

Spans SpreadText(const std::optional<Spread>& spread, Lang lang) {
  if (!spread) return {};
  const Messages& m = MessagesOf(lang);
  std::vector<Spans> parts;
  if (spread->ci_low && spread->ci_high) {
    parts.push_back(FillSpans(m.spread_ci, {{"level", LevelText(spread->level, lang)},
                                            {"low", RefSpans(*spread->ci_low, lang)},
                                            {"high", RefSpans(*spread->ci_high, lang)}}));
  }
  if (spread->cv_percent) parts.push_back(FillSpans(m.spread_cv, {{"cv", RefSpans(*spread->cv_percent, lang)}}));
  if (parts.empty()) return {};
  return " (" + JoinSpans(parts, ", ") + ")";
}

Spans SpreadNote(Lang lang) {
  return FillSpans(MessagesOf(lang).spread_note,
                   {{"min_runs", CodeSpans(std::to_string(stats::kMinRunsForSpread))},
                    {"level", LevelText(stats::kIntervalLevel, lang)},
                    {"resamples", CodeSpans(std::to_string(stats::kBootstrapResamples))},
                    {"max_runs", CodeSpans(std::to_string(stats::kMaxFiguresForInterval))}});
}

}  // namespace benchfleet::synthesis
