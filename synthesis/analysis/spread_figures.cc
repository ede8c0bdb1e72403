#include "synthesis/analysis/spread_figures.h"

#include "common/stats/spread.h"

namespace benchfleet::synthesis {
namespace {

// Adds the three sources with `add(operation)` and the percentage formula, in that order (ids are
// deterministic).
template <typename AddSource>
std::optional<Spread> MakeSpread(const std::vector<double>& values, const std::string& unit, SourceTable* table,
                                 AddSource add) {
  if (values.size() < static_cast<size_t>(stats::kMinRunsForSpread)) return std::nullopt;
  Spread spread;
  spread.level = stats::kIntervalLevel;
  if (values.size() <= stats::kMaxFiguresForInterval) {
    if (const std::optional<stats::Interval> interval = stats::BootstrapMedianInterval(values)) {
      spread.ci_low = Figure{interval->low, unit, add("median_ci_low")};
      spread.ci_high = Figure{interval->high, unit, add("median_ci_high")};
    }
  }
  if (const std::optional<double> cv = stats::CoefficientOfVariation(values)) {
    spread.cv = Figure{*cv, "", add("cv")};
    spread.cv_percent = table->AddFormula("x1 * 100", {*cv}, {spread.cv->source_id}, *cv * 100, "%");
  }
  return spread;
}

}  // namespace

std::optional<Spread> AddSpreadOfRefs(const std::vector<double>& values, const std::vector<std::string>& refs,
                                      const std::string& unit, SourceTable* table) {
  return MakeSpread(values, unit, table, [&](const char* op) { return table->AddAggregate(op, refs); });
}

std::optional<Spread> AddSpreadOfInputs(const std::vector<double>& inputs, const std::vector<std::string>& run_ids,
                                        const std::vector<std::string>& provenance, const std::string& unit,
                                        SourceTable* table) {
  return MakeSpread(inputs, unit, table,
                    [&](const char* op) { return table->Add(op, run_ids, provenance, inputs); });
}

Spread ScaleSpread(const Spread& spread, const std::string& formula, double factor, const std::string& unit,
                   SourceTable* table) {
  Spread out = spread;
  for (std::optional<Figure>* bound : {&out.ci_low, &out.ci_high}) {
    if (!bound->has_value()) continue;
    const Figure f = **bound;
    *bound = table->AddFormula(formula, {f.value}, {f.source_id}, f.value * factor, unit);
  }
  return out;
}

void ShiftSpreadSourceIds(size_t shift, Spread* spread) {
  if (spread->ci_low) ShiftSourceId(shift, &spread->ci_low->source_id);
  if (spread->ci_high) ShiftSourceId(shift, &spread->ci_high->source_id);
  if (spread->cv) ShiftSourceId(shift, &spread->cv->source_id);
  if (spread->cv_percent) ShiftSourceId(shift, &spread->cv_percent->source_id);
}

}  // namespace benchfleet::synthesis
