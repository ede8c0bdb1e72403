// The sizing guide's render step (readers -> analysis -> **render**): the guide as a document tree
// (document.h, written as Markdown and as HTML) and its SVG charts, from an Analysis. Pure
// functions, no I/O, no clock: the same Analysis gives the same bytes. Every wording comes from the
// message catalogue (messages.h).
// Part of benchfleet_synthesis_render; thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_RENDER_H_
#define BENCHFLEET_SYNTHESIS_RENDER_RENDER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "synthesis/analysis/guide_model.h"
#include "synthesis/analysis/table.h"
#include "synthesis/render/document.h"

namespace benchfleet::synthesis {

enum class Lang { kFr, kEn };

// "fr" / "en".
std::string_view LangCode(Lang lang);
// Parses "fr" or "en"; nullopt otherwise.
std::optional<Lang> ParseLang(std::string_view code);

// Number rule of the guide (stable, documented in README.md): 3 significant digits, but never
// fewer than the whole integer part (no exponent, no digit grouping), trailing zeros kept:
// 52.9, 30.0, 1.23, 0.0123, 1234. Decimal separator "," in French, "." in English. Half-way
// cases are rounded as std::to_chars does (round-half-even on the exact binary value).
std::string FormatNumber(double v, Lang lang);

// A task id made safe for a file name: ASCII letters (lowered) and digits kept, every other run of
// characters one "-", none leading or trailing ("llama ?B F16 pp16" -> "llama-b-f16-pp16").
// Two tasks differing only in punctuation share a slug (not handled yet).
std::string TaskSlug(const std::string& task);
// "chart-<task-slug>.<lang>.svg"
std::string ChartFileName(const std::string& task, Lang lang);

// Whether the accepted runs of `task` span at least two call indices: the figure-per-call-index
// chart says something only then (a Workflow v6 series or a sweep whose every run is call 1 is a
// stack of points; the guide leaves that chart out).
bool HasCallIndexSpread(const Analysis& analysis, const std::string& task);

// The distinct tasks of the analysis, in cell order.
std::vector<std::string> TasksOf(const Analysis& analysis);

// The guide of one analysis: title (SIMULATED when analysis.simulated), how to read figures and
// sources, the synthesis table per task (with the figure ChartFileName(task, lang)), and the traps.
Document RenderDocument(const Analysis& analysis, Lang lang);

// The whole guide: title (SIMULATED when any record is), the newest record's start time (the only
// time printed), how to read figures, then 1. conditions, 2. synthesis table with its charts and
// memory, 3. traps, 4. verdicts, 5. thresholds, 6. cost, 7. rules, and the inputs skipped
// (`skipped`: "PATH:LINE: reason" lines). The guide writes it in Markdown (WriteMarkdown) and in
// HTML (WriteHtml).
Document RenderGuideDocument(const Analysis& analysis, const GuideModel& model,
                             const std::vector<std::string>& skipped, Lang lang);

// A self-contained SVG (viewBox 0 0 800 H; CHARTS.md): one line per setting of `task` (machine,
// backend, mode, matrix) over its accepted runs' figure per call index, named at its end; circles
// for warm, squares for cold, triangles for other phases; axes with ticks, <title>/<desc>,
// SIMULATED in the title when analysis.simulated.
std::string RenderCallIndexChart(const Analysis& analysis, const std::string& task, Lang lang);

// A self-contained SVG of the duration (wall seconds) of every run of `task`: one column per cell
// (machine / backend / mode / matrix / phase) named under the axis, each run a point (circle warm,
// square cold), accessible <title>/<desc>, SIMULATED in the title when analysis.simulated. File
// name: DurationChartFileName.
std::string RenderDurationChart(const Analysis& analysis, const std::string& task, Lang lang);
// "chart-<task-slug>-duration.<lang>.svg"
std::string DurationChartFileName(const std::string& task, Lang lang);

// A self-contained SVG of the peak memory of `task`'s cells by kind: one panel per family (device
// memory; process/container/host memory), never two families on one axis, a panel without any
// figure saying so; each bar labelled with its kind, scope and source id, grouped by machine.
// Empty string when no cell of the task has a memory figure.
std::string RenderMemoryChart(const Analysis& analysis, const std::string& task, Lang lang);
// "chart-<task-slug>-memory.<lang>.svg"
std::string MemoryChartFileName(const std::string& task, Lang lang);

// ---- Charts added for the sizing guide's comparison and sweeps (charts.cc, chart_*.cc) ----

// RenderMemoryChart with each machine grouped under its class (the series' and verdicts' classes
// of `model`), for each setting the largest figure of a kind and scope over its phases; a family
// panel without any figure says "not measured". Empty string as RenderMemoryChart.
std::string RenderMemoryChart(const Analysis& analysis, const GuideModel& model, const std::string& task, Lang lang);

// A self-contained SVG comparing machine classes on `task`'s main figure: one row per setting the
// verdicts judge (model.verdicts: warm cells, or cold cells of a setting measured cold only, marked
// so), grouped by class, every accepted run a dot (spread deterministically), the verdict's figure
// as a tick, and each target of the task expressible in the figure's unit as a dashed line named
// by its use. Empty string when the task has no judged cell. File name: ClassChartFileName.
std::string RenderClassChart(const Analysis& analysis, const GuideModel& model, const std::string& task, Lang lang);
// "chart-<task-slug>-classes.<lang>.svg"
std::string ClassChartFileName(const std::string& task, Lang lang);

// The numeric matrix axes of `task` that one setting (machine, backend, mode, rest of the matrix,
// phase) of its judged cells ran at two values or more, in matrix order (e.g. {"concurrency"}).
std::vector<std::string> SweepAxes(const Analysis& analysis, const std::string& task);
// A self-contained SVG of `task`'s sweeps (SweepAxes): per axis, the main figure of every run
// against the axis value with the line through the medians, one line per setting; and, when the
// cells carry a latency further figure (unit "s" or "ms"), the latency against the main figure.
// Empty string when the task has no sweep. File name: SweepChartFileName.
std::string RenderSweepChart(const Analysis& analysis, const std::string& task, Lang lang);
// "chart-<task-slug>-sweep.<lang>.svg"
std::string SweepChartFileName(const std::string& task, Lang lang);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_RENDER_H_
