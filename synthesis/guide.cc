#include "synthesis/guide.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <future>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "common/string_views.h"
#include "synthesis/analysis/table.h"
#include "synthesis/render/html.h"

namespace benchfleet::synthesis {

namespace {

// The label of a machine known by its conditions: "hostname (class)", or the hostname.
std::string LabelOfConditions(const v1::MachineConditions& c) {
  auto cls = c.labels().find("class");
  return cls == c.labels().end() ? c.hostname() : c.hostname() + " (" + cls->second + ")";
}

// The order of "Regression checks": what was found first, then what could not tell, then the rest.
int KindRank(v1::RegressionVerdict::Kind kind) {
  switch (kind) {
    case v1::RegressionVerdict::KIND_REGRESSION: return 0;
    case v1::RegressionVerdict::KIND_IMPROVEMENT: return 1;
    case v1::RegressionVerdict::KIND_NOT_SIGNIFICANT: return 2;
    case v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL: return 3;
    case v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL: return 4;
    default: return 5;
  }
}

// Makes the guide's regression checks of `verdicts`: each machine named as its run's (`labels`,
// parallel to `records`), else by its conditions, else by its agent id; each run count a "count"
// source naming the runs (their provenance from the rows read, "unknown" for a run not read).
void AddRegressionChecks(const std::vector<StoredVerdict>& verdicts, const std::vector<const RunRow*>& records,
                         const std::vector<std::string_view>& labels,
                         const std::map<std::string, v1::MachineConditions>& conditions, SourceTable* sources,
                         GuideModel* model) {
  if (verdicts.empty()) return;
  std::unordered_map<std::string, size_t> by_id;
  for (size_t i = 0; i < records.size(); ++i) by_id.emplace(absl::AsciiStrToLower(ToAbsl(records[i]->run_id)), i);
  auto provenance = [&](const google::protobuf::RepeatedPtrField<std::string>& ids) {
    std::vector<std::string> out;
    for (const std::string& id : ids) {
      auto it = by_id.find(absl::AsciiStrToLower(id));
      out.emplace_back(it == by_id.end() ? std::string_view("unknown") : records[it->second]->provenance);
    }
    return out;
  };
  std::vector<RegressionCheck> checks;
  for (const StoredVerdict& stored : verdicts) {
    RegressionCheck c;
    c.verdict = stored.verdict;
    v1::RegressionVerdict& v = c.verdict;
    if (v.kind() == v1::RegressionVerdict::KIND_UNSPECIFIED) {
      // Stored before kinds: this run's own figure against the baseline, no test.
      v.set_kind(v.regression() ? v1::RegressionVerdict::KIND_REGRESSION : v1::RegressionVerdict::KIND_NO_CHANGE);
      v.set_sample_median(v.value());
      v.set_sample_change(v.change());
      if (v.sample_run_ids().empty()) v.add_sample_run_ids(v.run_id());
    }
    c.task = stored.task;
    if (auto it = by_id.find(absl::AsciiStrToLower(v.run_id())); it != by_id.end()) {
      c.machine = std::string(labels[it->second]);
    } else if (auto known = conditions.find(stored.conditions_fingerprint); known != conditions.end()) {
      c.machine = LabelOfConditions(known->second);
    } else {
      c.machine = stored.agent_id;
    }
    std::map<std::string, std::string> matrix(v.matrix().begin(), v.matrix().end());
    for (const auto& [key, value] : matrix) c.matrix += (c.matrix.empty() ? "" : ", ") + key + "=" + value;
    checks.push_back(std::move(c));
  }
  auto key = [](const RegressionCheck& c) {
    return std::tuple<int, const std::string&, const std::string&, const std::string&, int, const std::string&>(
        KindRank(c.verdict.kind()), c.machine, c.task, c.verdict.mode(), static_cast<int>(c.verdict.phase()),
        c.matrix);
  };
  std::stable_sort(checks.begin(), checks.end(),
                   [&key](const RegressionCheck& a, const RegressionCheck& b) { return key(a) < key(b); });
  for (RegressionCheck& c : checks) {
    const v1::RegressionVerdict& v = c.verdict;
    c.sample_runs = Figure{static_cast<double>(v.sample_run_ids_size()), "runs",
                           sources->AddCount({v.sample_run_ids().begin(), v.sample_run_ids().end()},
                                             provenance(v.sample_run_ids()))};
    c.baseline_runs = Figure{static_cast<double>(v.baseline_run_ids_size()), "runs",
                             sources->AddCount({v.baseline_run_ids().begin(), v.baseline_run_ids().end()},
                                               provenance(v.baseline_run_ids()))};
  }
  // One count per kind, naming the checked runs (one verdict per run).
  for (size_t i = 0; i < checks.size();) {
    size_t j = i;
    google::protobuf::RepeatedPtrField<std::string> ids;
    for (; j < checks.size() && checks[j].verdict.kind() == checks[i].verdict.kind(); ++j) {
      ids.Add(std::string(checks[j].verdict.run_id()));
    }
    model->regression_counts.push_back(
        {checks[i].verdict.kind(),
         Figure{static_cast<double>(j - i), "runs", sources->AddCount({ids.begin(), ids.end()}, provenance(ids))}});
    i = j;
  }
  model->regression_checks = std::move(checks);
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
  AddRegressionChecks(input.verdicts, records, labels, conditions, &analysis.sources, &model);
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
    const Document guide = RenderGuideDocument(analysis, model, skipped, lang);
    std::string stem = "guide." + std::string(LangCode(lang));
    files[stem + ".html"] = WriteHtml(guide, charts, lang);
    files[stem + ".md"] = WriteMarkdown(guide);
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
