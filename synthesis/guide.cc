#include "synthesis/guide.h"

#include <deque>
#include <functional>
#include <future>
#include <string_view>

#include "synthesis/analysis/table.h"
#include "synthesis/render/html.h"

namespace benchfleet::synthesis {

namespace {

// The label of a machine known by its conditions: "hostname (class)", or the hostname.
std::string LabelOfConditions(const v1::MachineConditions& c) {
  auto cls = c.labels().find("class");
  return cls == c.labels().end() ? c.hostname() : c.hostname() + " (" + cls->second + ")";
}

}  // namespace

std::string MachineLabel(const RunRow& run, const std::map<std::string, v1::MachineConditions>& conditions) {
  auto it = conditions.find(std::string(run.conditions_fingerprint));
  if (run.FindParam("machine") || it == conditions.end()) {
    std::string_view label = DefaultMachineOfRow(run);
    // An imported file that names no machine: the file stands for it.
    if (label.empty() && run.provenance_kind == v1::Provenance::KIND_FILE) label = run.provenance_file;
    return std::string(label);
  }
  return LabelOfConditions(it->second);
}

std::string MachineClass(const RunRow& run, const std::map<std::string, v1::MachineConditions>& conditions) {
  auto it = conditions.find(std::string(run.conditions_fingerprint));
  if (it != conditions.end()) {
    auto cls = it->second.labels().find("class");
    if (cls != it->second.labels().end()) return cls->second;
  }
  if (std::optional<std::string_view> cls = run.FindParam("class")) return std::string(*cls);
  return MachineLabel(run, conditions);
}

std::map<std::string, std::string> BuildGuideFiles(const GuideInput& input, const std::vector<Lang>& langs) {
  const auto& conditions = input.conditions;
  // Every run as a row: the records given whole first, then the database reader's rows.
  RunRows all;
  AddRows(input.records, &all);
  all.rows.insert(all.rows.end(), input.rows.rows.begin(), input.rows.rows.end());
  const std::vector<const RunRow*>& records = all.rows;
  // Each record's MachineLabel once, on two threads, with each known machine's label built once:
  // the guide needs the label of every record three times (cells, series, classes), and the
  // lookups and "hostname (class)" strings, millions of them, showed in the profile.
  std::map<std::string, std::string, std::less<>> label_of_conditions;
  for (const auto& [fingerprint, c] : conditions) label_of_conditions.emplace(fingerprint, LabelOfConditions(c));
  // Views: of label_of_conditions' strings, or of `computed` (one deque per thread, whose strings
  // stay put) for the records it does not know; no copy of a label per record.
  std::vector<std::string_view> labels(records.size());
  std::deque<std::string> computed[2];
  auto label = [&](size_t from, size_t to, std::deque<std::string>* own) {
    for (size_t i = from; i < to; ++i) {
      const RunRow& record = *records[i];
      if (!record.FindParam("machine")) {
        auto it = label_of_conditions.find(record.conditions_fingerprint);
        if (it != label_of_conditions.end()) {
          labels[i] = it->second;
          continue;
        }
      }
      labels[i] = own->emplace_back(MachineLabel(record, conditions));
    }
  };
  {
    auto first_half = std::async(std::launch::async, label, 0, records.size() / 2, &computed[0]);
    label(records.size() / 2, records.size(), &computed[1]);
    first_half.get();
  }
  GuideContext context;
  context.conditions = input.conditions;
  context.targets = input.targets ? *input.targets : DefaultTargets();
  // The series (section 1) and the machines' classes read every record but need none of the
  // analysis: worked out meanwhile. Until get(), only that thread touches `context`.
  std::future<std::vector<SeriesDraft>> series = std::async(std::launch::async, [&] {
    for (size_t i = 0; i < records.size(); ++i) {
      // The first record of a label gives its class (a label like the one before is known already).
      if (i > 0 && labels[i] == labels[i - 1]) continue;
      std::string machine(labels[i]);
      if (!context.class_of_machine.contains(machine)) {
        context.class_of_machine.emplace(std::move(machine), MachineClass(*records[i], conditions));
      }
    }
    return DraftSeriesLabelled(records, labels, context);
  });
  Analysis analysis = AnalyzeLabelled(records, labels);
  GuideModel model = BuildGuideModel(series.get(), context, &analysis);
  model.outputs = CompareOutputs(records, labels, &analysis.sources);
  std::vector<std::string> skipped;
  for (const auto& s : input.skipped) {
    skipped.push_back((s.line == 0 ? s.path : s.path + ":" + std::to_string(s.line)) + ": " + s.reason);
  }

  // sources.csv and each language's files are independent reads of `analysis` and `model`: built
  // on their own threads, then put in the map in a fixed order, so the output does not depend on
  // the scheduling.
  auto render_lang = [&](Lang lang) {
    std::map<std::string, std::string> files;
    std::map<std::string, std::string> charts;
    for (const auto& task : TasksOf(analysis)) {
      if (HasCallIndexSpread(analysis, task)) charts[ChartFileName(task, lang)] = RenderCallIndexChart(analysis, task, lang);
      charts[DurationChartFileName(task, lang)] = RenderDurationChart(analysis, task, lang);
      std::string memory = RenderMemoryChart(analysis, model, task, lang);
      if (!memory.empty()) charts[MemoryChartFileName(task, lang)] = std::move(memory);
      std::string classes = RenderClassChart(analysis, model, task, lang);
      if (!classes.empty()) charts[ClassChartFileName(task, lang)] = std::move(classes);
      std::string sweep = RenderSweepChart(analysis, task, lang);
      if (!sweep.empty()) charts[SweepChartFileName(task, lang)] = std::move(sweep);
    }
    std::string markdown = RenderGuideMarkdown(analysis, model, skipped, lang);
    std::string stem = "guide." + std::string(LangCode(lang));
    files[stem + ".html"] = RenderHtml(markdown, charts, lang);
    files[stem + ".md"] = std::move(markdown);
    files.merge(charts);
    return files;
  };
  // Nothing but sources.csv reads the source table now (the renders read the cells, the traps and
  // the model): its thread takes the table and frees it too, alongside the renders rather than
  // after them (millions of rows at a million runs).
  std::future<std::string> sources_csv = std::async(std::launch::async, [&analysis] {
    const SourceTable sources = std::move(analysis.sources);
    return SourcesCsv(sources);
  });
  std::vector<std::future<std::map<std::string, std::string>>> per_lang;
  for (Lang lang : langs) per_lang.push_back(std::async(std::launch::async, render_lang, lang));
  std::map<std::string, std::string> files;
  files["sources.csv"] = sources_csv.get();
  for (auto& lang_files : per_lang) files.merge(lang_files.get());
  return files;
}

}  // namespace benchfleet::synthesis
