#include "synthesis/render/spread_text.h"

#include <cmath>
#include <vector>

#include "common/stats/spread.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"

namespace benchfleet::synthesis {
namespace {

// "`95%`" (French: "`95 %`"): the interval's level, a constant of the method.
std::string LevelText(double level, Lang lang) {
  const std::string percent = std::to_string(std::lround(level * 100));
  return Code(percent + (lang == Lang::kFr ? " %" : "%"));
}

}  // namespace

std::string SpreadText(const std::optional<Spread>& spread, Lang lang) {
  if (!spread) return "";
  const Messages& m = MessagesOf(lang);
  std::vector<std::string> parts;
  if (spread->ci_low && spread->ci_high) {
    parts.push_back(Fill(m.spread_ci, {{"level", LevelText(spread->level, lang)},
                                       {"low", Ref(*spread->ci_low, lang)},
                                       {"high", Ref(*spread->ci_high, lang)}}));
  }
  if (spread->cv_percent) parts.push_back(Fill(m.spread_cv, {{"cv", Ref(*spread->cv_percent, lang)}}));
  if (parts.empty()) return "";
  return " (" + Join(parts, ", ") + ")";
}

std::string SpreadNote(Lang lang) {
  return Fill(MessagesOf(lang).spread_note, {{"min_runs", Code(std::to_string(stats::kMinRunsForSpread))},
                                      {"level", LevelText(stats::kIntervalLevel, lang)},
                                      {"resamples", Code(std::to_string(stats::kBootstrapResamples))},
                                      {"max_runs", Code(std::to_string(stats::kMaxFiguresForInterval))}});
}

}  // namespace benchfleet::synthesis
