// Targets, verdicts, thresholds, cost and rules (guide_model.h) and their sections (sections.h).
#include "synthesis/analysis/guide_model.h"

#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/render/render.h"
#include "synthesis/render/sections.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// ------------------------------------------------------------------------------------------------
// A formula evaluator of its own (the test does not trust guide_model.cc's arithmetic): + - * / ( ),
// decimal literals and x1..xn, left to right at equal precedence, in double precision.
class Evaluator {
 public:
  Evaluator(const std::string& text, const std::vector<double>& x) : text_(text), x_(x) {}

  double Run() {
    double v = Sum();
    Skip();
    if (pos_ != text_.size()) throw std::runtime_error("trailing text in " + text_);
    return v;
  }

 private:
  void Skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  double Sum() {
    double v = Product();
    for (;;) {
      if (Eat('+')) {
        v = v + Product();
      } else if (Eat('-')) {
        v = v - Product();
      } else {
        return v;
      }
    }
  }
  double Product() {
    double v = Atom();
    for (;;) {
      if (Eat('*')) {
        v = v * Atom();
      } else if (Eat('/')) {
        v = v / Atom();
      } else {
        return v;
      }
    }
  }
  double Atom() {
    Skip();
    if (Eat('(')) {
      double v = Sum();
      if (!Eat(')')) throw std::runtime_error("missing ) in " + text_);
      return v;
    }
    if (pos_ < text_.size() && text_[pos_] == 'x') {
      size_t start = ++pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      size_t i = std::stoul(text_.substr(start, pos_ - start));
      if (i == 0 || i > x_.size()) throw std::runtime_error("no input x" + std::to_string(i) + " in " + text_);
      return x_[i - 1];
    }
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      ++pos_;
    }
    if (start == pos_) throw std::runtime_error("unexpected text in " + text_);
    return std::stod(text_.substr(start, pos_ - start));
  }

  std::string text_;
  std::vector<double> x_;
  size_t pos_ = 0;
};

double Eval(const std::string& formula, const std::vector<double>& x) { return Evaluator(formula, x).Run(); }

TEST(GuideModelEvaluatorTest, EvaluatesLeftToRightWithParentheses) {
  EXPECT_EQ(Eval("x1 * 3600 * x2", {0.5, 24}), 43200);
  EXPECT_EQ(Eval("1 / x1 / x2", {2, 4}), 0.125);
  EXPECT_EQ(Eval("(x1 + x2) * 2 - 1", {1, 2}), 5);
  EXPECT_THROW(Eval("x3", {1}), std::runtime_error);
}

// Recomputes a source from its own row: values from their inputs, derived figures by their
// operation (over their inputs, or over the figures of the sources they cite), formulas by the
// evaluator over inputs that must equal the cited sources' values.
double Recompute(const SourceTable& table, const std::string& id) {
  const Source* s = table.Find(id);
  if (s == nullptr) throw std::runtime_error("no source " + id);
  std::vector<double> sorted = s->inputs;
  // A cell's aggregate is over the figures of the value sources it cites.
  if (s->operation != "formula" && !s->input_refs.empty() && s->operation != "target") {
    if (!s->inputs.empty()) throw std::runtime_error("inputs and refs in " + id);
    for (const std::string& ref : s->input_refs) sorted.push_back(Recompute(table, ref));
  }
  std::sort(sorted.begin(), sorted.end());
  if (s->operation == "value" || s->operation == "target") return s->inputs.at(0);
  if (s->operation == "count") return static_cast<double>(s->run_ids.size());
  if (s->operation == "min") return sorted.front();
  if (s->operation == "max") return sorted.back();
  if (s->operation == "median") return Quantile(sorted, 0.5);
  if (s->operation == "formula") {
    if (s->inputs.size() != s->input_refs.size()) throw std::runtime_error("inputs/refs mismatch in " + id);
    for (size_t i = 0; i < s->inputs.size(); ++i) {
      if (Recompute(table, s->input_refs[i]) != s->inputs[i]) {
        throw std::runtime_error(id + ": input x" + std::to_string(i + 1) + " is not the value of " + s->input_refs[i]);
      }
    }
    return Eval(s->formula, s->inputs);
  }
  throw std::runtime_error("operation " + s->operation + " in " + id);
}

// The figure as the guide prints it equals its source recomputed, in both languages.
void ExpectTraceable(const SourceTable& table, const Figure& f) {
  SCOPED_TRACE(f.source_id);
  double recomputed = Recompute(table, f.source_id);
  EXPECT_EQ(FormatNumber(recomputed, Lang::kEn), FormatNumber(f.value, Lang::kEn));
  EXPECT_EQ(FormatNumber(recomputed, Lang::kFr), FormatNumber(f.value, Lang::kFr));
}

void ExpectModelTraceable(const SourceTable& table, const GuideModel& model) {
  for (const TaskVerdicts& tv : model.verdicts) {
    for (const CellVerdict& v : tv.cells) {
      for (const Figure* f : {&v.figure, &v.seconds_per_item, &v.items_per_second}) ExpectTraceable(table, *f);
      for (const UseVerdict& u : v.uses) ExpectTraceable(table, u.target);
    }
  }
  auto capacity = [&](const Capacity& c) {
    ExpectTraceable(table, c.items_per_second);
    ExpectTraceable(table, c.items_per_day);
    if (c.concurrent_users) ExpectTraceable(table, *c.concurrent_users);
  };
  for (const TaskThreshold& th : model.thresholds) {
    ExpectTraceable(table, th.hours_per_day);
    capacity(th.reference);
    for (const auto& o : th.others) {
      capacity(o.capacity);
      ExpectTraceable(table, o.ratio);
    }
  }
  for (const TaskCost& c : model.costs) {
    ExpectTraceable(table, c.price_per_hour);
    ExpectTraceable(table, c.cost_per_item);
    if (c.cost_per_million) ExpectTraceable(table, *c.cost_per_million);
  }
  for (const Rule& r : model.rules) {
    for (const auto& [name, f] : r.figures) ExpectTraceable(table, f);
  }
}

// The digits left once every "figure [Sn]" and every code span is taken out (must be none).
std::string StrayDigits(const std::string& markdown) {
  std::string text = std::regex_replace(markdown, std::regex("`[^`]*`"), "");
  text = std::regex_replace(text, std::regex("-?[0-9]+([.,][0-9]+)? \\[S[0-9]+\\]"), "");
  std::string digits;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  return digits;
}

TEST(GuideModelEvaluatorTest, StrayDigitsFindsDigitsOutsideRefsAndCodeSpans) {
  EXPECT_EQ(StrayDigits("a 3 b `4` 5.0 [S1] 6,25 [S12] x7"), "37");
}

// ------------------------------------------------------------------------------------------------
// Targets.

constexpr const char* kTargetsYaml = R"(hours_per_day: 20
tasks:
  - match: "sd*"
    item: image
    uses:
      - name: iteration
        max_seconds_per_item: 10
      - name: batch
        max_seconds_per_item: 2
  - match: "chat*"
    item: token
    uses:
      - name: interactive
        min_items_per_second: 10
        interactive: true
      - name: batch
        min_items_per_second: 50
classes:
  - name: a100
    dedicated_gpu: true
    price_per_hour: 3.6
    currency: USD
  - name: m1pro
    price_per_hour: 0.5
    currency: EUR
)";

TEST(TargetsTest, ParsesEveryFieldWithItsLine) {
  absl::StatusOr<Targets> t = ParseTargets(kTargetsYaml, "t.yaml");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->path, "t.yaml");
  EXPECT_EQ(t->hours_per_day.value, 20);
  EXPECT_EQ(t->hours_per_day.where, "t.yaml:1");
  ASSERT_EQ(t->tasks.size(), 2u);
  EXPECT_EQ(t->tasks[0].match, "sd*");
  EXPECT_EQ(t->tasks[0].item, "image");
  EXPECT_EQ(t->tasks[0].where, "t.yaml:3");
  ASSERT_EQ(t->tasks[0].uses.size(), 2u);
  EXPECT_EQ(t->tasks[0].uses[0].name, "iteration");
  ASSERT_TRUE(t->tasks[0].uses[0].max_seconds_per_item.has_value());
  EXPECT_EQ(t->tasks[0].uses[0].max_seconds_per_item->value, 10);
  EXPECT_EQ(t->tasks[0].uses[0].max_seconds_per_item->where, "t.yaml:7");
  EXPECT_FALSE(t->tasks[0].uses[0].min_items_per_second.has_value());
  EXPECT_FALSE(t->tasks[0].uses[0].interactive);
  EXPECT_EQ(t->tasks[0].uses[1].max_seconds_per_item->where, "t.yaml:9");
  EXPECT_EQ(t->tasks[1].item, "token");
  ASSERT_TRUE(t->tasks[1].uses[0].min_items_per_second.has_value());
  EXPECT_EQ(t->tasks[1].uses[0].min_items_per_second->value, 10);
  EXPECT_EQ(t->tasks[1].uses[0].min_items_per_second->where, "t.yaml:14");
  EXPECT_TRUE(t->tasks[1].uses[0].interactive);
  EXPECT_FALSE(t->tasks[1].uses[1].interactive);
  ASSERT_EQ(t->classes.size(), 2u);
  EXPECT_EQ(t->classes[0].name, "a100");
  EXPECT_TRUE(t->classes[0].dedicated_gpu);
  ASSERT_TRUE(t->classes[0].price_per_hour.has_value());
  EXPECT_EQ(t->classes[0].price_per_hour->value, 3.6);
  EXPECT_EQ(t->classes[0].price_per_hour->where, "t.yaml:21");
  EXPECT_EQ(t->classes[0].currency, "USD");
  EXPECT_FALSE(t->classes[1].dedicated_gpu);
  EXPECT_EQ(t->classes[1].currency, "EUR");

  EXPECT_EQ(TargetsFor(*t, "sd15-txt2img-512"), &t->tasks[0]);
  EXPECT_EQ(TargetsFor(*t, "chat-7b"), &t->tasks[1]);
  EXPECT_EQ(TargetsFor(*t, "embed"), nullptr);
}

TEST(TargetsTest, HoursPerDayDefaultsToTwentyFourCitingTheFile) {
  absl::StatusOr<Targets> t = ParseTargets("tasks:\n  - match: x\n    item: request\n    uses:\n"
                                           "      - name: interactive\n        max_seconds_per_item: 5\n",
                                           "u.yaml");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->hours_per_day.value, 24);
  EXPECT_EQ(t->hours_per_day.where, "u.yaml");
  EXPECT_TRUE(t->classes.empty());
}

struct BadTargets {
  std::string yaml;
  std::string message;
};

class TargetsErrorTest : public ::testing::TestWithParam<BadTargets> {};

TEST_P(TargetsErrorTest, NamesFileLineAndField) {
  absl::StatusOr<Targets> t = ParseTargets(GetParam().yaml, "bad.yaml");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(), GetParam().message);
}

constexpr const char* kUse = "tasks:\n  - match: x\n    item: image\n    uses:\n      - name: a\n";

INSTANTIATE_TEST_SUITE_P(
    Errors, TargetsErrorTest,
    ::testing::Values(
        BadTargets{"hours_per_day: 8\ncolour: blue\n", "bad.yaml:2: field colour: unknown key"},
        BadTargets{std::string(kUse) + "        max_seconds_per_item: -1\n",
                   "bad.yaml:6: field tasks[0].uses[0].max_seconds_per_item: must not be negative"},
        BadTargets{std::string(kUse) + "        min_items_per_second: fast\n",
                   "bad.yaml:6: field tasks[0].uses[0].min_items_per_second: expected a number, got \"fast\""},
        BadTargets{std::string(kUse) + "        interactive: true\n",
                   "bad.yaml:5: field tasks[0].uses[0]: set max_seconds_per_item or min_items_per_second"},
        BadTargets{std::string(kUse) + "        max_seconds_per_item: 1\n        min_items_per_second: 1\n",
                   "bad.yaml:5: field tasks[0].uses[0]: set only one of max_seconds_per_item and "
                   "min_items_per_second"},
        BadTargets{std::string(kUse) + "        max_seconds_per_item: 1\n        speed: 3\n",
                   "bad.yaml:7: field tasks[0].uses[0].speed: unknown key"},
        BadTargets{"tasks:\n  - match: x\n    item: frame\n    uses:\n      - name: a\n"
                   "        max_seconds_per_item: 1\n",
                   "bad.yaml:3: field tasks[0].item: expected image, token or request, got \"frame\""},
        BadTargets{"hours_per_day: 24\ntasks: []\n", "bad.yaml:2: field tasks: required: at least one entry"},
        BadTargets{"hours_per_day: 24\n", "bad.yaml:1: field tasks: required: at least one entry"},
        BadTargets{"", "bad.yaml:1: field tasks: required: the file is empty"},
        BadTargets{"- a\n", "bad.yaml:1: field (top level): expected a mapping"},
        BadTargets{"hours_per_day: 25\n", "bad.yaml:1: field hours_per_day: must be more than 0 and at most 24"},
        BadTargets{std::string(kUse) + "        max_seconds_per_item: 1\nclasses:\n  - name: a\n"
                                       "    price_per_hour: 2\n",
                   "bad.yaml:8: field classes[0].currency: required with price_per_hour"},
        BadTargets{"tasks: [\n", "bad.yaml:2: end of sequence flow not found"}));

TEST(TargetsTest, DefaultTargetsParseAndCoverTheDemoAndImportedTasks) {
  const Targets& t = DefaultTargets();
  EXPECT_EQ(t.path, "default-targets.yaml");
  EXPECT_EQ(t.hours_per_day.value, 24);
  EXPECT_EQ(t.hours_per_day.where, "default-targets.yaml:7");
  EXPECT_TRUE(t.classes.empty());

  const TaskTargets* sd = TargetsFor(t, "sd15-txt2img-512");
  ASSERT_NE(sd, nullptr);
  EXPECT_EQ(sd->match, "*txt2img*");
  EXPECT_EQ(sd->item, "image");
  ASSERT_EQ(sd->uses.size(), 2u);
  EXPECT_EQ(sd->uses[0].name, "iteration");
  EXPECT_EQ(sd->uses[0].max_seconds_per_item->value, 10);
  EXPECT_EQ(sd->uses[1].name, "batch");
  EXPECT_EQ(sd->uses[1].max_seconds_per_item->value, 2);
  EXPECT_EQ(TargetsFor(t, "sdxl-base")->item, "image");
  EXPECT_EQ(TargetsFor(t, "comfyui-log")->item, "image");

  for (const char* task : {"llama-qwen2.5-3b-q4km", "llama ?B F16 tg32", "qwen2.5-3b-instruct-q4_k_m.gguf"}) {
    const TaskTargets* llm = TargetsFor(t, task);
    ASSERT_NE(llm, nullptr) << task;
    EXPECT_EQ(llm->item, "token") << task;
    ASSERT_EQ(llm->uses.size(), 2u);
    EXPECT_EQ(llm->uses[0].name, "interactive");
    EXPECT_TRUE(llm->uses[0].interactive);
    EXPECT_EQ(llm->uses[0].min_items_per_second->value, 10);
    EXPECT_EQ(llm->uses[1].min_items_per_second->value, 50);
  }
  const TaskTargets* other = TargetsFor(t, "my-generic-task");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->match, "*");
  EXPECT_EQ(other->item, "request");
  EXPECT_EQ(other->uses[0].max_seconds_per_item->value, 5);
}

// ------------------------------------------------------------------------------------------------
// Records.

struct RunSpec {
  std::string id;
  std::string task;
  std::string machine;
  std::string mode;
  std::string matrix_value;  // "ctx=<value>" (empty: no matrix)
  v1::Phase phase = v1::PHASE_WARM;
  std::string metric;  // "tokens_per_second" or "" for wall time only
  double value = 0;
};

v1::RunRecord Make(const RunSpec& spec, int64_t start) {
  v1::RunRecord r;
  r.set_run_id(spec.id);
  r.set_task(spec.task);
  r.set_agent_id(spec.machine);
  r.set_backend(spec.metric.empty() ? "comfyui" : "llama-server");
  r.set_mode(spec.mode);
  r.set_phase(spec.phase);
  r.set_call_index(static_cast<uint32_t>(start));
  r.mutable_start_time()->set_seconds(1000 + start);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  if (!spec.matrix_value.empty()) (*r.mutable_matrix())["ctx"] = spec.matrix_value;
  if (spec.metric.empty()) {
    double whole = std::floor(spec.value);
    r.mutable_wall_duration()->set_seconds(static_cast<int64_t>(whole));
    r.mutable_wall_duration()->set_nanos(static_cast<int32_t>(std::llround((spec.value - whole) * 1e9)));
  } else {
    auto* m = r.add_metrics();
    m->set_name(spec.metric);
    m->set_value(spec.value);
    m->set_unit("tokens/s");
    m->set_headline(1);  // as the runner stamps its backend's declaration
    m->set_better(v1::BETTER_HIGHER);
  }
  return r;
}

constexpr const char* kTps = "tokens_per_second";

// chat: m1pro (mac-1) gpu 52.9 -> 30.0 -> 28.2 (three runs, no median) and gpu ctx=8192, cpu with a
// median of five, a cold gpu call; a100 (gpu-box) gpu median of five and a cold call.
// sd: a100 two runs (worst 1.9 s) and a cache hit; m1pro a median of five (8.41 s).
// solo: a100 only, no targets entry; a cpu setting whose every run failed.
std::vector<v1::RunRecord> Fleet() {
  std::vector<RunSpec> specs = {
      {"c1", "chat", "mac-1", "gpu", "4096", v1::PHASE_WARM, kTps, 52.9},
      {"c2", "chat", "mac-1", "gpu", "4096", v1::PHASE_WARM, kTps, 30.0},
      {"c3", "chat", "mac-1", "gpu", "4096", v1::PHASE_WARM, kTps, 28.2},
      {"c0", "chat", "mac-1", "gpu", "4096", v1::PHASE_COLD, kTps, 5.0},
      {"c9", "chat", "mac-1", "gpu", "8192", v1::PHASE_WARM, kTps, 20.0},
      {"p1", "chat", "mac-1", "cpu", "4096", v1::PHASE_WARM, kTps, 8},
      {"p2", "chat", "mac-1", "cpu", "4096", v1::PHASE_WARM, kTps, 12},
      {"p3", "chat", "mac-1", "cpu", "4096", v1::PHASE_WARM, kTps, 10},
      {"p4", "chat", "mac-1", "cpu", "4096", v1::PHASE_WARM, kTps, 9},
      {"p5", "chat", "mac-1", "cpu", "4096", v1::PHASE_WARM, kTps, 11},
      {"g0", "chat", "gpu-box", "gpu", "4096", v1::PHASE_COLD, kTps, 100},
      {"g1", "chat", "gpu-box", "gpu", "4096", v1::PHASE_WARM, kTps, 100},
      {"g2", "chat", "gpu-box", "gpu", "4096", v1::PHASE_WARM, kTps, 140},
      {"g3", "chat", "gpu-box", "gpu", "4096", v1::PHASE_WARM, kTps, 120},
      {"g4", "chat", "gpu-box", "gpu", "4096", v1::PHASE_WARM, kTps, 110},
      {"g5", "chat", "gpu-box", "gpu", "4096", v1::PHASE_WARM, kTps, 130},
      {"s1", "sd", "gpu-box", "gpu", "", v1::PHASE_WARM, "", 1.5},
      {"s2", "sd", "gpu-box", "gpu", "", v1::PHASE_WARM, "", 1.9},
      {"s3", "sd", "gpu-box", "gpu", "", v1::PHASE_WARM, "", 0.0},
      {"m1", "sd", "mac-1", "gpu", "", v1::PHASE_WARM, "", 8.0},
      {"m2", "sd", "mac-1", "gpu", "", v1::PHASE_WARM, "", 8.41},
      {"m3", "sd", "mac-1", "gpu", "", v1::PHASE_WARM, "", 9.0},
      {"m4", "sd", "mac-1", "gpu", "", v1::PHASE_WARM, "", 7.5},
      {"m5", "sd", "mac-1", "gpu", "", v1::PHASE_WARM, "", 8.5},
      {"o1", "solo", "gpu-box", "gpu", "", v1::PHASE_WARM, kTps, 40},
      {"f1", "solo", "gpu-box", "cpu", "", v1::PHASE_WARM, kTps, 0},
      {"f2", "solo", "gpu-box", "cpu", "", v1::PHASE_WARM, kTps, 0},
  };
  std::vector<v1::RunRecord> out;
  for (size_t i = 0; i < specs.size(); ++i) out.push_back(Make(specs[i], static_cast<int64_t>(i)));
  for (v1::RunRecord& r : out) {
    if (r.run_id() == "c3") {
      auto* f = r.add_flags();
      f->set_code("THROUGHPUT_DROP");
      f->set_reason("-46.7% at call 3 vs call 1");
    }
    if (r.run_id() == "s3") {
      auto* f = r.add_flags();
      f->set_code("CACHE_HIT");
      f->set_reason("identical outputs");
    }
    if (r.run_id() == "f1" || r.run_id() == "f2") {
      r.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
      r.mutable_status()->set_message("out of memory");
      r.clear_metrics();
    }
    if (r.run_id()[0] == 'g' && r.phase() == v1::PHASE_WARM) {
      auto* m = r.add_memory();
      m->set_kind(v1::MEMORY_KIND_DEVICE_BUFFER);
      m->set_scope("CUDA0");
      m->set_bytes(r.run_id() == "g2" ? 2147483648ull : 1073741824ull);
    }
  }
  return out;
}

GuideContext Context(const std::string& yaml) {
  GuideContext context;
  context.class_of_machine = {{"mac-1", "m1pro"}, {"gpu-box", "a100"}};
  absl::StatusOr<Targets> targets = ParseTargets(yaml, "t.yaml");
  EXPECT_TRUE(targets.ok()) << targets.status();
  if (targets.ok()) context.targets = *targets;
  return context;
}

// The model points into its context (targets): both live together.
struct Built {
  GuideContext context;
  Analysis analysis;
  GuideModel model;
};

std::unique_ptr<Built> Derive(GuideContext context, const std::vector<v1::RunRecord>& records) {
  auto b = std::make_unique<Built>();
  b->context = std::move(context);
  b->analysis = Analyze(records);
  DeriveVerdicts(b->context, &b->analysis, &b->model);
  DeriveDecisions(&b->analysis, &b->model);
  DeriveRules(b->context, &b->analysis, &b->model);
  return b;
}

const TaskVerdicts& VerdictsOf(const GuideModel& model, const std::string& task) {
  for (const TaskVerdicts& tv : model.verdicts) {
    if (tv.task == task) return tv;
  }
  throw std::runtime_error("no verdicts for " + task);
}

const Source& SourceOf(const Analysis& a, const Figure& f) {
  const Source* s = a.sources.Find(f.source_id);
  if (s == nullptr) throw std::runtime_error("no source " + f.source_id);
  return *s;
}

std::string En(double v) { return FormatNumber(v, Lang::kEn); }

// ------------------------------------------------------------------------------------------------
// Verdicts.

TEST(DeriveVerdictsTest, CollapseWithThreeRunsIsJudgedOnItsWorstRun) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  const TaskVerdicts& chat = VerdictsOf(b->model, "chat");
  EXPECT_EQ(chat.targets, &b->context.targets.tasks[1]);
  EXPECT_EQ(chat.item, "token");
  // By class, then key: a100 first, then m1pro cpu, gpu ctx=4096, gpu ctx=8192.
  ASSERT_EQ(chat.cells.size(), 4u);
  EXPECT_EQ(chat.cells[0].machine_class, "a100");
  EXPECT_EQ(chat.cells[1].key.mode, "cpu");
  EXPECT_EQ(chat.cells[2].key.matrix, "ctx=4096");
  EXPECT_EQ(chat.cells[3].key.matrix, "ctx=8192");

  const CellVerdict& collapse = chat.cells[2];
  EXPECT_EQ(collapse.machine_class, "m1pro");
  EXPECT_EQ(collapse.basis, "worst_run");
  EXPECT_EQ(collapse.figure.value, 28.2);
  EXPECT_EQ(SourceOf(b->analysis, collapse.figure).operation, "value");
  EXPECT_THAT(SourceOf(b->analysis, collapse.figure).run_ids, ElementsAre("c3"));
  EXPECT_EQ(SourceOf(b->analysis, collapse.seconds_per_item).formula, "1 / x1");
  EXPECT_EQ(SourceOf(b->analysis, collapse.items_per_second).formula, "x1");
  EXPECT_THAT(SourceOf(b->analysis, collapse.seconds_per_item).input_refs, ElementsAre(collapse.figure.source_id));
  EXPECT_EQ(collapse.seconds_per_item.unit, "s/token");
  EXPECT_EQ(collapse.items_per_second.unit, "tokens/s");
  EXPECT_EQ(En(collapse.seconds_per_item.value), "0.0355");
  ASSERT_EQ(collapse.uses.size(), 2u);
  EXPECT_EQ(collapse.uses[0].use, "interactive");
  EXPECT_TRUE(collapse.uses[0].ok);    // 28.2 >= 10
  EXPECT_FALSE(collapse.uses[1].ok);   // 28.2 < 50
  EXPECT_TRUE(collapse.best_of_class);

  const CellVerdict& cpu = chat.cells[1];
  EXPECT_EQ(cpu.basis, "median");
  EXPECT_EQ(cpu.figure.value, 10);
  EXPECT_EQ(SourceOf(b->analysis, cpu.figure).operation, "median");
  EXPECT_TRUE(cpu.uses[0].ok);  // exactly 10 >= 10
  EXPECT_FALSE(cpu.best_of_class);
  EXPECT_FALSE(chat.cells[3].best_of_class);

  const CellVerdict& a100 = chat.cells[0];
  EXPECT_EQ(a100.basis, "median");
  EXPECT_EQ(a100.figure.value, 120);
  EXPECT_TRUE(a100.uses[0].ok);
  EXPECT_TRUE(a100.uses[1].ok);
  EXPECT_TRUE(a100.best_of_class);

  // Each target is one source per task, shared by every cell, citing its FILE:LINE.
  for (const CellVerdict& v : chat.cells) {
    EXPECT_EQ(v.uses[0].target.source_id, a100.uses[0].target.source_id);
    EXPECT_EQ(v.uses[1].target.source_id, a100.uses[1].target.source_id);
  }
  const Source& interactive = SourceOf(b->analysis, a100.uses[0].target);
  EXPECT_EQ(interactive.operation, "target");
  EXPECT_THAT(interactive.inputs, ElementsAre(10));
  EXPECT_THAT(interactive.input_refs, ElementsAre("t.yaml:14"));
  EXPECT_THAT(SourceOf(b->analysis, a100.uses[1].target).input_refs, ElementsAre("t.yaml:17"));

  ExpectModelTraceable(b->analysis.sources, b->model);
}

TEST(DeriveVerdictsTest, WallSecondsCellsJudgedAgainstSecondsPerImage) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  const TaskVerdicts& sd = VerdictsOf(b->model, "sd");
  EXPECT_EQ(sd.item, "image");
  ASSERT_EQ(sd.cells.size(), 2u);
  const CellVerdict& a100 = sd.cells[0];
  EXPECT_EQ(a100.basis, "worst_run");  // two accepted runs; the cache hit is excluded
  EXPECT_EQ(a100.figure.value, 1.9);
  EXPECT_EQ(SourceOf(b->analysis, a100.seconds_per_item).formula, "x1");
  EXPECT_EQ(SourceOf(b->analysis, a100.items_per_second).formula, "1 / x1");
  EXPECT_TRUE(a100.uses[0].ok);
  EXPECT_TRUE(a100.uses[1].ok);  // 1.9 <= 2
  const CellVerdict& m1pro = sd.cells[1];
  EXPECT_EQ(m1pro.basis, "median");
  EXPECT_EQ(m1pro.figure.value, 8.41);
  EXPECT_EQ(m1pro.seconds_per_item.value, 8.41);
  EXPECT_TRUE(m1pro.uses[0].ok);   // 8.41 <= 10
  EXPECT_FALSE(m1pro.uses[1].ok);  // 8.41 > 2
  EXPECT_EQ(SourceOf(b->analysis, m1pro.uses[0].target).input_refs, std::vector<std::string>{"t.yaml:7"});
}

TEST(DeriveVerdictsTest, TaskWithoutTargetsEntryHasCellsButNoUses) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  const TaskVerdicts& solo = VerdictsOf(b->model, "solo");
  EXPECT_EQ(solo.targets, nullptr);
  EXPECT_EQ(solo.item, "run");
  ASSERT_EQ(solo.cells.size(), 1u);  // the failed cpu setting has no figure
  EXPECT_EQ(solo.cells[0].key.mode, "gpu");
  EXPECT_TRUE(solo.cells[0].uses.empty());
  EXPECT_TRUE(solo.cells[0].best_of_class);
}

// ------------------------------------------------------------------------------------------------
// Thresholds and cost.

TEST(DeriveVerdictsTest, ThresholdsAgainstTheDedicatedGpuWithTheArithmetic) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  ASSERT_EQ(b->model.thresholds.size(), 2u);  // chat and sd; solo has one class
  const TaskThreshold& chat = b->model.thresholds[0];
  EXPECT_EQ(chat.task, "chat");
  EXPECT_EQ(chat.item, "token");
  EXPECT_TRUE(chat.reference_is_dedicated_gpu);
  EXPECT_EQ(chat.reference.machine_class, "a100");
  EXPECT_EQ(chat.hours_per_day.value, 20);
  EXPECT_THAT(SourceOf(b->analysis, chat.hours_per_day).input_refs, ElementsAre("t.yaml:1"));
  EXPECT_EQ(chat.reference.items_per_day.value, 120.0 * 3600 * 20);
  const Source& per_day = SourceOf(b->analysis, chat.reference.items_per_day);
  EXPECT_EQ(per_day.formula, "x1 * 3600 * x2");
  EXPECT_THAT(per_day.input_refs,
              ElementsAre(chat.reference.items_per_second.source_id, chat.hours_per_day.source_id));
  EXPECT_EQ(chat.reference.items_per_day.unit, "tokens/day");
  ASSERT_TRUE(chat.per_user.has_value());
  EXPECT_EQ(chat.per_user->value, 10);
  ASSERT_TRUE(chat.reference.concurrent_users.has_value());
  EXPECT_EQ(chat.reference.concurrent_users->value, 12);
  EXPECT_EQ(SourceOf(b->analysis, *chat.reference.concurrent_users).formula, "x1 / x2");
  ASSERT_EQ(chat.others.size(), 1u);
  const auto& m1pro = chat.others[0];
  EXPECT_EQ(m1pro.capacity.machine_class, "m1pro");
  EXPECT_EQ(m1pro.capacity.key.matrix, "ctx=4096");
  EXPECT_EQ(m1pro.capacity.key.mode, "gpu");
  EXPECT_EQ(En(m1pro.capacity.items_per_day.value), "2030400");
  EXPECT_EQ(En(m1pro.capacity.concurrent_users->value), "2.82");
  EXPECT_EQ(En(m1pro.ratio.value), "4.26");
  EXPECT_THAT(SourceOf(b->analysis, m1pro.ratio).input_refs,
              ElementsAre(chat.reference.items_per_second.source_id, m1pro.capacity.items_per_second.source_id));

  const TaskThreshold& sd = b->model.thresholds[1];
  EXPECT_EQ(sd.task, "sd");
  EXPECT_FALSE(sd.per_user.has_value());
  EXPECT_FALSE(sd.reference.concurrent_users.has_value());
  EXPECT_EQ(En(sd.reference.items_per_second.value), "0.526");
  EXPECT_EQ(En(sd.reference.items_per_day.value), "37895");
  ASSERT_EQ(sd.others.size(), 1u);
  EXPECT_EQ(En(sd.others[0].capacity.items_per_day.value), "8561");
  EXPECT_EQ(En(sd.others[0].ratio.value), "4.43");
  ExpectModelTraceable(b->analysis.sources, b->model);
}

TEST(DeriveVerdictsTest, WithoutDedicatedGpuTheFastestSettingIsTheReference) {
  std::string yaml = kTargetsYaml;
  yaml = yaml.substr(0, yaml.find("classes:"));
  auto b = Derive(Context(yaml), Fleet());
  ASSERT_EQ(b->model.thresholds.size(), 2u);
  EXPECT_FALSE(b->model.thresholds[0].reference_is_dedicated_gpu);
  EXPECT_EQ(b->model.thresholds[0].reference.machine_class, "a100");
  EXPECT_TRUE(b->model.costs.empty());
  Document md_doc;
  RenderThresholdsSection(b->model, Lang::kFr, md_doc);
  std::string md = WriteMarkdown(md_doc);
  EXPECT_THAT(md, HasSubstr("Aucune classe mesurée ici n'est marquée comme GPU dédié dans les objectifs : le réglage "
                            "le plus rapide, `a100` `gpu-box / llama-server / gpu / ctx=4096`, sert de référence."));
  RenderCostSection(b->model, Lang::kFr, md_doc);
  md = WriteMarkdown(md_doc);
  EXPECT_THAT(md, HasSubstr("## Coût\n\nCoût d'une unité sur le meilleur réglage de chaque classe : le prix horaire "
                            "(objectifs) ÷ `3600` s/h × les secondes par unité.\n\nAucune classe mesurée n'a de prix "
                            "horaire dans les objectifs : pas de coût calculé.\n"));
  EXPECT_EQ(StrayDigits(md), "");
}

TEST(DeriveVerdictsTest, DedicatedGpuIsTheReferenceEvenWhenSlower) {
  std::string yaml = kTargetsYaml;
  yaml = yaml.substr(0, yaml.find("classes:")) + "classes:\n  - name: m1pro\n    dedicated_gpu: true\n";
  auto b = Derive(Context(yaml), Fleet());
  const TaskThreshold& chat = b->model.thresholds[0];
  EXPECT_TRUE(chat.reference_is_dedicated_gpu);
  EXPECT_EQ(chat.reference.machine_class, "m1pro");
  ASSERT_EQ(chat.others.size(), 1u);
  EXPECT_EQ(chat.others[0].capacity.machine_class, "a100");
  EXPECT_EQ(En(chat.others[0].ratio.value), "0.235");  // 28.2 / 120
  ExpectModelTraceable(b->analysis.sources, b->model);
  Document md_doc;
  RenderThresholdsSection(b->model, Lang::kEn, md_doc);
  std::string md = WriteMarkdown(md_doc);
  EXPECT_THAT(md, HasSubstr("Reference: `m1pro`, a dedicated GPU, setting `mac-1 / llama-server / gpu / ctx=4096`."));
  EXPECT_THAT(md, HasSubstr(" concurrent users. `m1pro` is not faster than `a100`: 28.2 [" +
                            chat.reference.items_per_second.source_id + "] ÷ 120 [" +
                            chat.others[0].capacity.items_per_second.source_id + "] = 0.235 [" +
                            chat.others[0].ratio.source_id + "].\n"));
  EXPECT_EQ(StrayDigits(md), "");
}

TEST(DeriveVerdictsTest, CostPerImageAndPerMillionTokens) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  // Best-of-class settings whose class has a price, per task: chat a100, chat m1pro, sd a100, sd m1pro,
  // solo a100 (no targets entry: one item is one run).
  ASSERT_EQ(b->model.costs.size(), 5u);
  const TaskCost& chat_a100 = b->model.costs[0];
  EXPECT_EQ(chat_a100.task, "chat");
  EXPECT_EQ(chat_a100.machine_class, "a100");
  EXPECT_EQ(chat_a100.currency, "USD");
  EXPECT_EQ(chat_a100.price_per_hour.value, 3.6);
  EXPECT_THAT(SourceOf(b->analysis, chat_a100.price_per_hour).input_refs, ElementsAre("t.yaml:21"));
  EXPECT_EQ(SourceOf(b->analysis, chat_a100.cost_per_item).formula, "x1 / 3600 * x2");
  EXPECT_EQ(En(chat_a100.cost_per_item.value), "0.00000833");
  ASSERT_TRUE(chat_a100.cost_per_million.has_value());
  EXPECT_EQ(SourceOf(b->analysis, *chat_a100.cost_per_million).formula, "x1 / 3600 * x2 * 1000000");
  EXPECT_EQ(En(chat_a100.cost_per_million->value), "8.33");
  EXPECT_EQ(chat_a100.cost_per_million->unit, "USD/million tokens");
  const TaskCost& chat_m1pro = b->model.costs[1];
  EXPECT_EQ(chat_m1pro.currency, "EUR");
  EXPECT_EQ(En(chat_m1pro.cost_per_million->value), "4.93");  // 0.5 / 3600 / 28.2 * 1e6
  const TaskCost& sd_a100 = b->model.costs[2];
  EXPECT_EQ(sd_a100.task, "sd");
  EXPECT_EQ(En(sd_a100.cost_per_item.value), "0.00190");  // 3.6 / 3600 * 1.9
  EXPECT_EQ(sd_a100.cost_per_item.unit, "USD/image");
  EXPECT_FALSE(sd_a100.cost_per_million.has_value());
  EXPECT_EQ(En(b->model.costs[3].cost_per_item.value), "0.00117");  // 0.5 / 3600 * 8.41
  const TaskCost& solo = b->model.costs[4];
  EXPECT_EQ(solo.task, "solo");
  EXPECT_EQ(solo.item, "run");
  EXPECT_EQ(solo.cost_per_item.unit, "USD/run");
  EXPECT_EQ(En(solo.cost_per_item.value), "0.0000250");  // 3.6 / 3600 / 40
  EXPECT_FALSE(solo.cost_per_million.has_value());
  ExpectModelTraceable(b->analysis.sources, b->model);
}

// ------------------------------------------------------------------------------------------------
// Rules.

std::vector<std::string> Codes(const GuideModel& model) {
  std::vector<std::string> out;
  for (const Rule& r : model.rules) out.push_back(r.code + " " + r.task);
  return out;
}

const Rule& RuleOf(const GuideModel& model, const std::string& code, const std::string& task) {
  for (const Rule& r : model.rules) {
    if (r.code == code && r.task == task) return r;
  }
  throw std::runtime_error("no rule " + code + " " + task);
}

TEST(DeriveRulesTest, EachRuleSupportedByTheDataAndNoOther) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  // Not printed: COLD_START on gpu-box (x1.2), FASTEST_CLASS solo (one class), BEST_SETTING on
  // a100 (one matrix), MEMORY_NEED for sd (no device memory), CACHE_HITS chat, THROUGHPUT_DROP sd.
  EXPECT_THAT(Codes(b->model),
              ElementsAre("GPU_OVER_CPU chat", "COLD_START chat", "CACHE_HITS sd", "THROUGHPUT_DROP chat",
                          "FASTEST_CLASS chat", "FASTEST_CLASS sd", "BEST_SETTING chat", "FAILED_SETTING solo",
                          "MEMORY_NEED chat"));

  const Rule& gpu = RuleOf(b->model, "GPU_OVER_CPU", "chat");
  EXPECT_EQ(gpu.words.at("machine"), "mac-1");
  EXPECT_EQ(gpu.figures.at("gpu").value, 28.2);
  EXPECT_EQ(gpu.figures.at("cpu").value, 10);
  EXPECT_EQ(En(gpu.figures.at("ratio").value), "2.82");
  EXPECT_EQ(SourceOf(b->analysis, gpu.figures.at("ratio")).formula, "x1 / x2");

  const Rule& cold = RuleOf(b->model, "COLD_START", "chat");
  EXPECT_EQ(cold.words.at("machine"), "mac-1");
  EXPECT_EQ(cold.figures.at("cold").value, 5);
  EXPECT_EQ(cold.figures.at("warm").value, 28.2);
  EXPECT_EQ(SourceOf(b->analysis, cold.figures.at("ratio")).formula, "x2 / x1");
  EXPECT_EQ(En(cold.figures.at("ratio").value), "5.64");

  const Rule& cache = RuleOf(b->model, "CACHE_HITS", "sd");
  EXPECT_EQ(cache.words.at("codes"), "CACHE_HIT");
  EXPECT_EQ(cache.figures.at("count").value, 1);
  EXPECT_EQ(SourceOf(b->analysis, cache.figures.at("count")).operation, "count");
  EXPECT_THAT(SourceOf(b->analysis, cache.figures.at("count")).run_ids, ElementsAre("s3"));
  EXPECT_THAT(SourceOf(b->analysis, cache.figures.at("count")).provenance, ElementsAre("live"));

  const Rule& drop = RuleOf(b->model, "THROUGHPUT_DROP", "chat");
  EXPECT_EQ(drop.words.at("reason"), "-46.7% at call 3 vs call 1");
  EXPECT_THAT(SourceOf(b->analysis, drop.figures.at("count")).run_ids, ElementsAre("c3"));

  const Rule& fastest = RuleOf(b->model, "FASTEST_CLASS", "chat");
  EXPECT_EQ(fastest.words.at("class"), "a100");
  EXPECT_EQ(fastest.words.at("second_class"), "m1pro");
  EXPECT_EQ(En(fastest.figures.at("ratio").value), "4.26");

  const Rule& best = RuleOf(b->model, "BEST_SETTING", "chat");
  EXPECT_EQ(best.words.at("class"), "m1pro");
  EXPECT_EQ(best.words.at("best_matrix"), "ctx=4096");
  EXPECT_EQ(best.words.at("worst_matrix"), "ctx=8192");
  EXPECT_EQ(En(best.figures.at("ratio").value), "1.41");

  const Rule& failed = RuleOf(b->model, "FAILED_SETTING", "solo");
  EXPECT_EQ(failed.words.at("mode"), "cpu");
  EXPECT_EQ(failed.words.at("message"), "out of memory");
  EXPECT_THAT(SourceOf(b->analysis, failed.figures.at("count")).run_ids, ElementsAre("f1", "f2"));

  const Rule& memory = RuleOf(b->model, "MEMORY_NEED", "chat");
  EXPECT_EQ(memory.words.at("kind"), "MEMORY_KIND_DEVICE_BUFFER");
  EXPECT_EQ(memory.words.at("machine"), "gpu-box");
  EXPECT_EQ(memory.figures.at("memory").value, 2);
  EXPECT_EQ(memory.figures.at("memory").unit, "GiB");
  EXPECT_EQ(SourceOf(b->analysis, memory.figures.at("memory")).formula, "x1 / 1073741824");

  ExpectModelTraceable(b->analysis.sources, b->model);
}

TEST(DeriveRulesTest, NoRuleWithoutSupport) {
  // One class, one mode, one matrix, warm runs only, no flag, no memory.
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 3; ++i) {
    records.push_back(
        Make({"r" + std::to_string(i), "chat", "mac-1", "gpu", "4096", v1::PHASE_WARM, kTps, 30.0 + i}, i));
  }
  auto b = Derive(Context(kTargetsYaml), records);
  EXPECT_TRUE(b->model.rules.empty());
  EXPECT_TRUE(b->model.thresholds.empty());
  Document out_doc;
  RenderRulesSection(b->model, Lang::kEn, out_doc);
  std::string out = WriteMarkdown(out_doc);
  EXPECT_EQ(out, "## Rules\n\nEach rule is printed only when the measurements support it, and cites the figures "
                 "it rests on.\n\nThe measurements support no rule yet.\n");
}

// ------------------------------------------------------------------------------------------------
// All of it: series first, then verdicts, then rules.

TEST(BuildGuideModelTest, SummarizesSeriesThenDerivesVerdictsAndRules) {
  auto derived = Derive(Context(kTargetsYaml), Fleet());
  GuideContext context = Context(kTargetsYaml);
  std::vector<v1::RunRecord> records = Fleet();
  Analysis analysis = Analyze(records);
  const size_t table_sources = analysis.sources.sources().size();
  GuideModel model = BuildGuideModel(records, context, DefaultMachineOf, &analysis);
  EXPECT_EQ(model.targets, &context.targets);
  ASSERT_EQ(model.series.size(), 2u);
  EXPECT_EQ(model.series[0].machine, "gpu-box");
  EXPECT_EQ(model.series[0].machine_class, "a100");
  EXPECT_EQ(model.series[1].machine, "mac-1");
  EXPECT_EQ(Codes(model), Codes(derived->model));
  // The series' sources come first, so every later id is shifted by their number.
  const size_t series_sources = analysis.sources.sources().size() - derived->analysis.sources.sources().size();
  auto shifted = [&](const Figure& f) {
    return "S" + std::to_string(std::stoul(f.source_id.substr(1)) + series_sources);
  };
  const CellVerdict& built = VerdictsOf(model, "chat").cells[0];
  const CellVerdict& plain = VerdictsOf(derived->model, "chat").cells[0];
  EXPECT_GT(std::stoul(built.uses[0].target.source_id.substr(1)), table_sources + series_sources);
  EXPECT_EQ(built.uses[0].target.source_id, shifted(plain.uses[0].target));
  // The memory figure is the table's own (MemoryEntry::human): not shifted.
  EXPECT_EQ(model.rules.back().figures.at("memory").source_id, derived->model.rules.back().figures.at("memory").source_id);
  ExpectModelTraceable(analysis.sources, model);
}

// ------------------------------------------------------------------------------------------------
// Sections.

std::string Sections(const GuideModel& model, Lang lang) {
  Document doc;
  RenderVerdictsSection(model, lang, doc);
  RenderThresholdsSection(model, lang, doc);
  RenderCostSection(model, lang, doc);
  RenderRulesSection(model, lang, doc);
  return WriteMarkdown(doc);
}

std::string R(const Figure& f, Lang lang) { return FormatNumber(f.value, lang) + " [" + f.source_id + "]"; }

TEST(RenderModelTest, EnglishSectionsShowVerdictsArithmeticAndRules) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  std::string md = Sections(b->model, Lang::kEn);
  const Lang en = Lang::kEn;
  const TaskVerdicts& chat = VerdictsOf(b->model, "chat");
  const CellVerdict& m1 = chat.cells[2];
  EXPECT_THAT(md, HasSubstr("## Verdicts of every setting\n\nTargets used: `t.yaml`."));
  EXPECT_THAT(md, HasSubstr("### Task `chat`\n\nTargets entry `chat*`: one item is one token.\n\n- interactive: at "
                            "least " + R(m1.uses[0].target, en) + " tokens per second (one concurrent user)\n- batch: "
                            "at least " + R(m1.uses[1].target, en) + " tokens per second\n"));
  EXPECT_THAT(md, HasSubstr("| Class | Setting | Figure | Basis | s/token | interactive | batch | Best of class |\n"));
  EXPECT_THAT(md, HasSubstr("| `m1pro` | `mac-1 / llama-server / gpu / ctx=4096` | 28.2 [" + m1.figure.source_id +
                            "] tokens/s | worst run | " + R(m1.seconds_per_item, en) + " | fine | not | yes |\n"));
  EXPECT_THAT(md, HasSubstr("- `m1pro`: best setting `mac-1 / llama-server / gpu / ctx=4096`: 0.0355 [" +
                            m1.seconds_per_item.source_id + "] s/token: fine for interactive, not for batch.\n"));
  const CellVerdict& sd_m1 = VerdictsOf(b->model, "sd").cells[1];
  EXPECT_THAT(md, HasSubstr("- `m1pro`: best setting `mac-1 / comfyui / gpu`: 8.41 [" +
                            sd_m1.seconds_per_item.source_id + "] s/image: fine for iteration, not for batch.\n"));
  EXPECT_THAT(md, HasSubstr("### Task `solo`\n\nNo entry of the targets matches this task"));

  const TaskThreshold& th = b->model.thresholds[0];
  EXPECT_THAT(md, HasSubstr("## When to move to a dedicated GPU\n\n"));
  EXPECT_THAT(md, HasSubstr("Reference: `a100`, a dedicated GPU, setting `gpu-box / llama-server / gpu / ctx=4096`."));
  EXPECT_THAT(md, HasSubstr("- `a100` `gpu-box / llama-server / gpu / ctx=4096`: " +
                            R(th.reference.items_per_second, en) + " tokens/s × `3600` s/h × 20.0 [" +
                            th.hours_per_day.source_id + "] h/day = 8640000 [" +
                            th.reference.items_per_day.source_id + "] tokens/day; " +
                            R(th.reference.items_per_second, en) + " tokens/s ÷ 10.0 [" + th.per_user->source_id +
                            "] tokens/s per user = 12.0 [" + th.reference.concurrent_users->source_id +
                            "] concurrent users.\n"));
  const auto& other = th.others[0];
  EXPECT_THAT(md, HasSubstr("Above 2030400 [" + other.capacity.items_per_day.source_id +
                            "] tokens/day, `m1pro` no longer keeps up and `a100` does: " +
                            R(th.reference.items_per_second, en) + " ÷ " + R(other.capacity.items_per_second, en) +
                            " = 4.26 [" + other.ratio.source_id + "] times its rate.\n"));

  const TaskCost& cost = b->model.costs[0];
  EXPECT_THAT(md, HasSubstr("- `chat` on `a100` `gpu-box / llama-server / gpu / ctx=4096`: 3.60 [" +
                            cost.price_per_hour.source_id + "] USD/h ÷ `3600` s/h × " +
                            R(chat.cells[0].seconds_per_item, en) + " s/token = 0.00000833 [" +
                            cost.cost_per_item.source_id + "] USD/token; × `1000000` = 8.33 [" +
                            cost.cost_per_million->source_id + "] USD per million tokens.\n"));

  const Rule& gpu = RuleOf(b->model, "GPU_OVER_CPU", "chat");
  EXPECT_THAT(md, HasSubstr("- Run `chat` on the GPU on `mac-1`: 2.82 [" + gpu.figures.at("ratio").source_id +
                            "] times the CPU's rate (" + R(gpu.figures.at("gpu"), en) + " vs " +
                            R(gpu.figures.at("cpu"), en) + " tokens/s; GPU `llama-server / ctx=4096`, CPU "
                            "`llama-server / ctx=4096`).\n"));
  const Rule& drop = RuleOf(b->model, "THROUGHPUT_DROP", "chat");
  EXPECT_THAT(md, HasSubstr("- `chat`: runs with a throughput drop across consecutive warm calls: 1 [" +
                            drop.figures.at("count").source_id + "] (first: `-46.7% at call 3 vs call 1`). Publish "
                            "every run, never a median over a few calls.\n"));
  const Rule& cache = RuleOf(b->model, "CACHE_HITS", "sd");
  EXPECT_THAT(md, HasSubstr("- `sd`: runs whose work the server served from its execution cache (`CACHE_HIT`): 1 [" +
                            cache.figures.at("count").source_id +
                            "]. Give every run an input of its own (a new seed) so that the work is done again; "
                            "they are kept out of every figure.\n"));
  const Rule& memory = RuleOf(b->model, "MEMORY_NEED", "chat");
  EXPECT_THAT(md, HasSubstr("- `chat` needs up to 2.00 [" + memory.figures.at("memory").source_id +
                            "] GiB of accelerator buffer reported by the backend on `gpu-box` `llama-server / gpu / ctx=4096`.\n"));
  const Rule& failed = RuleOf(b->model, "FAILED_SETTING", "solo");
  EXPECT_THAT(md, HasSubstr("- `solo` fails on `gpu-box` `llama-server / cpu`: every run failed (2 [" +
                            failed.figures.at("count").source_id + "]; first error: `out of memory`).\n"));
  EXPECT_EQ(StrayDigits(md), "");
}

TEST(RenderModelTest, FrenchSectionsUseDecimalCommasAndTheirOwnWords) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  std::string md = Sections(b->model, Lang::kFr);
  const TaskVerdicts& chat = VerdictsOf(b->model, "chat");
  const CellVerdict& m1 = chat.cells[2];
  EXPECT_THAT(md, HasSubstr("## Verdicts de chaque réglage\n\nObjectifs utilisés : `t.yaml`."));
  EXPECT_THAT(md, HasSubstr("- `m1pro` : meilleur réglage `mac-1 / llama-server / gpu / ctx=4096` : 0,0355 [" +
                            m1.seconds_per_item.source_id + "] s/jeton : convient pour interactive, pas pour batch.\n"));
  EXPECT_THAT(md, HasSubstr("| `m1pro` | `mac-1 / llama-server / gpu / ctx=4096` | 28,2 [" + m1.figure.source_id +
                            "] jetons/s | pire exécution | 0,0355 [" + m1.seconds_per_item.source_id +
                            "] | convient | non | oui |\n"));
  const TaskThreshold& th = b->model.thresholds[0];
  EXPECT_THAT(md, HasSubstr("## Quand passer à un GPU dédié\n\n"));
  EXPECT_THAT(md, HasSubstr("× `3600` s/h × 20,0 [" + th.hours_per_day.source_id + "] h/jour = 8640000 [" +
                            th.reference.items_per_day.source_id + "] jetons/jour ; "));
  const TaskCost& cost = b->model.costs[0];
  EXPECT_THAT(md, HasSubstr("## Coût\n\n"));
  EXPECT_THAT(md, HasSubstr("= 0,00000833 [" + cost.cost_per_item.source_id + "] USD/jeton ; × `1000000` = 8,33 [" +
                            cost.cost_per_million->source_id + "] USD par million de jetons.\n"));
  EXPECT_THAT(md, HasSubstr("## Règles\n\n"));
  const Rule& cold = RuleOf(b->model, "COLD_START", "chat");
  EXPECT_THAT(md, HasSubstr("- Tenir à part les appels à froid pour `chat` sur `mac-1` `llama-server / gpu / "
                            "ctx=4096` : le premier appel prend 5,64 [" + cold.figures.at("ratio").source_id +
                            "] fois plus de temps par jeton qu'un appel à chaud (5,00 [" +
                            cold.figures.at("cold").source_id + "] jetons/s contre 28,2 [" +
                            cold.figures.at("warm").source_id + "] jetons/s).\n"));
  const Rule& failed = RuleOf(b->model, "FAILED_SETTING", "solo");
  EXPECT_THAT(md, HasSubstr("- `solo` échoue sur `gpu-box` `llama-server / cpu` : toutes les exécutions ont échoué "
                            "(2 [" + failed.figures.at("count").source_id + "] ; première erreur : `out of memory`).\n"));
  EXPECT_THAT(md, Not(HasSubstr("Thresholds")));
  EXPECT_EQ(StrayDigits(md), "");
}

TEST(RenderModelTest, DefaultTargetsWithoutPriceOrSecondClassSaySo) {
  std::vector<v1::RunRecord> records = {
      Make({"r1", "llama-qwen2.5-3b-q4km", "mac-1", "gpu", "", v1::PHASE_WARM, kTps, 30.0}, 0)};
  GuideContext context;
  context.targets = DefaultTargets();
  auto b = Derive(context, records);
  ASSERT_EQ(b->model.verdicts.size(), 1u);
  const CellVerdict& v = b->model.verdicts[0].cells.at(0);
  EXPECT_EQ(v.machine_class, "mac-1");  // no class known: the machine label
  EXPECT_THAT(SourceOf(b->analysis, v.uses[0].target).input_refs, ElementsAre("default-targets.yaml:51"));
  std::string md = Sections(b->model, Lang::kEn);
  EXPECT_THAT(md, HasSubstr("Targets used: `default-targets.yaml`."));
  EXPECT_THAT(md, HasSubstr("## When to move to a dedicated GPU\n\nCapacity of each class' best setting: "
                            "its rate × `3600` s/h × the hours worked per day (targets); above that workload the "
                            "setting no longer keeps up. Concurrent users: its rate ÷ the rate one interactive user "
                            "needs (targets).\n\nNo task was measured on two classes or more: no threshold.\n\n"));
  EXPECT_THAT(md, HasSubstr("\n\nNo measured class has a price per hour in the targets: no cost is computed.\n\n"));
  EXPECT_THAT(md, HasSubstr("- `mac-1`: best setting `mac-1 / llama-server / gpu`: 0.0333 [" +
                            v.seconds_per_item.source_id + "] s/token: fine for interactive, not for batch.\n"));
  EXPECT_EQ(StrayDigits(md), "");
  std::string fr = Sections(b->model, Lang::kFr);
  EXPECT_THAT(fr, HasSubstr("Aucune tâche n'a été mesurée sur au moins deux classes : pas de seuil.\n\n"));
  EXPECT_EQ(StrayDigits(fr), "");
}

}  // namespace
}  // namespace benchfleet::synthesis

namespace benchfleet::synthesis {
namespace {

// A Workflow v6 series restarts its container for every repetition: all its runs are cold, and it
// is judged on them; a setting with warm runs is still judged on those alone.
TEST(GuideModelTest, ASettingWithOnlyColdRunsIsJudgedOnThem) {
  std::vector<RunSpec> specs = {
      {"k1", "chat", "gpu-box", "gpu", "", v1::PHASE_COLD, kTps, 200},
      {"k2", "chat", "gpu-box", "gpu", "", v1::PHASE_COLD, kTps, 210},
      {"x0", "chat", "mac-1", "gpu", "", v1::PHASE_COLD, kTps, 5},
      {"x1", "chat", "mac-1", "gpu", "", v1::PHASE_WARM, kTps, 30},
  };
  std::vector<v1::RunRecord> records;
  for (size_t i = 0; i < specs.size(); ++i) records.push_back(Make(specs[i], static_cast<int64_t>(i)));
  auto b = Derive(Context("tasks:\n  - match: \"chat\"\n    item: token\n    uses:\n      - name: batch\n"
                          "        min_items_per_second: 50\n"),
                  records);
  const TaskVerdicts& tv = VerdictsOf(b->model, "chat");
  ASSERT_EQ(tv.cells.size(), 2u);
  EXPECT_EQ(tv.cells[0].key.machine, "gpu-box");
  EXPECT_EQ(tv.cells[0].key.phase, v1::PHASE_COLD);
  EXPECT_EQ(tv.cells[0].figure.value, 200);  // the worst of two cold runs
  ASSERT_EQ(tv.cells[0].uses.size(), 1u);
  EXPECT_TRUE(tv.cells[0].uses[0].ok);
  EXPECT_EQ(tv.cells[1].key.machine, "mac-1");
  EXPECT_EQ(tv.cells[1].key.phase, v1::PHASE_WARM);  // its cold call is not judged
  EXPECT_FALSE(tv.cells[1].uses[0].ok);
}

}  // namespace
}  // namespace benchfleet::synthesis

namespace benchfleet::synthesis {
namespace {

// Two caches, two remedies: llama-server's prompt cache is turned off, ComfyUI's execution cache
// needs inputs of each run's own.
TEST(GuideModelTest, APromptCacheHitAsksToTurnThePromptCacheOff) {
  std::vector<v1::RunRecord> records = {Make({"q1", "chat", "gpu-box", "gpu", "", v1::PHASE_WARM, kTps, 100}, 1),
                                        Make({"q2", "chat", "gpu-box", "gpu", "", v1::PHASE_WARM, kTps, 150}, 2)};
  v1::Flag* flag = records[1].add_flags();
  flag->set_code("PROMPT_CACHE_USED");
  flag->set_reason("tokens_cached 11 although cache_prompt was false");
  auto b = Derive(Context("tasks:\n  - match: \"chat\"\n    item: token\n    uses:\n      - name: batch\n"
                          "        min_items_per_second: 50\n"),
                  records);
  const Rule& rule = RuleOf(b->model, "PROMPT_CACHE_HITS", "chat");
  EXPECT_EQ(rule.figures.at("count").value, 1);
  for (const Rule& r : b->model.rules) EXPECT_NE(r.code, "CACHE_HITS");
  Document md_doc;
  RenderRulesSection(b->model, Lang::kEn, md_doc);
  std::string md = WriteMarkdown(md_doc);
  EXPECT_THAT(md, HasSubstr("- `chat`: runs in which the server reused cached prompt tokens (`PROMPT_CACHE_USED`): 1 [" +
                            rule.figures.at("count").source_id +
                            "]. Turn its prompt cache off (cache_prompt: false); they are kept out of every figure.\n"));
}



TEST(DeriveRulesTest, CheapestMachineThatMeetsEveryTargetAndTheFastestClassNamesItsDrop) {
  // Both classes priced in USD; every sd setting meets "iteration" (at most 10 s per image).
  std::string yaml = kTargetsYaml;
  yaml.replace(yaml.find("EUR"), 3, "USD");
  yaml.replace(yaml.find("      - name: batch\n        max_seconds_per_item: 2\n"),
               std::string("      - name: batch\n        max_seconds_per_item: 2\n").size(), "");
  auto b = Derive(Context(yaml), Fleet());
  const Rule& cheap = RuleOf(b->model, "CHEAPEST", "sd");
  // a100: 3.6 USD/h x 1.9 s; m1pro: 0.5 USD/h x 8.41 s: the laptop is cheaper per image.
  EXPECT_EQ(cheap.words.at("class"), "m1pro");
  EXPECT_EQ(cheap.words.at("second_class"), "a100");
  EXPECT_EQ(En(cheap.figures.at("ratio").value), "1.63");
  ExpectTraceable(b->analysis.sources, cheap.figures.at("ratio"));
  Document md_doc;
  RenderRulesSection(b->model, Lang::kEn, md_doc);
  std::string md = WriteMarkdown(md_doc);
  EXPECT_THAT(md, HasSubstr("- For `sd`, `m1pro` is the cheapest machine that meets every target: 0.00117 [" +
                            cheap.figures.at("cost").source_id + "] USD per image (`comfyui / gpu`), 1.63 [" +
                            cheap.figures.at("ratio").source_id + "] times less than `a100` (0.00190 [" +
                            cheap.figures.at("second_cost").source_id + "] USD per image).\n"));
  // chat: a100 is the fastest; m1pro's best setting drops from call 2 after a burst up to 52.9.
  const Rule& fastest = RuleOf(b->model, "FASTEST_CLASS", "chat");
  EXPECT_EQ(fastest.words.at("drop_class"), "m1pro");
  EXPECT_EQ(fastest.figures.at("burst").value, 52.9);
  EXPECT_THAT(md, HasSubstr("`m1pro` reaches 52.9 [" + fastest.figures.at("burst").source_id +
                            "] tokens/s in its first warm calls, then drops from call `2`: the comparison is on the "
                            "rate it sustains.\n"));
}

// ------------------------------------------------------------------------------------------------
// The answer's part (decision.cc, render_decision.cc): decision rows, what to watch, repetition
// tables.

const TaskDecision& DecisionOf(const GuideModel& model, const std::string& task) {
  for (const TaskDecision& d : model.decisions) {
    if (d.task == task) return d;
  }
  throw std::runtime_error("no decision for " + task);
}

const DecisionRow& RowOfClass(const TaskDecision& d, const std::string& machine_class) {
  for (const DecisionRow& r : d.rows) {
    if (r.verdict.machine_class == machine_class) return r;
  }
  throw std::runtime_error("no row for " + machine_class);
}

TEST(DeriveDecisionsTest, BurstAndSustainedApartWhereTheThroughputDrops) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  const TaskDecision& chat = DecisionOf(b->model, "chat");
  ASSERT_EQ(chat.rows.size(), 2u);  // one row per class: its best setting
  const DecisionRow& m1pro = RowOfClass(chat, "m1pro");
  EXPECT_EQ(m1pro.verdict.key.mode, "gpu");
  EXPECT_EQ(m1pro.verdict.key.matrix, "ctx=4096");
  // c3 (call 2) is flagged: calls 0 and 1 are the burst, call 2 on the sustained level.
  EXPECT_EQ(m1pro.drop_call, 2u);
  ASSERT_TRUE(m1pro.burst && m1pro.sustained);
  EXPECT_EQ(m1pro.burst->runs, 2u);
  EXPECT_EQ(m1pro.burst->first_call, 0u);
  EXPECT_EQ(m1pro.burst->last_call, 1u);
  ASSERT_TRUE(m1pro.burst->min && m1pro.burst->max);
  EXPECT_EQ(m1pro.burst->min->value, 30.0);
  EXPECT_EQ(m1pro.burst->max->value, 52.9);
  EXPECT_FALSE(m1pro.burst->median);
  EXPECT_EQ(m1pro.sustained->runs, 1u);
  ASSERT_TRUE(m1pro.sustained->min);
  EXPECT_EQ(m1pro.sustained->min->value, 28.2);
  EXPECT_FALSE(m1pro.sustained->max);
  EXPECT_EQ(m1pro.runs.value, 3);
  EXPECT_THAT(SourceOf(b->analysis, m1pro.runs).run_ids, ElementsAre("c1", "c2", "c3"));
  for (const Figure* f : {&*m1pro.burst->min, &*m1pro.burst->max, &*m1pro.sustained->min, &m1pro.runs}) {
    ExpectTraceable(b->analysis.sources, *f);
  }
  // No drop: no levels; the a100's five runs.
  const DecisionRow& a100 = RowOfClass(chat, "a100");
  EXPECT_FALSE(a100.burst);
  EXPECT_FALSE(a100.sustained);
  EXPECT_EQ(a100.runs.value, 5);
  ExpectModelTraceable(b->analysis.sources, b->model);
}

TEST(DeriveDecisionsTest, WatchesCountTheFlaggedRunsOfEachCellAndCode) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  std::vector<std::string> seen;
  for (const Watch& w : b->model.watches) {
    seen.push_back(w.key.task + " " + w.key.machine + " " + w.code + " " + std::to_string(w.run_ids.size()));
    EXPECT_EQ(w.count.value, static_cast<double>(w.run_ids.size()));
    EXPECT_EQ(SourceOf(b->analysis, w.count).run_ids, w.run_ids);
  }
  EXPECT_THAT(seen, ElementsAre("chat mac-1 THROUGHPUT_DROP 1", "sd gpu-box CACHE_HIT 1", "solo gpu-box FAILED 2"));
}

// The agent marks a drop on a throttling device with THROTTLED on the same record: the watch says
// the device slowed down, apart from the unexplained drops.
TEST(DeriveDecisionsTest, ADropWhileTheDeviceThrottledIsWatchedAsThrottling) {
  std::vector<v1::RunRecord> fleet = Fleet();
  for (v1::RunRecord& r : fleet) {
    if (r.run_id() != "c3") continue;
    v1::Flag* f = r.add_flags();
    f->set_code("THROTTLED");
    f->set_reason("nvidia:0 clocks event reasons sw_power_cap in 3 of 3 samples");
  }
  auto b = Derive(Context(kTargetsYaml), fleet);
  std::vector<std::string> seen;
  for (const Watch& w : b->model.watches) {
    seen.push_back(w.key.machine + " " + w.code + " " + w.cause + " " + std::to_string(w.run_ids.size()));
  }
  EXPECT_THAT(seen, ElementsAre("mac-1 THROUGHPUT_DROP THROTTLED 1", "mac-1 THROTTLED  1", "gpu-box CACHE_HIT  1",
                                "gpu-box FAILED  2"));
  Document watch_doc;
  RenderWatchSection(b->model, Lang::kEn, watch_doc);
  std::string watch = WriteMarkdown(watch_doc);
  EXPECT_THAT(watch, HasSubstr("- `mac-1` `gpu, ctx=4096` (warm): warm runs with a throughput drop while the device "
                               "throttled: 1 ["));
  EXPECT_THAT(watch, HasSubstr("] (`c3` (call `2`)) — `-46.7% at call 3 vs call 1`. The device slowed down, not the "
                               "software: burst and sustained are shown apart.\n"));
  Document watch_fr_doc;
  RenderWatchSection(b->model, Lang::kFr, watch_fr_doc);
  std::string watch_fr = WriteMarkdown(watch_fr_doc);
  EXPECT_THAT(watch_fr, HasSubstr("- `mac-1` `gpu, ctx=4096` (à chaud) : exécutions à chaud avec une chute de débit pendant un "
                                  "bridage de l'accélérateur : 1 ["));
}

TEST(RenderDecisionTest, TheAnswerAndTheTableSayWhichLevelIsJudged) {
  auto b = Derive(Context(kTargetsYaml), Fleet());
  const DecisionRow& m1pro = RowOfClass(DecisionOf(b->model, "chat"), "m1pro");
  Document answer_doc;
  RenderAnswer(b->model, Lang::kEn, answer_doc);
  std::string answer = WriteMarkdown(answer_doc);
  EXPECT_THAT(answer, HasSubstr("- `chat`: `gpu-box` meets interactive and batch (`gpu, ctx=4096`, 120 ["));
  EXPECT_THAT(answer, HasSubstr("`mac-1` meets interactive, not batch (`gpu, ctx=4096`, 28.2 [" +
                                m1pro.verdict.figure.source_id + "] tokens/s sustained from call `2`, after a burst of 30.0 [" +
                                m1pro.burst->min->source_id + "] – 52.9 [" + m1pro.burst->max->source_id + "], "));
  Document table_doc;
  RenderDecisionSection(b->analysis, b->model, Lang::kEn, table_doc);
  std::string table = WriteMarkdown(table_doc);
  EXPECT_THAT(table, HasSubstr("| Machine | Verdict | Working setting | Burst (tokens_per_second (tokens/s)) | Sustained "
                               "(tokens_per_second (tokens/s)) | Runs | Memory needed | Cost |\n"));
  EXPECT_THAT(table, HasSubstr("Energy: not measured (no device energy counter on these runs).\n"));
  EXPECT_THAT(table, HasSubstr("| `mac-1` | meets interactive, not batch — judged on the sustained rate, 28.2 [" +
                               m1pro.verdict.figure.source_id + "] tokens/s (worst run): it drops from call `2` | "
                               "`gpu, ctx=4096` | 30.0 [" + m1pro.burst->min->source_id + "] – 52.9 [" +
                               m1pro.burst->max->source_id + "] (calls `0–1`) | 28.2 [" +
                               m1pro.sustained->min->source_id + "] (calls `2`) | 3 [" + m1pro.runs.source_id +
                               "] | not measured |"));
  Document fr_doc;
  RenderAnswer(b->model, Lang::kFr, fr_doc);
  std::string fr = WriteMarkdown(fr_doc);
  EXPECT_THAT(fr, HasSubstr("`mac-1` atteint interactive, pas batch (`gpu, ctx=4096`, 28,2 [" +
                            m1pro.verdict.figure.source_id + "] jetons/s en régime établi à partir de l'appel `2`, après "
                            "une pointe à 30,0 [" + m1pro.burst->min->source_id + "] – 52,9 [" +
                            m1pro.burst->max->source_id + "], "));
  Document watch_doc;
  RenderWatchSection(b->model, Lang::kEn, watch_doc);
  std::string watch = WriteMarkdown(watch_doc);
  EXPECT_THAT(watch, HasSubstr("- `gpu-box` `gpu` (warm): runs served from the server's execution cache: 1 ["));
  EXPECT_THAT(watch, HasSubstr("] (`s3` (call `18`)). Nothing was measured; such runs are kept out of every figure."));
  EXPECT_THAT(watch, HasSubstr("- `gpu-box` `cpu` (warm): failed runs: 2 ["));
  EXPECT_THAT(watch, HasSubstr("] (`f1` (call `25`), `f2` (call `26`)) — `out of memory`\n"));
  Document watch_fr_doc;
  RenderWatchSection(b->model, Lang::kFr, watch_fr_doc);
  std::string watch_fr = WriteMarkdown(watch_fr_doc);
  EXPECT_THAT(watch_fr, HasSubstr("- `gpu-box` `cpu` (à chaud) : exécutions en échec : 2 ["));
}

// Five Workflow v6 repetitions at one batch size: tokens/s (headline), mean latency in s (a
// further headline figure) and the container's peak memory.
std::vector<v1::RunRecord> WorkflowRecords() {
  std::vector<v1::RunRecord> out;
  const double rates[] = {3294, 3285, 3291, 3284, 3294};
  const double latency[] = {0.0291, 0.0290, 0.0292, 0.0291, 0.0293};
  for (int i = 0; i < 5; ++i) {
    v1::RunRecord r;
    r.set_run_id("w" + std::to_string(i));
    r.set_task("wf");
    r.set_agent_id("host");
    r.set_backend("workflow");
    r.set_mode("nvidia");
    r.set_phase(v1::PHASE_COLD);
    r.set_repetition(static_cast<uint32_t>(i));
    r.set_call_index(1);
    r.mutable_start_time()->set_seconds(1000 + i);
    r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
    r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
    (*r.mutable_matrix())["batch_size"] = "4";
    (*r.mutable_matrix())["mode"] = "nvidia";
    auto* m = r.add_metrics();
    m->set_name("tokens_per_second");
    m->set_value(rates[i]);
    m->set_unit("tokens/s");
    m->set_headline(1);
    m->set_label("tokens/s");
    m->set_better(v1::BETTER_HIGHER);
    auto* l = r.add_metrics();
    l->set_name("mean_latency_seconds");
    l->set_value(latency[i]);
    l->set_unit("s");
    l->set_headline(2);
    l->set_label("mean latency");
    l->set_better(v1::BETTER_LOWER);
    auto* mem = r.add_memory();
    mem->set_kind(v1::MEMORY_KIND_CONTAINER_PEAK);
    mem->set_bytes(268435456u + static_cast<uint64_t>(i) * 1048576u);
    mem->set_scope("cgroup");
    out.push_back(r);
  }
  return out;
}

TEST(RepetitionTablesTest, EveryRepetitionInTheMethodsOwnUnits) {
  auto b = Derive(Context(kTargetsYaml), WorkflowRecords());
  ASSERT_EQ(b->model.repetition_tables.size(), 1u);
  const RepetitionTable& t = b->model.repetition_tables[0];
  EXPECT_EQ(t.axis, "batch_size");
  EXPECT_EQ(t.latency_label, "mean latency");
  ASSERT_EQ(t.rows.size(), 1u);
  const RepetitionRow& row = t.rows[0];
  EXPECT_EQ(row.axis_value, "4");
  ASSERT_EQ(row.rate.size(), 5u);
  ASSERT_EQ(row.latency_ms.size(), 5u);
  ASSERT_TRUE(row.latency_ms[0] && row.memory_gib[4] && row.rate_median && row.latency_median_ms && row.memory_max_gib);
  EXPECT_EQ(En(row.latency_ms[0]->value), "29.1");
  EXPECT_EQ(SourceOf(b->analysis, *row.latency_ms[0]).formula, "x1 * 1000");
  EXPECT_EQ(En(row.rate_median->value), "3291");
  EXPECT_EQ(En(row.latency_median_ms->value), "29.1");
  EXPECT_EQ(En(row.memory_max_gib->value), "0.254");
  EXPECT_EQ(row.memory_kind, v1::MEMORY_KIND_CONTAINER_PEAK);
  for (const auto& f : row.latency_ms) ExpectTraceable(b->analysis.sources, *f);
  for (const auto& f : row.memory_gib) ExpectTraceable(b->analysis.sources, *f);
  ExpectTraceable(b->analysis.sources, *row.memory_max_gib);
  // The further figure itself reads in ms too (seconds under one).
  ASSERT_EQ(b->analysis.cells.size(), 1u);
  const FurtherFigure& latency = b->analysis.cells[0].further.at(0);
  ASSERT_TRUE(latency.median && latency.median_ms);
  EXPECT_EQ(latency.median_ms->unit, "ms");
  EXPECT_EQ(En(latency.median_ms->value), "29.1");
  EXPECT_EQ(SourceOf(b->analysis, *latency.median_ms).input_refs, std::vector<std::string>{latency.median->source_id});
  Document md_doc;
  RenderRepetitionSection(b->model, Lang::kEn, md_doc);
  std::string md = WriteMarkdown(md_doc);
  EXPECT_THAT(md, HasSubstr("## Workflow v6 results\n\n"));
  EXPECT_THAT(md, HasSubstr("| Platform | Batch size | mean latency (ms) | tokens/s | Max memory (GiB) |\n"));
  // Beside each median its spread. Python 3.11 (statistics.stdev / statistics.mean and the splitmix64
  // bootstrap of common/stats/spread.h written again): latency CV 0.003912750257718364, interval
  // (0.029, 0.0293) s; rate CV 0.0014673538893661441, interval (3284, 3294).
  ASSERT_TRUE(row.latency_spread_ms && row.latency_spread_ms->ci_low && row.latency_spread_ms->cv_percent);
  ASSERT_TRUE(row.rate_spread && row.rate_spread->ci_high && row.rate_spread->cv_percent);
  EXPECT_NEAR(row.latency_spread_ms->cv->value, 0.003912750257718364, 1e-12);
  EXPECT_DOUBLE_EQ(row.latency_spread_ms->ci_low->value, 29);
  EXPECT_DOUBLE_EQ(row.latency_spread_ms->ci_high->value, 29.3);
  EXPECT_EQ(SourceOf(b->analysis, *row.latency_spread_ms->ci_low).formula, "x1 * 1000");
  EXPECT_NEAR(row.rate_spread->cv->value, 0.0014673538893661441, 1e-12);
  EXPECT_EQ(row.rate_spread->ci_low->value, 3284);
  EXPECT_EQ(row.rate_spread->ci_high->value, 3294);
  EXPECT_THAT(md, HasSubstr("| `host` `nvidia` | `4` | median 29.1 [" + row.latency_median_ms->source_id +
                            "] (`95%` CI 29.0 [" + row.latency_spread_ms->ci_low->source_id + "] – 29.3 [" +
                            row.latency_spread_ms->ci_high->source_id + "], CV 0.391 [" +
                            row.latency_spread_ms->cv_percent->source_id + "] %): 29.1 [" +
                            row.latency_ms[0]->source_id + "], 29.0 ["));
  EXPECT_THAT(md, HasSubstr("| median 3291 [" + row.rate_median->source_id + "] (`95%` CI 3284 [" +
                            row.rate_spread->ci_low->source_id + "] – 3294 [" + row.rate_spread->ci_high->source_id +
                            "], CV 0.147 [" + row.rate_spread->cv_percent->source_id + "] %): 3294 ["));
  Document fr_doc;
  RenderRepetitionSection(b->model, Lang::kFr, fr_doc);
  std::string fr = WriteMarkdown(fr_doc);
  EXPECT_THAT(fr, HasSubstr("| Plateforme | Taille de lot | latence moyenne (ms) | jetons/s | Mémoire max. (Gio) |\n"));
  // A task of another backend has no such table.
  auto other = Derive(Context(kTargetsYaml), Fleet());
  EXPECT_TRUE(other->model.repetition_tables.empty());
}

}  // namespace
}  // namespace benchfleet::synthesis
