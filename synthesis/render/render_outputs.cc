// The outputs of the same inputs across machines (model.outputs, synthesis/analysis/output_groups.h):
// per task, each set of inputs in one line: the one output every run gave, the runs that differ from
// the reference (OUTPUT_MISMATCH), or the groups of identical outputs where the spec expects no
// agreement across machines. Built as spans (spans.h): hashes, machines and run ids are never parsed.
#include <string>
#include <vector>

#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/sections.h"
#include "synthesis/render/spans.h"

namespace benchfleet::synthesis {
namespace {

// At most this many mismatches are listed per set of inputs; the count says how many there are.
constexpr size_t kShownMismatches = 12;

// "gpu", "external, steps=20": the mode and the matrix point without its mode.
Spans SettingText(const OutputComparison& c) {
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
  return CodeSpans(parts.empty() ? c.backend : Join(parts, ", "));
}

// "`vm (a100)` ×5 [S1], `mac (m1pro)` ×5 [S2]"
Spans OnText(const OutputGroup& g) {
  std::vector<Spans> parts;
  for (const OutputGroup::On& on : g.machines) parts.push_back(CodeSpans(on.machine) + " ×" + RefCountSpans(on.runs));
  return JoinSpans(parts, ", ");
}

Spans ShortId(const std::string& run_id) { return CodeSpans(run_id.substr(0, 8)); }

}  // namespace

void RenderOutputsSection(const GuideModel& model, Lang lang, Document& doc) {
  if (model.outputs.empty()) return;
  const Messages& m = MessagesOf(lang);
  doc.Heading(2, Wording(m.outputs_section));
  doc.Paragraph(Wording(m.outputs_intro));
  // Per task, its name in bold and one item per set of inputs.
  std::string task;
  std::vector<ListItem> items;
  for (const OutputComparison& c : model.outputs) {
    if (c.task != task) {
      doc.List(std::move(items));
      items.clear();
      task = c.task;
      doc.Paragraph({BoldSpan(Wording(m.task) + " " + CodeSpans(task))});
    }
    std::vector<ListItem> runs;
    Spans line = FillSpans(m.outputs_inputs, {{"setting", SettingText(c)},
                                              {"inputs", CodeSpans(c.inputs_sha256.substr(0, kGuideHashPrefix))}});
    if (c.groups.size() == 1) {
      line += FillSpans(m.outputs_same, {{"output", CodeSpans(c.groups[0].outputs)},
                                         {"runs", RefCountSpans(c.runs)},
                                         {"on", OnText(c.groups[0])}});
    } else if (!c.mismatches.empty()) {
      const OutputGroup& reference = c.groups[0];
      line += FillSpans(m.outputs_mismatch,
                        {{"mismatched", RefCountSpans(c.mismatched)},
                         {"runs", RefCountSpans(c.runs)},
                         {"output", CodeSpans(reference.outputs)},
                         {"run", ShortId(reference.first.run_id) + " [" + c.reference.source_id + "]"},
                         {"machine", CodeSpans(reference.first.machine)},
                         {"phase", Wording(PhaseWording(m, reference.first.phase))},
                         {"call", CodeSpans(std::to_string(reference.first.call_index))}});
      for (size_t i = 0; i < c.mismatches.size() && i < kShownMismatches; ++i) {
        const OutputMismatch& x = c.mismatches[i];
        Spans run = FillSpans(m.outputs_mismatch_run, {{"machine", CodeSpans(x.run.machine)},
                                                       {"run", ShortId(x.run.run_id)},
                                                       {"ref", TextSpans("[" + x.source.source_id + "]")},
                                                       {"phase", Wording(PhaseWording(m, x.run.phase))},
                                                       {"call", CodeSpans(std::to_string(x.run.call_index))},
                                                       {"found", CodeSpans(x.outputs)}});
        runs.push_back(ListItem{std::move(run), {}});
      }
      if (c.mismatches.size() > kShownMismatches) runs.push_back(ListItem{TextSpans("…"), {}});
    } else {
      std::vector<Spans> groups;
      for (const OutputGroup& g : c.groups) {
        groups.push_back(FillSpans(m.outputs_group, {{"output", CodeSpans(g.outputs)}, {"on", OnText(g)}}));
      }
      const std::string_view rule =
          c.expected == OutputDeterminism::kPerMachine ? m.outputs_per_machine : m.outputs_not_expected;
      line += FillSpans(m.outputs_groups, {{"distinct", RefCountSpans(c.distinct)},
                                           {"runs", RefCountSpans(c.runs)},
                                           {"rule", Wording(rule)},
                                           {"groups", JoinSpans(groups, lang == Lang::kFr ? " ; " : "; ")}});
    }
    items.push_back(ListItem{std::move(line), std::move(runs)});
  }
  doc.List(std::move(items));
}

}  // namespace benchfleet::synthesis
