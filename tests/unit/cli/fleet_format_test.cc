// The fleet commands' output, byte for byte: submit, list, show (with verdicts of the test and an
// older regression with its baseline), the watch lines on a terminal and in a log (each agent by
// hostname, class and short id; the mode, phase and call and the headline figures of its newest
// run), the summary and its exit code.
#include "cli/fleet_format.h"

#include "absl/strings/str_cat.h"
#include "cli/output_format.h"
#include "gtest/gtest.h"

namespace benchfleet::cli {
namespace {

v1::TaskStatus Task(const std::string& agent, v1::TaskStatus::State state, uint32_t done,
                    uint32_t total) {
  v1::TaskStatus t;
  t.set_task_id("task-" + agent);
  t.set_agent_id(agent);
  t.set_state(state);
  t.set_attempt(1);
  t.set_runs_done(done);
  t.set_runs_total(total);
  return t;
}

v1::SeriesStatus Series() {
  v1::SeriesStatus s;
  s.set_series_id("5e1a");
  s.set_name("nightly");
  s.set_task("qwen-7b");
  s.set_backend("llama-server");
  s.set_state(v1::SeriesStatus::STATE_ACTIVE);
  s.mutable_create_time()->set_seconds(1767225600);  // 2026-01-01T00:00:00Z
  return s;
}

TEST(FleetFormatTest, SubmittedListsTheAgents) {
  v1::SubmitSeriesResponse r;
  r.set_series_id("5e1a");
  r.add_agent_ids("a100-1");
  r.add_agent_ids("m1pro-1");
  EXPECT_EQ(FormatSubmitted(r, false), "series 5e1a submitted to 2 agents:\n  a100-1\n  m1pro-1\n");
  r.clear_series_id();
  r.mutable_agent_ids()->RemoveLast();
  EXPECT_EQ(FormatSubmitted(r, true), "dry run: the series would go to 1 agent:\n  a100-1\n");
}

TEST(FleetFormatTest, StateNamesDropThePrefix) {
  EXPECT_EQ(TaskStateName(v1::TaskStatus::STATE_REFUSED), "REFUSED");
  EXPECT_EQ(SeriesStateName(v1::SeriesStatus::STATE_CANCELLED), "CANCELLED");
}

TEST(FleetFormatTest, SeriesListCountsEndedAndSucceededTasks) {
  v1::SeriesStatus s = Series();
  *s.add_tasks() = Task("a", v1::TaskStatus::STATE_SUCCEEDED, 3, 3);
  *s.add_tasks() = Task("b", v1::TaskStatus::STATE_REFUSED, 0, 0);
  *s.add_tasks() = Task("c", v1::TaskStatus::STATE_RUNNING, 1, 3);
  EXPECT_EQ(FormatSeriesList({s}),
            "SERIES  NAME     TASK     BACKEND       STATE   AGENTS  ENDED  SUCCEEDED  CREATED  "
            "             SCHEDULE\n"
            "5e1a    nightly  qwen-7b  llama-server  ACTIVE  3       2      1          "
            "2026-01-01T00:00:00Z  \n"
            "1 series\n");
}

TEST(FleetFormatTest, ShowHasOneRowPerAgentAndEachRegressionWithItsBaseline) {
  v1::SeriesStatus s = Series();
  s.set_schedule_id("sch1");
  v1::TaskStatus a = Task("3f2a9c1e-0000-4000-8000-000000000000", v1::TaskStatus::STATE_SUCCEEDED, 12, 12);
  a.set_hostname("a100-01");
  a.set_agent_class("a100");
  (*a.mutable_flag_counts())["REGRESSION"] = 1;
  (*a.mutable_flag_counts())["CACHE_HIT"] = 3;
  v1::RegressionVerdict* v = a.add_regressions();
  v->set_run_id("1234abcd-0000-4000-8000-000000000000");
  v->set_metric("predicted_per_second");
  v->set_label("generation tokens/s");
  v->set_unit("tokens/s");
  v->set_value(45.2);
  for (int i = 0; i < 5; ++i) v->add_baseline_run_ids("r" + std::to_string(i));
  v->set_baseline_median(52.1);
  v->set_baseline_min(51);
  v->set_baseline_max(53.3);
  v->set_change(-0.1324);
  v->set_regression(true);
  v->set_conditions_change("driver 550.54 -> 560.28");
  v1::RegressionVerdict* ok = a.add_regressions();
  ok->set_run_id("9999");
  ok->set_regression(false);
  *s.add_tasks() = a;
  v1::TaskStatus b = Task("m1pro-1", v1::TaskStatus::STATE_REFUSED, 0, 0);
  b.set_message("backend llama-server is not allowed by agent.yaml");
  *s.add_tasks() = b;
  EXPECT_EQ(FormatSeries(s),
            "series 5e1a: nightly (task qwen-7b, backend llama-server)\n"
            "state ACTIVE, created 2026-01-01T00:00:00Z, schedule sch1\n"
            "\n"
            "AGENT                     STATE      ATTEMPT  RUNS   FAILED  FLAGS                     MESSAGE\n"
            "a100-01 (a100, 3f2a9c1e)  SUCCEEDED  1        12/12  0       CACHE_HIT:3,REGRESSION:1  \n"
            "m1pro-1                   REFUSED    1        0/0    0                                 backend "
            "llama-server is not allowed by agent.yaml\n"
            "\n"
            "regression check: 2 runs against their baseline, 1 regression\n"
            "  a100-01 (a100, 3f2a9c1e) run 1234abcd: generation tokens/s 45.2 vs baseline median 52.1 (51 to "
            "53.3, 5 runs): -13.2% REGRESSION; conditions changed: driver 550.54 -> 560.28\n");
}

TEST(FleetFormatTest, VerdictSaysTheUnitItsLabelDoesNotAndTheNameWithoutALabel) {
  v1::RegressionVerdict v;
  v.set_run_id("1234abcd-0000-4000-8000-000000000000");
  v.set_metric("wall_seconds");
  v.set_label("wall time");
  v.set_unit("s");
  v.set_value(13.1);
  v.add_baseline_run_ids("r1");
  v.set_baseline_median(11);
  v.set_baseline_min(10.5);
  v.set_baseline_max(11.2);
  v.set_change(0.1909);
  v.set_regression(true);
  EXPECT_EQ(FormatVerdict(v),
            "run 1234abcd: wall time 13.1 s vs baseline median 11 s (10.5 to 11.2, 1 run): +19.1% REGRESSION");
  v.clear_label();
  v.clear_unit();  // a coordinator that predates labels
  EXPECT_EQ(FormatVerdict(v),
            "run 1234abcd: wall_seconds 13.1 vs baseline median 11 (10.5 to 11.2, 1 run): +19.1% REGRESSION");
}

// A verdict of the test: the point, kind, figure, sample vs baseline, test, p-value and level.
v1::RegressionVerdict TestVerdict(v1::RegressionVerdict::Kind kind, int baseline_runs) {
  v1::RegressionVerdict v;
  v.set_run_id("4444abcd-0000-4000-8000-000000000000");
  v.set_kind(kind);
  v.set_regression(kind == v1::RegressionVerdict::KIND_REGRESSION);
  v.set_metric("predicted_per_second");
  v.set_label("generation tokens/s");
  v.set_unit("tokens/s");
  v.set_mode("gpu");
  v.set_phase(v1::PHASE_WARM);
  (*v.mutable_matrix())["ctx"] = "4096";
  (*v.mutable_matrix())["batch"] = "8";
  for (const char* id : {"1111abcd-0", "2222abcd-0", "3333abcd-0", "4444abcd-0"}) v.add_sample_run_ids(id);
  for (int i = 1; i <= baseline_runs; ++i) v.add_baseline_run_ids(absl::StrCat("b", i, "000000-0000"));
  v.set_sample_median(45.2);
  v.set_baseline_median(52.1);
  v.set_baseline_min(51);
  v.set_baseline_max(53.3);
  v.set_sample_change(-0.1324);
  v.set_test("Mann-Whitney U, two-sided, exact");
  v.set_p_value(0.015873015873015872);
  v.set_level(0.05);
  v.set_threshold(0.05);
  v.set_baseline_runs_needed(3);
  v.set_sample_runs_needed(3);
  return v;
}

TEST(FleetFormatTest, ShowListsEachVerdictWithItsTestPValueLevelAndBaselineRuns) {
  v1::SeriesStatus s = Series();
  v1::TaskStatus a = Task("3f2a9c1e-0000-4000-8000-000000000000", v1::TaskStatus::STATE_SUCCEEDED, 9, 9);
  a.set_hostname("a100-01");
  a.set_agent_class("a100");
  *a.add_regressions() = TestVerdict(v1::RegressionVerdict::KIND_REGRESSION, 7);
  v1::RegressionVerdict noisy = TestVerdict(v1::RegressionVerdict::KIND_NOT_SIGNIFICANT, 5);
  noisy.set_p_value(0.7936507936507936);
  noisy.set_phase(v1::PHASE_COLD);
  noisy.clear_matrix();
  *a.add_regressions() = noisy;
  *s.add_tasks() = a;
  v1::TaskStatus b = Task("m1pro-1", v1::TaskStatus::STATE_SUCCEEDED, 9, 9);
  *b.add_regressions() = TestVerdict(v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL, 2);
  v1::RegressionVerdict alone = TestVerdict(v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL, 5);
  alone.clear_sample_run_ids();
  alone.add_sample_run_ids("4444abcd-0");
  alone.set_p_value(1.0 / 3);
  *b.add_regressions() = alone;
  *s.add_tasks() = b;
  EXPECT_EQ(FormatSeries(s),
            "series 5e1a: nightly (task qwen-7b, backend llama-server)\n"
            "state ACTIVE, created 2026-01-01T00:00:00Z\n"
            "\n"
            "AGENT                     STATE      ATTEMPT  RUNS  FAILED  FLAGS  MESSAGE\n"
            "a100-01 (a100, 3f2a9c1e)  SUCCEEDED  1        9/9   0              \n"
            "m1pro-1                   SUCCEEDED  1        9/9   0              \n"
            "\n"
            "regression check: 4 runs against their baseline, 1 regression, 1 not significant, 1 baseline too "
            "small, 1 sample too small\n"
            "  a100-01 (a100, 3f2a9c1e) gpu warm batch=8,ctx=4096: REGRESSION: generation tokens/s median 45.2 of 4 "
            "warm calls of this series vs 52.1 of 7 earlier runs (51 to 53.3; baseline b1000000 b2000000 b3000000 "
            "b4000000 b5000000 +2 more): -13.2%, Mann-Whitney U, two-sided, exact: p = 0.0159 < 0.05, threshold 5%\n"
            "  a100-01 (a100, 3f2a9c1e) gpu cold: not significant: generation tokens/s median 45.2 of 4 cold runs of "
            "this series vs 52.1 of 5 earlier runs (51 to 53.3; baseline b1000000 b2000000 b3000000 b4000000 "
            "b5000000): -13.2%, Mann-Whitney U, two-sided, exact: p = 0.794 >= 0.05, threshold 5%\n"
            "  m1pro-1 gpu warm batch=8,ctx=4096: baseline too small: generation tokens/s 4 warm calls of this series "
            "vs 2 earlier runs (b1000000 b2000000): needs 3 earlier runs\n"
            "  m1pro-1 gpu warm batch=8,ctx=4096: sample too small: generation tokens/s median 45.2 of 1 warm call of "
            "this series vs 52.1 of 5 earlier runs (51 to 53.3; baseline b1000000 b2000000 b3000000 b4000000 "
            "b5000000): -13.2%, Mann-Whitney U, two-sided, exact: p = 0.333 >= 0.05, too few runs to ever get below "
            "it (needs 3)\n");
}

TEST(FleetFormatTest, WatchLineShowsBarRunsPhaseCallAndFigure) {
  v1::TaskStatus t = Task("a100-1", v1::TaskStatus::STATE_RUNNING, 5, 20);
  t.set_phase("WARM");
  t.set_call_index(4);
  t.set_last_figure("predicted_per_second 52.9 tokens/s");
  EXPECT_EQ(FormatWatchLine(t, true),
            "a100-1  [#####---------------]  5/20  WARM call 4  predicted_per_second 52.9 "
            "tokens/s  RUNNING");
  t.set_runs_failed(2);
  EXPECT_EQ(FormatWatchLine(t, false),
            "a100-1  5/20  WARM call 4  predicted_per_second 52.9 tokens/s  RUNNING  2 failed");
  EXPECT_EQ(FormatWatchLine(Task("x", v1::TaskStatus::STATE_PENDING, 0, 0), true),
            "x  [--------------------]  0/0  PENDING");
}

// The newest stored run of a task as the coordinator trims it (fleet.proto TaskStatus.last_run).
v1::RunRecord LastRun(const std::string& mode, v1::Phase phase, uint32_t call, double tokens_per_second) {
  v1::RunRecord r;
  r.set_run_id("12345678-aaaa-4bbb-8ccc-dddddddddddd");
  r.set_mode(mode);
  r.set_phase(phase);
  r.set_call_index(call);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  v1::Metric* ttft = r.add_metrics();
  ttft->set_name("time_to_first_token_seconds");
  ttft->set_value(0.0883);
  ttft->set_unit("s");
  ttft->set_headline(2);
  ttft->set_label("time to first token");
  v1::Metric* main = r.add_metrics();
  main->set_name("predicted_per_second");
  main->set_value(tokens_per_second);
  main->set_unit("tokens/s");
  main->set_headline(1);
  main->set_label("generation tokens/s");
  return r;
}

v1::TaskStatus A100Task() {
  v1::TaskStatus t = Task("3f2a9c1e-0000-4000-8000-000000000000", v1::TaskStatus::STATE_RUNNING, 5, 20);
  t.set_hostname("a100-01");
  t.set_agent_class("a100");
  t.set_phase("COLD");
  t.set_call_index(1);
  t.set_last_figure("generation tokens/s 51.8 tokens/s");
  return t;
}

TEST(FleetFormatTest, WatchLineNamesTheAgentAndTheModeAndHeadlineFiguresOfItsNewestRun) {
  v1::TaskStatus gpu = A100Task();
  *gpu.mutable_last_run() = LastRun("gpu", v1::PHASE_COLD, 1, 51.8);
  gpu.mutable_last_run()->add_flags()->set_code("CACHE_HIT");
  gpu.mutable_last_run()->set_simulated(true);
  EXPECT_EQ(FormatWatchLine(gpu, true),
            "a100-01 (a100, 3f2a9c1e)  [#####---------------]  5/20  gpu COLD call 1  51.8 generation "
            "tokens/s, time to first token 88.3 ms CACHE_HIT SIMULATED  RUNNING");
  // The same phase and call in the next mode no longer read the same.
  v1::TaskStatus cpu = A100Task();
  cpu.set_runs_done(11);
  *cpu.mutable_last_run() = LastRun("cpu", v1::PHASE_COLD, 1, 9.1);
  EXPECT_EQ(FormatWatchLine(cpu, false),
            "a100-01 (a100, 3f2a9c1e)  11/20  cpu COLD call 1  9.1 generation tokens/s, time to first token "
            "88.3 ms  RUNNING");
}

TEST(FleetFormatTest, WatchLineOfAFailedRunSaysWhyCutShort) {
  v1::TaskStatus t = A100Task();
  *t.mutable_last_run() = LastRun("gpu", v1::PHASE_WARM, 2, 0);
  t.mutable_last_run()->clear_metrics();
  t.mutable_last_run()->mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  t.mutable_last_run()->mutable_status()->set_message(std::string(120, 'x'));
  t.set_runs_failed(1);
  EXPECT_EQ(FormatWatchLine(t, false),
            absl::StrCat("a100-01 (a100, 3f2a9c1e)  5/20  gpu WARM call 2  FAILED: ", std::string(92, 'x'),
                         "...  RUNNING  1 failed"));
}

TEST(FleetFormatTest, WatchLineWithoutAStoredRunOrDeclaredFiguresShowsTheAgentsProgress) {
  v1::TaskStatus t = A100Task();  // no run stored yet (or an older coordinator)
  EXPECT_EQ(FormatWatchLine(t, false),
            "a100-01 (a100, 3f2a9c1e)  5/20  COLD call 1  generation tokens/s 51.8 tokens/s  RUNNING");
  *t.mutable_last_run() = LastRun("gpu", v1::PHASE_COLD, 1, 51.8);
  t.mutable_last_run()->clear_metrics();  // an older agent's record: no declaration
  EXPECT_EQ(FormatWatchLine(t, false),
            "a100-01 (a100, 3f2a9c1e)  5/20  gpu COLD call 1  generation tokens/s 51.8 tokens/s  RUNNING");
}

TEST(FleetFormatTest, TerminalRedrawsTheBlockInPlace) {
  WatchRenderer renderer(/*tty=*/true);
  v1::SeriesStatus s = Series();
  *s.add_tasks() = Task("a", v1::TaskStatus::STATE_RUNNING, 0, 4);
  EXPECT_EQ(renderer.Render(s),
            "\x1b[2Kseries 5e1a nightly  ACTIVE\n"
            "\x1b[2Ka  [--------------------]  0/4  RUNNING\n");
  s.mutable_tasks(0)->set_runs_done(4);
  s.mutable_tasks(0)->set_state(v1::TaskStatus::STATE_SUCCEEDED);
  s.set_state(v1::SeriesStatus::STATE_DONE);
  EXPECT_EQ(renderer.Render(s),
            "\x1b[2A"
            "\x1b[2Kseries 5e1a nightly  DONE\n"
            "\x1b[2Ka  [####################]  4/4  SUCCEEDED\n");
}

TEST(FleetFormatTest, PlainOutputAppendsOnlyTheLinesThatChanged) {
  WatchRenderer renderer(/*tty=*/false);
  v1::SeriesStatus s = Series();
  *s.add_tasks() = Task("a", v1::TaskStatus::STATE_RUNNING, 0, 4);
  *s.add_tasks() = Task("b", v1::TaskStatus::STATE_PENDING, 0, 0);
  EXPECT_EQ(renderer.Render(s), "a  0/4  RUNNING\nb  0/0  PENDING\n");
  s.mutable_tasks(0)->set_runs_done(1);
  EXPECT_EQ(renderer.Render(s), "a  1/4  RUNNING\n");
  EXPECT_EQ(renderer.Render(s), "");
}

TEST(FleetFormatTest, SummaryCountsStatesAndExitCodeNeedsEverySuccess) {
  v1::SeriesStatus s = Series();
  s.set_state(v1::SeriesStatus::STATE_DONE);
  *s.add_tasks() = Task("a", v1::TaskStatus::STATE_SUCCEEDED, 4, 4);
  EXPECT_TRUE(EveryTaskSucceeded(s));
  EXPECT_EQ(FormatWatchSummary(s), "series 5e1a DONE: 1 agent, 1 SUCCEEDED\n");
  v1::TaskStatus lost = Task("b7d0e2aa-0000-4000-8000-000000000000", v1::TaskStatus::STATE_LOST, 1, 4);
  lost.set_hostname("h100-02");
  lost.set_agent_class("h100");
  lost.set_message("lease expired");
  *s.add_tasks() = lost;
  EXPECT_FALSE(EveryTaskSucceeded(s));
  EXPECT_EQ(FormatWatchSummary(s),
            "series 5e1a DONE: 2 agents, 1 LOST, 1 SUCCEEDED\n  h100-02 (h100, b7d0e2aa) LOST: lease expired\n");
  s.clear_tasks();
  EXPECT_FALSE(EveryTaskSucceeded(s));  // no agent at all is not a success
}

TEST(FleetFormatTest, SchedulesAndInvalidatedRuns) {
  v1::Schedule sch;
  sch.set_schedule_id("sch1");
  sch.set_cron("0 3 * * *");
  sch.set_series_name("nightly");
  sch.set_task("qwen-7b");
  sch.mutable_next_fire_time()->set_seconds(1767236400);  // 2026-01-01T03:00:00Z
  EXPECT_EQ(FormatScheduleAdded(sch),
            "schedule sch1 added: \"0 3 * * *\" (UTC) runs series nightly (task qwen-7b)\n"
            "next at 2026-01-01T03:00:00Z\n");
  EXPECT_EQ(FormatSchedules({sch}),
            "SCHEDULE  CRON       SERIES   TASK     NEXT                  LAST  LAST_SERIES\n"
            "sch1      0 3 * * *  nightly  qwen-7b  2026-01-01T03:00:00Z        \n"
            "1 schedule\n");
  EXPECT_EQ(FormatInvalidated({"r1", "r2"}, "bad cable"),
            "2 runs invalidated: bad cable\n  r1\n  r2\n");
}

TEST(FleetFormatTest, RunsTableShowsTheReasonOfAnInvalidatedRun) {
  v1::RunRecord r;
  r.set_run_id("12345678-aaaa-4bbb-8ccc-dddddddddddd");
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.add_flags()->set_code("CACHE_HIT");
  v1::Flag* f = r.add_flags();
  f->set_code("INVALIDATED");
  f->set_reason("bad PCIe cable");
  auto text = FormatRuns({r}, Format::kTable);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("  CACHE_HIT,INVALIDATED (bad PCIe cable)  measured\n"), std::string::npos)
      << *text;
}

TEST(FleetFormatTest, AgentsTableShowsTheCurrentTask) {
  v1::Machine m;
  m.set_agent_id("a100-1");
  m.set_connected(true);
  m.mutable_current_task()->set_series_name("nightly");
  m.mutable_current_task()->set_state(v1::TaskStatus::STATE_RUNNING);
  v1::Machine idle;
  idle.set_agent_id("c5-1");
  auto text = FormatAgents({m, idle}, Format::kCsv);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text,
            "AGENT,HOSTNAME,OS,CPU,ACCELERATORS,LABELS,RUNS,CONNECTED,LAST_SEEN,TASK\n"
            "a100-1,, ,,,,0,yes,,nightly RUNNING\n"
            "c5-1,, ,,,,0,no,,\n");
}

}  // namespace
}  // namespace benchfleet::cli
