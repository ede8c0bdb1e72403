// The outputs of the same inputs across machines (model.outputs, synthesis/analysis/output_groups.h):
// per task, each set of inputs in one line: the one output every run gave, the runs that differ from
// the reference (OUTPUT_MISMATCH), or the groups of identical outputs where the spec expects no
// agreement across machines.
#include <string>
#include <vector>

#include "synthesis/render/inline_markdown.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/sections.h"

namespace benchfleet::synthesis {
namespace {

// At most this many mismatches are listed per set of inputs; the count says how many there are.
constexpr size_t kShownMismatches = 12;

// "gpu", "external, steps=20": the mode and the matrix point without its mode.
std::string SettingText(const OutputComparison& c) {
  std::vector<std::string> parts;
  if (!c.mode.empty()) parts.push_back(c.mode);
  size_t start = 0;
  while (start < c.matrix.size()) {
    size_t end = c.matrix.find(';', start);
    if (end == std::string::npos) end = c.matrix.size();
    std::string part = c.matrix.substr(start, end - start);
    if (!part.starts_with("mode=")) parts.push_back(part);
    start = end + 1;
  }
  return Code(parts.empty() ? c.backend : Join(parts, ", "));
}

// "`vm (a100)` ×5 [S1], `mac (m1pro)` ×5 [S2]"
std::string OnText(const OutputGroup& g) {
  std::vector<std::string> parts;
  for (const OutputGroup::On& on : g.machines) parts.push_back(Code(on.machine) + " ×" + RefCount(on.runs));
  return Join(parts, ", ");
}

std::string ShortId(const std::string& run_id) { return Code(run_id.substr(0, 8)); }

}  // namespace

void RenderOutputsSection(const GuideModel& model, Lang lang, Document& doc) {
  if (model.outputs.empty()) return;
  const Messages& m = MessagesOf(lang);
  doc.Heading(2, ParseInline(m.outputs_section));
  doc.Paragraph(ParseInline(m.outputs_intro));
  // Per task, its name in bold and one item per set of inputs.
  std::string task;
  std::vector<ListItem> items;
  for (const OutputComparison& c : model.outputs) {
    if (c.task != task) {
      doc.List(std::move(items));
      items.clear();
      task = c.task;
      doc.Paragraph({BoldSpan(ParseInline(std::string(m.task) + " " + Code(task)))});
    }
    std::vector<ListItem> runs;
    std::string line = Fill(m.outputs_inputs, {{"setting", SettingText(c)},
                                                      {"inputs", Code(c.inputs_sha256.substr(0, kGuideHashPrefix))}});
    if (c.groups.size() == 1) {
      line += Fill(m.outputs_same,
                   {{"output", Code(c.groups[0].outputs)}, {"runs", RefCount(c.runs)}, {"on", OnText(c.groups[0])}});
    } else if (!c.mismatches.empty()) {
      const OutputGroup& reference = c.groups[0];
      line += Fill(m.outputs_mismatch, {{"mismatched", RefCount(c.mismatched)},
                                        {"runs", RefCount(c.runs)},
                                        {"output", Code(reference.outputs)},
                                        {"run", ShortId(reference.first.run_id) + " [" + c.reference.source_id + "]"},
                                        {"machine", Code(reference.first.machine)},
                                        {"phase", std::string(PhaseWording(m, reference.first.phase))},
                                        {"call", Code(std::to_string(reference.first.call_index))}});
      for (size_t i = 0; i < c.mismatches.size() && i < kShownMismatches; ++i) {
        const OutputMismatch& x = c.mismatches[i];
        runs.push_back(ParseItem(Fill(m.outputs_mismatch_run, {{"machine", Code(x.run.machine)},
                                                         {"run", ShortId(x.run.run_id)},
                                                         {"ref", "[" + x.source.source_id + "]"},
                                                         {"phase", std::string(PhaseWording(m, x.run.phase))},
                                                         {"call", Code(std::to_string(x.run.call_index))},
                                                         {"found", Code(x.outputs)}})));
      }
      if (c.mismatches.size() > kShownMismatches) runs.push_back(ParseItem("…"));
    } else {
      std::vector<std::string> groups;
      for (const OutputGroup& g : c.groups) {
        groups.push_back(Fill(m.outputs_group, {{"output", Code(g.outputs)}, {"on", OnText(g)}}));
      }
      const std::string_view rule =
          c.expected == OutputDeterminism::kPerMachine ? m.outputs_per_machine : m.outputs_not_expected;
      line += Fill(m.outputs_groups, {{"distinct", RefCount(c.distinct)},
                                      {"runs", RefCount(c.runs)},
                                      {"rule", std::string(rule)},
                                      {"groups", Join(groups, lang == Lang::kFr ? " ; " : "; ")}});
    }
    items.push_back(ListItem{ParseInline(line), std::move(runs)});
  }
  doc.List(std::move(items));
}

}  // namespace benchfleet::synthesis
