// The spread shown beside a median in the guide: the coefficient of variation (in %) and the 95%
// bootstrap confidence interval of the median (common/stats/spread.h), each a source of the
// analysis' table, so sources.csv explains them as it explains the median. Added from
// stats::kMinRunsForSpread runs on, exactly where a median is. Part of benchfleet_synthesis_analysis;
// pure functions over a SourceTable; thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_ANALYSIS_SPREAD_FIGURES_H_
#define BENCHFLEET_SYNTHESIS_ANALYSIS_SPREAD_FIGURES_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "synthesis/analysis/sources.h"

namespace benchfleet::synthesis {

// Sources (README.md, "sources.csv"):
//   cv: the sample standard deviation (n - 1) over the mean of the figures, as a fraction;
//   median_ci_low, median_ci_high: the percentile bootstrap interval of their median at
//     stats::kIntervalLevel, stats::kBootstrapResamples resamples drawn by splitmix64 from
//     stats::kBootstrapSeed, the figures taken in the order the source lists them (run order);
// each over the same figures as the median it stands beside (input_refs, or inputs with their runs).
// The bootstrap takes 2,000 resamples of every figure: above stats::kMaxFiguresForInterval figures
// the interval is left out (the quartiles and the coefficient of variation still say the spread),
// so a cell of a million runs costs the guide no more than reading them.

struct Spread {
  double level = 0;                           // 0.95
  std::optional<Figure> ci_low, ci_high;      // in the median's unit; none above the cap
  std::optional<Figure> cv;                   // "cv", a fraction; none when the mean is 0
  std::optional<Figure> cv_percent;           // formula "x1 * 100" over `cv`, unit "%"
};

// The spread of `values` (run order), each the figure of the source refs[i] (a cell's runs' "value"
// sources); nullopt below stats::kMinRunsForSpread values. Adds its sources to `table`: the
// interval's bounds, then the coefficient of variation and its percentage.
std::optional<Spread> AddSpreadOfRefs(const std::vector<double>& values, const std::vector<std::string>& refs,
                                      const std::string& unit, SourceTable* table);

// The same over figures listed with their runs (`inputs[i]` belongs to `run_ids[i]`), as a further
// headline figure's median lists them.
std::optional<Spread> AddSpreadOfInputs(const std::vector<double>& inputs, const std::vector<std::string>& run_ids,
                                        const std::vector<std::string>& provenance, const std::string& unit,
                                        SourceTable* table);

// The interval in another unit: formula `formula` (e.g. "x1 * 1000") over each bound, `factor` the
// same arithmetic; the coefficient of variation, which has no unit, is kept.
Spread ScaleSpread(const Spread& spread, const std::string& formula, double factor, const std::string& unit,
                   SourceTable* table);

// Shifts the ids of the spread's figures (SourceTable::AppendShifted).
void ShiftSpreadSourceIds(size_t shift, Spread* spread);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_ANALYSIS_SPREAD_FIGURES_H_
