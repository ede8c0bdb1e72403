#include "synthesis/guide.h"

#include <future>

#include "synthesis/analysis/table.h"
#include "synthesis/render/html.h"

namespace benchfleet::synthesis {

std::string MachineLabel(const v1::RunRecord& record,
                         const std::map<std::string, v1::MachineConditions>& conditions) {
  auto it = conditions.find(record.conditions_fingerprint());
  if (record.params().contains("machine") || it == conditions.end()) {
    std::string label = DefaultMachineOf(record);
    // An imported file that names no machine: the file stands for it.
    if (label.empty() && record.provenance().kind() == v1::Provenance::KIND_FILE) label = record.provenance().file();
    return label;
  }
  const auto& c = it->second;
  auto cls = c.labels().find("class");
  return cls == c.labels().end() ? c.hostname() : c.hostname() + " (" + cls->second + ")";
}

std::string MachineClass(const v1::RunRecord& record,
                         const std::map<std::string, v1::MachineConditions>& conditions) {
  auto it = conditions.find(record.conditions_fingerprint());
  if (it != conditions.end()) {
    auto cls = it->second.labels().find("class");
    if (cls != it->second.labels().end()) return cls->second;
  }
  auto param = record.params().find("class");
  if (param != record.params().end()) return param->second;
  return MachineLabel(record, conditions);
}

std::map<std::string, std::string> BuildGuideFiles(const GuideInput& input, const std::vector<Lang>& langs) {
  const auto& conditions = input.conditions;
  auto machine_of = [&conditions](const v1::RunRecord& record) { return MachineLabel(record, conditions); };
  GuideContext context;
  context.conditions = input.conditions;
  context.targets = input.targets ? *input.targets : DefaultTargets();
  for (const auto& record : input.records) {
    context.class_of_machine.emplace(MachineLabel(record, conditions), MachineClass(record, conditions));
  }
  Analysis analysis = Analyze(input.records, machine_of);
  GuideModel model = BuildGuideModel(input.records, context, machine_of, &analysis);
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
      charts[ChartFileName(task, lang)] = RenderCallIndexChart(analysis, task, lang);
      charts[DurationChartFileName(task, lang)] = RenderDurationChart(analysis, task, lang);
      std::string memory = RenderMemoryChart(analysis, task, lang);
      if (!memory.empty()) charts[MemoryChartFileName(task, lang)] = std::move(memory);
    }
    std::string markdown = RenderGuideMarkdown(analysis, model, skipped, lang);
    std::string stem = "guide." + std::string(LangCode(lang));
    files[stem + ".html"] = RenderHtml(markdown, charts, lang);
    files[stem + ".md"] = std::move(markdown);
    files.merge(charts);
    return files;
  };
  std::future<std::string> sources_csv =
      std::async(std::launch::async, [&analysis] { return SourcesCsv(analysis.sources); });
  std::vector<std::future<std::map<std::string, std::string>>> per_lang;
  for (Lang lang : langs) per_lang.push_back(std::async(std::launch::async, render_lang, lang));
  std::map<std::string, std::string> files;
  files["sources.csv"] = sources_csv.get();
  for (auto& lang_files : per_lang) files.merge(lang_files.get());
  return files;
}

}  // namespace benchfleet::synthesis
