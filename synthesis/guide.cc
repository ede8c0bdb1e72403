#include "synthesis/guide.h"

#include "synthesis/analysis/table.h"

namespace benchfleet::synthesis {

std::string MachineLabel(const v1::RunRecord& record,
                         const std::map<std::string, v1::MachineConditions>& conditions) {
  auto it = conditions.find(record.conditions_fingerprint());
  if (record.params().contains("machine") || it == conditions.end()) return DefaultMachineOf(record);
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
  Analysis analysis = Analyze(input.records, machine_of);
  std::map<std::string, std::string> files;
  files["sources.csv"] = SourcesCsv(analysis.sources);
  for (Lang lang : langs) {
    for (const auto& task : TasksOf(analysis)) {
      files[ChartFileName(task, lang)] = RenderCallIndexChart(analysis, task, lang);
    }
    files["guide." + std::string(LangCode(lang)) + ".md"] = RenderMarkdown(analysis, lang);
  }
  return files;
}

}  // namespace benchfleet::synthesis
