// The outputs of the same inputs across machines (synthesis/analysis/output_groups.h) and their
// section of the guide: simulated records with known output hashes on three machines.
#include "synthesis/analysis/output_groups.h"

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/guide.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kA = std::string("a1b2c3d4e5f6") + std::string(52, 'a');
const std::string kB = std::string("9f8e7d6c5b4a") + std::string(52, 'b');
const std::string kC = std::string("c0ffee000000") + std::string(52, 'c');
const std::string kInputs = std::string("0123456789ab") + std::string(52, '0');
const std::string kGraph = std::string("fedcba987654") + std::string(52, '1');

struct Spec {
  std::string id;
  std::string machine;
  uint32_t call = 1;
  std::string hash;
  std::string task = "llama-chat";
  std::string inputs = kInputs;
  std::string flag;
  bool failed = false;
  std::string deterministic;  // params.outputs_deterministic, "" for none
};

v1::RunRecord MakeRun(const Spec& s) {
  static int64_t clock = 1772359200;
  v1::RunRecord r;
  r.set_run_id(s.id);
  r.set_task(s.task);
  r.set_agent_id(s.machine);
  const bool image = s.task == "sd15";
  r.set_backend(image ? "comfyui" : "llama-server");
  r.set_mode(image ? "external" : "gpu");
  (*r.mutable_matrix())[image ? "steps" : "mode"] = image ? "20" : "gpu";
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(s.call);
  r.set_repetition(1);
  clock += 10;
  r.mutable_start_time()->set_seconds(clock);
  r.mutable_end_time()->set_seconds(clock + 2);
  r.mutable_wall_duration()->set_seconds(2);
  r.mutable_status()->set_code(s.failed ? v1::RunStatus::CODE_FAILED : v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  r.set_simulated(true);
  if (!s.inputs.empty()) (*r.mutable_params())["inputs_sha256"] = s.inputs;
  if (!s.deterministic.empty()) (*r.mutable_params())["outputs_deterministic"] = s.deterministic;
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(50);
  m->set_unit("tokens/s");
  m->set_headline(1);
  m->set_better(v1::BETTER_HIGHER);
  if (!s.hash.empty()) {
    v1::Output* o = r.add_outputs();
    o->set_kind(image ? "image" : "text");
    o->set_name(image ? "ComfyUI_" + s.id + "_.png" : "content");
    o->set_sha256(s.hash);
  }
  if (!s.flag.empty()) {
    v1::Flag* f = r.add_flags();
    f->set_code(s.flag);
    f->set_reason("the reason");
  }
  return r;
}

// llama-chat (deterministic: the default): a100 and m1pro agree, c5 differs on every run; a cache
// hit, a failure and an invalidated run are not compared. sd15 (per_machine): each machine its own.
std::vector<v1::RunRecord> Records() {
  std::vector<v1::RunRecord> records;
  for (uint32_t call = 1; call <= 3; ++call) {
    records.push_back(MakeRun({.id = "a100-run-" + std::to_string(call), .machine = "a100", .call = call, .hash = kA}));
  }
  records.push_back(MakeRun({.id = "a100-hit", .machine = "a100", .call = 4, .hash = kC, .flag = "CACHE_HIT"}));
  records.push_back(MakeRun({.id = "a100-failed", .machine = "a100", .call = 5, .hash = kC, .failed = true}));
  for (uint32_t call = 1; call <= 3; ++call) {
    records.push_back(
        MakeRun({.id = "m1pro-run-" + std::to_string(call), .machine = "m1pro", .call = call, .hash = kA}));
  }
  records.push_back(MakeRun({.id = "m1pro-invalid", .machine = "m1pro", .call = 4, .hash = kC, .flag = "INVALIDATED"}));
  for (uint32_t call = 1; call <= 2; ++call) {
    records.push_back(MakeRun({.id = "c5-run-" + std::to_string(call), .machine = "c5", .call = call, .hash = kB}));
  }
  // Other inputs, run once: nothing to compare. No inputs (temperature above 0): never compared.
  records.push_back(MakeRun({.id = "c5-other", .machine = "c5", .call = 3, .hash = kC, .inputs = kGraph}));
  records.push_back(MakeRun({.id = "c5-hot-1", .machine = "c5", .call = 4, .hash = kA, .inputs = ""}));
  records.push_back(MakeRun({.id = "c5-hot-2", .machine = "c5", .call = 5, .hash = kB, .inputs = ""}));
  for (uint32_t call = 1; call <= 2; ++call) {
    records.push_back(MakeRun({.id = "sd-a100-" + std::to_string(call),
                               .machine = "a100",
                               .call = call,
                               .hash = kC,
                               .task = "sd15",
                               .inputs = kGraph,
                               .deterministic = "per_machine"}));
    records.push_back(MakeRun({.id = "sd-m1pro-" + std::to_string(call),
                               .machine = "m1pro",
                               .call = call,
                               .hash = kB,
                               .task = "sd15",
                               .inputs = kGraph,
                               .deterministic = "per_machine"}));
  }
  // txt-agree: two machines, one output.
  records.push_back(MakeRun({.id = "agree-a100", .machine = "a100", .call = 1, .hash = kA, .task = "txt-agree"}));
  records.push_back(MakeRun({.id = "agree-c5", .machine = "c5", .call = 1, .hash = kA, .task = "txt-agree"}));
  return records;
}

std::vector<std::string> RunIdsOf(const SourceTable& sources, const Figure& f) {
  const Source* s = sources.Find(f.source_id);
  return s == nullptr ? std::vector<std::string>{} : s->run_ids;
}

TEST(CompareOutputsTest, ListsMismatchesAgainstTheFirstRunAndGroupsWhereMachinesMayDiffer) {
  const std::vector<v1::RunRecord> records = Records();
  RunRows rows;
  AddRows(records, &rows);
  std::vector<std::string_view> machines;
  for (const RunRow* r : rows.rows) machines.push_back(r->agent_id);
  SourceTable sources;
  const std::vector<OutputComparison> out = CompareOutputs(rows.rows, machines, &sources);
  ASSERT_EQ(out.size(), 3u);

  const OutputComparison& llama = out[0];
  EXPECT_EQ(llama.task, "llama-chat");
  EXPECT_EQ(llama.backend, "llama-server");
  EXPECT_EQ(llama.mode, "gpu");
  EXPECT_EQ(llama.matrix, "mode=gpu");
  EXPECT_EQ(llama.inputs_sha256, kInputs);
  EXPECT_EQ(llama.expected, OutputDeterminism::kEverywhere);
  EXPECT_EQ(llama.runs.value, 8);
  EXPECT_THAT(RunIdsOf(sources, llama.runs), ElementsAre("a100-run-1", "a100-run-2", "a100-run-3", "m1pro-run-1",
                                                         "m1pro-run-2", "m1pro-run-3", "c5-run-1", "c5-run-2"));
  ASSERT_EQ(llama.groups.size(), 2u);
  EXPECT_EQ(llama.groups[0].outputs, "a1b2c3d4e5f6");
  EXPECT_EQ(llama.groups[0].first.run_id, "a100-run-1");
  ASSERT_EQ(llama.groups[0].machines.size(), 2u);
  EXPECT_EQ(llama.groups[0].machines[0].machine, "a100");
  EXPECT_THAT(RunIdsOf(sources, llama.groups[0].machines[0].runs),
              ElementsAre("a100-run-1", "a100-run-2", "a100-run-3"));
  EXPECT_EQ(llama.groups[0].machines[1].machine, "m1pro");
  EXPECT_EQ(llama.groups[1].outputs, "9f8e7d6c5b4a");
  EXPECT_THAT(RunIdsOf(sources, llama.distinct), ElementsAre("a100-run-1", "c5-run-1"));
  ASSERT_EQ(llama.mismatches.size(), 2u);
  EXPECT_EQ(llama.mismatches[0].run.run_id, "c5-run-1");
  EXPECT_EQ(llama.mismatches[0].run.machine, "c5");
  EXPECT_EQ(llama.mismatches[0].run.call_index, 1u);
  EXPECT_EQ(llama.mismatches[0].outputs, "9f8e7d6c5b4a");
  EXPECT_THAT(RunIdsOf(sources, llama.mismatches[0].source), ElementsAre("c5-run-1"));
  EXPECT_THAT(RunIdsOf(sources, llama.mismatches[1].source), ElementsAre("c5-run-2"));
  EXPECT_THAT(RunIdsOf(sources, llama.mismatched), ElementsAre("c5-run-1", "c5-run-2"));
  EXPECT_THAT(RunIdsOf(sources, llama.reference), ElementsAre("a100-run-1"));

  const OutputComparison& sd = out[1];
  EXPECT_EQ(sd.task, "sd15");
  EXPECT_EQ(sd.matrix, "steps=20");
  EXPECT_EQ(sd.expected, OutputDeterminism::kPerMachine);
  EXPECT_EQ(sd.runs.value, 4);
  ASSERT_EQ(sd.groups.size(), 2u);
  EXPECT_EQ(sd.groups[0].outputs, "c0ffee000000");
  EXPECT_EQ(sd.groups[1].outputs, "9f8e7d6c5b4a");
  // Machines may differ: no run is a mismatch.
  EXPECT_TRUE(sd.mismatches.empty());

  const OutputComparison& agree = out[2];
  EXPECT_EQ(agree.task, "txt-agree");
  ASSERT_EQ(agree.groups.size(), 1u);
  EXPECT_TRUE(agree.mismatches.empty());
  ASSERT_EQ(agree.groups[0].machines.size(), 2u);
  EXPECT_THAT(RunIdsOf(sources, agree.groups[0].machines[1].runs), ElementsAre("agree-c5"));
}

// Agreeing runs are reported as such; a run that says deterministic: false weakens its set.
TEST(CompareOutputsTest, TheWeakestExpectationOfASetHolds) {
  std::vector<v1::RunRecord> records = {
      MakeRun({.id = "x1", .machine = "a100", .call = 1, .hash = kA}),
      MakeRun({.id = "x2", .machine = "c5", .call = 1, .hash = kB, .deterministic = "false"}),
      MakeRun({.id = "y1", .machine = "a100", .call = 2, .hash = kA, .inputs = kGraph}),
      MakeRun({.id = "y2", .machine = "c5", .call = 2, .hash = kA, .inputs = kGraph}),
  };
  RunRows rows;
  AddRows(records, &rows);
  std::vector<std::string_view> machines;
  for (const RunRow* r : rows.rows) machines.push_back(r->agent_id);
  SourceTable sources;
  const std::vector<OutputComparison> out = CompareOutputs(rows.rows, machines, &sources);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].inputs_sha256, kInputs);
  EXPECT_EQ(out[0].expected, OutputDeterminism::kNone);
  EXPECT_EQ(out[0].groups.size(), 2u);
  EXPECT_TRUE(out[0].mismatches.empty());
  EXPECT_EQ(out[1].inputs_sha256, kGraph);
  EXPECT_EQ(out[1].expected, OutputDeterminism::kEverywhere);
  ASSERT_EQ(out[1].groups.size(), 1u);
  EXPECT_TRUE(out[1].mismatches.empty());
}

// The section of `md` that starts at `heading`, up to the next "## ".
std::string Section(const std::string& md, const std::string& heading) {
  size_t start = md.find("## " + heading + "\n");
  if (start == std::string::npos) return "";
  size_t end = md.find("\n## ", start + 3);
  return md.substr(start, end == std::string::npos ? std::string::npos : end + 1 - start);
}

// The run ids a source of sources.csv names (its third column).
std::vector<std::string> CsvRunIds(const std::string& csv, const std::string& id) {
  std::stringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(id + ",")) continue;
    std::vector<std::string> fields;
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    std::vector<std::string> ids;
    std::stringstream runs(fields.at(2));
    for (std::string run; std::getline(runs, run, ';');) ids.push_back(run);
    return ids;
  }
  return {};
}

// The section with every source id as "[S]": the ids depend on every other part of the guide, so
// the text is compared without them, and EachMismatchCitesTheSourceOfItsRun and
// CompareOutputsTest check what the sources name.
std::string WithoutSourceIds(const std::string& text) {
  return std::regex_replace(text, std::regex("\\[S[0-9]+\\]"), "[S]");
}

class OutputsSectionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    GuideInput input;
    input.records = Records();
    files_ = new std::map<std::string, std::string>(BuildGuideFiles(input, {Lang::kFr, Lang::kEn}));
  }
  static void TearDownTestSuite() { delete files_; }
  static std::map<std::string, std::string>* files_;
};
std::map<std::string, std::string>* OutputsSectionTest::files_ = nullptr;

TEST_F(OutputsSectionTest, ListsEachSetOfInputsInEnglish) {
  const std::string& md = files_->at("guide.en.md");
  EXPECT_THAT(md, HasSubstr("[Outputs of the same inputs](#outputs-of-the-same-inputs)"));
  EXPECT_EQ(WithoutSourceIds(Section(md, "Outputs of the same inputs")),
            "## Outputs of the same inputs\n"
            "\n"
            "Runs of one task, mode and setting given the same inputs under deterministic settings "
            "(temperature `0` and a fixed seed, or a ComfyUI graph with its seed: the record's "
            "`inputs_sha256`) should give the same outputs on every run and every machine, unless their spec "
            "says otherwise (`outputs.deterministic`). Runs kept out of the figures (cache hits, failed or "
            "invalidated runs) are not compared. A hash shows its first `12` hex digits; each run is named "
            "by its short id and its source.\n"
            "\n"
            "**Task `llama-chat`**\n"
            "\n"
            "- `gpu`, inputs `0123456789ab`: `OUTPUT_MISMATCH`: 2 [S] of 8 [S] runs differ from "
            "`a1b2c3d4e5f6`, the output of the first run with these inputs, `a100-run` [S] (`a100`, warm, "
            "call `1`):\n"
            "  - `c5`: run `c5-run-1` [S] (warm, call `1`) gave `9f8e7d6c5b4a`\n"
            "  - `c5`: run `c5-run-2` [S] (warm, call `2`) gave `9f8e7d6c5b4a`\n"
            "\n"
            "**Task `sd15`**\n"
            "\n"
            "- `external, steps=20`, inputs `fedcba987654`: 2 [S] distinct outputs over 4 [S] runs "
            "(machines may differ: `outputs.deterministic: per_machine`): `c0ffee000000` on `a100` ×2 "
            "[S]; `9f8e7d6c5b4a` on `m1pro` ×2 [S].\n"
            "\n"
            "**Task `txt-agree`**\n"
            "\n"
            "- `gpu`, inputs `0123456789ab`: the same output `a1b2c3d4e5f6` on every run: 2 [S] runs, on "
            "`a100` ×1 [S], `c5` ×1 [S].\n"
            "\n");
}

TEST_F(OutputsSectionTest, ListsEachSetOfInputsInFrench) {
  const std::string& md = files_->at("guide.fr.md");
  EXPECT_THAT(md, HasSubstr("[Sorties des mêmes entrées](#sorties-des-mêmes-entrées)"));
  EXPECT_EQ(WithoutSourceIds(Section(md, "Sorties des mêmes entrées")),
            "## Sorties des mêmes entrées\n"
            "\n"
            "Les exécutions d'une même tâche, d'un même mode et d'un même réglage qui reçoivent les mêmes "
            "entrées avec des réglages déterministes (température `0` et graine fixe, ou graphe ComfyUI avec "
            "sa graine : le `inputs_sha256` de l'enregistrement) devraient donner les mêmes sorties à chaque "
            "exécution et sur chaque machine, sauf si leur spécification en dispose autrement "
            "(`outputs.deterministic`). Les exécutions écartées des chiffres (servies par un cache, échouées "
            "ou invalidées) ne sont pas comparées. Une empreinte est abrégée à ses `12` premiers chiffres "
            "hexadécimaux ; chaque exécution est désignée par son identifiant court et sa source.\n"
            "\n"
            "**Tâche `llama-chat`**\n"
            "\n"
            "- `gpu`, entrées `0123456789ab` : `OUTPUT_MISMATCH` : 2 [S] des 8 [S] exécutions "
            "diffèrent de `a1b2c3d4e5f6`, la sortie de la première exécution de ces entrées, `a100-run` "
            "[S] (`a100`, à chaud, appel `1`) :\n"
            "  - `c5` : l'exécution `c5-run-1` [S] (à chaud, appel `1`) a donné `9f8e7d6c5b4a`\n"
            "  - `c5` : l'exécution `c5-run-2` [S] (à chaud, appel `2`) a donné `9f8e7d6c5b4a`\n"
            "\n"
            "**Tâche `sd15`**\n"
            "\n"
            "- `external, steps=20`, entrées `fedcba987654` : 2 [S] sorties distinctes sur 4 [S] "
            "exécutions (les machines peuvent différer : `outputs.deterministic: per_machine`) : "
            "`c0ffee000000` sur `a100` ×2 [S] ; `9f8e7d6c5b4a` sur `m1pro` ×2 [S].\n"
            "\n"
            "**Tâche `txt-agree`**\n"
            "\n"
            "- `gpu`, entrées `0123456789ab` : la même sortie `a1b2c3d4e5f6` à chaque exécution : 2 [S] "
            "exécutions, sur `a100` ×1 [S], `c5` ×1 [S].\n"
            "\n");
}

// Each mismatch links to its run: the source after its short id names that one run.
TEST_F(OutputsSectionTest, EachMismatchCitesTheSourceOfItsRun) {
  const std::string section = Section(files_->at("guide.en.md"), "Outputs of the same inputs");
  const std::regex line("run `([0-9a-z-]{1,8})` \\[(S[0-9]+)\\]");
  int checked = 0;
  for (auto it = std::sregex_iterator(section.begin(), section.end(), line); it != std::sregex_iterator(); ++it) {
    const std::vector<std::string> ids = CsvRunIds(files_->at("sources.csv"), (*it)[2]);
    ASSERT_EQ(ids.size(), 1u) << (*it)[0];
    EXPECT_EQ(ids[0].substr(0, 8), (*it)[1].str());
    ++checked;
  }
  EXPECT_EQ(checked, 2);
  // So does the reference run.
  std::smatch reference;
  ASSERT_TRUE(std::regex_search(section, reference, std::regex("these inputs, `([0-9a-z-]{1,8})` \\[(S[0-9]+)\\]")));
  EXPECT_THAT(CsvRunIds(files_->at("sources.csv"), reference[2]), ElementsAre("a100-run-1"));
}

// The guide's number rule holds in the section: every number outside a code span is a figure
// followed by its source.
TEST_F(OutputsSectionTest, EveryNumberCarriesItsSource) {
  for (const auto& [file, heading] : {std::pair{"guide.en.md", "Outputs of the same inputs"},
                                      std::pair{"guide.fr.md", "Sorties des mêmes entrées"}}) {
    const std::string section = Section(files_->at(file), heading);
    ASSERT_FALSE(section.empty()) << file;
    std::string rest = std::regex_replace(section, std::regex("`[^`]*`"), "");
    rest = std::regex_replace(rest, std::regex("[0-9]+ \\[S[0-9]+\\]"), "");
    rest = std::regex_replace(rest, std::regex("\\[S[0-9]+\\]"), "");
    EXPECT_EQ(rest.find_first_of("0123456789"), std::string::npos) << file << ": " << rest;
  }
}

// No set of inputs run twice: no section, and the contents do not list it.
TEST(OutputsSectionAbsentTest, NoSectionWithoutARepeatedInput) {
  GuideInput input;
  input.records.push_back(MakeRun({.id = "only", .machine = "a100", .call = 1, .hash = kA}));
  input.records.push_back(MakeRun({.id = "hot", .machine = "a100", .call = 2, .hash = kB, .inputs = ""}));
  const std::map<std::string, std::string> files = BuildGuideFiles(input, {Lang::kEn});
  EXPECT_THAT(files.at("guide.en.md"), Not(HasSubstr("Outputs of the same inputs")));
}

}  // namespace
}  // namespace benchfleet::synthesis
