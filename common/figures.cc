#include "common/figures.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace benchfleet {

void StampFigures(FigureDeclarations figures, v1::RunRecord* record) {
  for (v1::Metric& metric : *record->mutable_metrics()) {
    auto it = std::find_if(figures.begin(), figures.end(),
                           [&](const FigureDeclaration& f) { return f.name == metric.name(); });
    if (it == figures.end()) continue;
    metric.set_better(it->better);
    metric.set_headline(it->headline);
    metric.set_label(std::string(it->label));
    metric.set_distribution(std::string(it->distribution));
    metric.set_percentile(it->percentile);
  }
}

std::vector<FigureDeclaration> JoinFigures(FigureDeclarations backend, FigureDeclarations more) {
  std::vector<FigureDeclaration> out(backend.begin(), backend.end());
  uint32_t last = 0;
  for (const FigureDeclaration& f : backend) last = std::max(last, f.headline);
  for (FigureDeclaration f : more) {
    if (f.headline > 0) f.headline += last;
    out.push_back(f);
  }
  return out;
}

std::vector<std::string> OutputTokenFigures(FigureDeclarations figures) {
  std::vector<std::string> out;
  for (const FigureDeclaration& f : figures) {
    if (f.output_tokens) out.emplace_back(f.name);
  }
  return out;
}

std::vector<std::string> ImageFigures(FigureDeclarations figures) {
  std::vector<std::string> out;
  for (const FigureDeclaration& f : figures) {
    if (f.images) out.emplace_back(f.name);
  }
  return out;
}

std::vector<const v1::Metric*> HeadlineFigures(const v1::RunRecord& record) {
  std::vector<const v1::Metric*> out;
  for (const v1::Metric& m : record.metrics()) {
    if (m.headline() > 0) out.push_back(&m);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const v1::Metric* a, const v1::Metric* b) { return a->headline() < b->headline(); });
  return out;
}

const v1::Metric* MainFigure(const v1::RunRecord& record) {
  for (const v1::Metric& m : record.metrics()) {
    if (m.headline() == 1) return &m;
  }
  return nullptr;
}

const FigureDeclaration* MainFigure(FigureDeclarations figures) {
  for (const FigureDeclaration& f : figures) {
    if (f.headline == 1) return &f;
  }
  return nullptr;
}

std::string FigureLabel(const v1::Metric& metric) { return metric.label().empty() ? metric.name() : metric.label(); }

std::string FormatFigureNumber(double value) {
  if (value == 0 || std::fabs(value) >= 1) return absl::StrFormat("%.1f", value);
  return absl::StrFormat("%.3g", value);
}

std::string HumanFigure(double value, std::string_view unit) {
  if (unit == "s" && std::fabs(value) < 1 && value != 0) {
    const double ms = value * 1000;
    if (std::fabs(ms) >= 100) return absl::StrFormat("%.0f ms", ms);
    return absl::StrFormat("%.3g ms", ms);
  }
  if (unit == "bytes" || unit == "B") {
    constexpr double kMiB = 1024.0 * 1024.0;
    if (std::fabs(value) >= 1024 * kMiB) return absl::StrFormat("%.2f GiB", value / (1024 * kMiB));
    if (std::fabs(value) >= kMiB) return absl::StrFormat("%.1f MiB", value / kMiB);
    return absl::StrFormat("%.0f bytes", value);
  }
  if (unit.empty()) return FormatFigureNumber(value);
  return absl::StrCat(FormatFigureNumber(value), " ", std::string(unit));
}

std::string_view BetterWord(v1::Better better) {
  switch (better) {
    case v1::BETTER_HIGHER:
      return "higher";
    case v1::BETTER_LOWER:
      return "lower";
    default:
      return "";
  }
}

}  // namespace benchfleet
