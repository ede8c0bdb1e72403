#include "coordinator/metrics/run_labels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/figures.h"
#include "common/proto_time.h"

namespace benchfleet::coordinator {
namespace {

// Keys whose values change from run to run: a label made of them would grow without bound.
bool IsPerRunKey(const std::string& key) {
  const std::string lower = absl::AsciiStrToLower(key);
  return absl::StrContains(lower, "seed") || absl::StrContains(lower, "prompt");
}

}  // namespace

std::string VariantOf(const v1::RunRecord& record) {
  // The proto map's order is unspecified: sort by key.
  std::map<std::string, std::string> kept;
  for (const auto& [key, value] : record.matrix()) {
    if (!IsPerRunKey(key)) kept.emplace(key, value);
  }
  if (kept.empty()) return kVariantNone;
  std::string variant;
  for (const auto& [key, value] : kept) {
    if (!variant.empty()) variant += ',';
    variant += key;
    variant += '=';
    variant += value;
    if (variant.size() > kMaxVariantLength) return kVariantOther;
  }
  return variant;
}

std::string PhaseLabel(v1::Phase phase) {
  switch (phase) {
    case v1::PHASE_COLD:
      return "cold";
    case v1::PHASE_WARM:
      return "warm";
    case v1::PHASE_VALIDATION:
      return "validation";
    default:
      return "unspecified";
  }
}

namespace {

// The kind labels by enum number ("" for unspecified), computed once: RunFiguresOf runs for every
// stored record.
const std::vector<std::string>& MemoryKindLabels() {
  static const auto* labels = [] {
    auto* v = new std::vector<std::string>(v1::MemoryKind_MAX + 1);
    constexpr size_t kPrefix = sizeof("MEMORY_KIND_") - 1;  // MEMORY_KIND_DEVICE_USED -> device_used
    for (int k = v1::MemoryKind_MIN + 1; k <= v1::MemoryKind_MAX; ++k) {
      if (v1::MemoryKind_IsValid(k)) {
        (*v)[k] = absl::AsciiStrToLower(v1::MemoryKind_Name(static_cast<v1::MemoryKind>(k)).substr(kPrefix));
      }
    }
    return v;
  }();
  return *labels;
}

}  // namespace

std::string MemoryKindLabel(v1::MemoryKind kind) {
  if (kind <= v1::MEMORY_KIND_UNSPECIFIED || kind > v1::MemoryKind_MAX) return "";
  return MemoryKindLabels()[kind];
}

std::string HeadlineFigure::Key() const { return absl::StrCat(figure, "\x1f", unit, "\x1f", headline, "\x1f", better); }

RunLabels RunLabelsOf(const v1::RunRecord& record) {
  RunLabels labels;
  labels.agent = record.agent_id();
  labels.task = record.task();
  labels.backend = record.backend();
  labels.mode = record.mode();
  labels.phase = PhaseLabel(record.phase());
  labels.variant = VariantOf(record);
  labels.simulated = record.simulated() ? "true" : "false";
  return labels;
}

RunFigures RunFiguresOf(const v1::RunRecord& record) {
  RunFigures figures;
  for (const v1::Flag& flag : record.flags()) {
    if (flag.code() == "CACHE_HIT") figures.cache_hit = true;
    if (flag.code() == "THROUGHPUT_DROP") figures.throughput_drop = true;
  }
  if (record.status().code() == v1::RunStatus::CODE_FAILED) {
    figures.failed = true;
    return figures;
  }
  if (record.has_wall_duration()) {
    figures.wall_seconds = ToSeconds(record.wall_duration());
  }
  // The headline figures in their order (common/figures.h: the main figure first, then by rank).
  // A gauge holds one value per label set, so a name a record repeats keeps its first place and
  // its last value.
  std::vector<std::pair<const v1::Metric*, double>> headlines;
  for (const v1::Metric* m : HeadlineFigures(record)) {
    if (!std::isfinite(m->value())) continue;
    const auto same = std::find_if(headlines.begin(), headlines.end(),
                                   [&](const auto& h) { return h.first->name() == m->name(); });
    if (same != headlines.end()) {
      same->second = m->value();
    } else {
      headlines.emplace_back(m, m->value());
    }
  }
  for (const auto& [metric, value] : headlines) {
    HeadlineFigure h;
    h.figure = FigureLabel(*metric);
    h.unit = metric->unit();
    if (h.figure.size() > kMaxFigureLabelLength || h.unit.size() > kMaxFigureLabelLength) {
      h.figure = h.unit = h.headline = h.better = kFigureOther;
    } else {
      h.headline = absl::StrCat(metric->headline());
      const std::string_view better = BetterWord(metric->better());
      h.better = better.empty() ? "unspecified" : std::string(better);
    }
    h.value = value;
    figures.headlines.push_back(std::move(h));
  }

  // The largest figure of each kind, by enum number; then in label order.
  std::array<std::optional<double>, v1::MemoryKind_ARRAYSIZE> peaks;
  for (const v1::MemoryFigure& m : record.memory()) {
    if (m.kind() <= v1::MEMORY_KIND_UNSPECIFIED || m.kind() > v1::MemoryKind_MAX) continue;
    std::optional<double>& peak = peaks[m.kind()];
    peak = std::max(peak.value_or(0), static_cast<double>(m.bytes()));
  }
  for (int k = 0; k <= v1::MemoryKind_MAX; ++k) {
    if (peaks[k].has_value() && !MemoryKindLabels()[k].empty()) {
      figures.memory_peak_bytes.emplace_back(MemoryKindLabels()[k], *peaks[k]);
    }
  }
  std::sort(figures.memory_peak_bytes.begin(), figures.memory_peak_bytes.end());
  return figures;
}

}  // namespace benchfleet::coordinator
