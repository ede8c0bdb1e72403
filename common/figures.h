// The vocabulary of a run's figures: each backend declares its figures once, in its own folder
// (agent/backends/<backend>/figures.h: name, unit, which way is better, which are its headline
// figures, which are percentiles of a per-request distribution), the runner stamps that
// declaration on every Metric of every record (Metric.better, headline, label, distribution,
// percentile), and everything downstream (the guide, the coordinator's gauges and the CLI; the
// dashboards and alerts through the columns and labels those fill) reads the stamp, never a
// metric's name. Adding a backend adds its declaration and nothing elsewhere.
// Part of benchfleet_common; pure functions, thread-safe.
#ifndef BENCHFLEET_COMMON_FIGURES_H_
#define BENCHFLEET_COMMON_FIGURES_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet {

// One figure as a backend declares it.
struct FigureDeclaration {
  std::string_view name;  // the Metric's name, as the backend records it
  std::string_view unit;  // the Metric's unit, e.g. "tokens/s"
  v1::Better better = v1::BETTER_UNSPECIFIED;
  // 0: not a headline figure; 1: the main figure of a run; 2, 3, ...: further headline figures.
  uint32_t headline = 0;
  // For people, on headline figures: e.g. "output tokens/s".
  std::string_view label = {};
  // On a percentile of a per-request distribution: the quantity and the percentile.
  std::string_view distribution = {};
  uint32_t percentile = 0;
  // True on the count of output tokens a run generated (what energy per token divides by); not
  // stamped on records.
  bool output_tokens = false;
  // True on the count of images a run made (what energy per image divides by); not stamped.
  bool images = false;
};

using FigureDeclarations = std::span<const FigureDeclaration>;

// Stamps the declaration of each metric of `record` that `figures` names (better, headline, label,
// distribution, percentile), replacing whatever the metric said; a metric the declaration does
// not name keeps its fields. A name declared twice takes its first declaration.
void StampFigures(FigureDeclarations figures, v1::RunRecord* record);

// The declaration of the backend's figures followed by `more` (e.g. the device sampler's energy
// figures), whose headline figures are renumbered to come after the backend's own.
std::vector<FigureDeclaration> JoinFigures(FigureDeclarations backend, FigureDeclarations more);

// The names of the figures declared as output-token counts, in declaration order.
std::vector<std::string> OutputTokenFigures(FigureDeclarations figures);

// The names of the figures declared as image counts, in declaration order.
std::vector<std::string> ImageFigures(FigureDeclarations figures);

// The headline figures of `record`, main figure first, then by rank; ties keep record order.
std::vector<const v1::Metric*> HeadlineFigures(const v1::RunRecord& record);

// The main figure of `record` (headline 1), or nullptr when it has none.
const v1::Metric* MainFigure(const v1::RunRecord& record);

// The declared main figure of a declaration, or nullptr.
const FigureDeclaration* MainFigure(FigureDeclarations figures);

// The figure's name for people: its label, else its name.
std::string FigureLabel(const v1::Metric& metric);

// A number for people: one decimal from 1 up ("52.9", "1234.5"), three significant digits below
// ("0.0532").
std::string FormatFigureNumber(double value);

// A figure for people, with its unit: one decimal from 1 up ("52.9 tokens/s"), three significant
// digits below ("0.0532 images/s"); seconds below one as milliseconds ("412 ms", "8.25 ms"), and
// bytes in MiB or GiB ("3.92 GiB").
std::string HumanFigure(double value, std::string_view unit);

// "higher" or "lower" ("" when unspecified): how the dashboards and the CLI say which way is better.
std::string_view BetterWord(v1::Better better);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_FIGURES_H_
