// Every SQL query of the Grafana dashboards (panels, variables, annotations) against a real
// PostgreSQL: a fresh database migrated by the coordinator's migrator, records stored through the
// coordinator's PgRunStore, a series and a run annotation through PgFleetStore, then
// deploy/grafana/postgres-readonly-role.sql, and each query run as that role with Grafana's
// variables and macros expanded (grafana_sql_macros.h). Each must return exactly the rows the
// records make, and none for a time range before them; the role must not be able to write. The
// records' figures are stamped with their backends' own declarations (agent/backends/*/figures.h),
// as the runner stamps them: the panels read the main figure's columns, never a metric's name.
// (tests/prometheus/dashboards_live_test fills a coordinator with all four backends through gRPC.)
#include <algorithm>
#include <pqxx/pqxx>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/backends/comfyui/figures.h"
#include "agent/backends/llama_server/figures.h"
#include "common/conditions_fingerprint.h"
#include "common/figures.h"
#include "common/hashing.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_fleet_store.h"
#include "coordinator/store/pg_run_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/deploy/deploy_files.h"
#include "tests/deploy/grafana_sql_macros.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRole[] = "benchfleet_grafana";
// Serializes the role script across test processes: roles are cluster-wide, and two sessions
// altering one role at once fail with "tuple concurrently updated".
constexpr int64_t kRoleScriptLock = 7007001;

const absl::Time kT0 = absl::FromUnixSeconds(1772445600);  // 2026-03-02T10:00:00Z
constexpr int64_t kGiB = int64_t{1} << 30;

struct Figures {
  std::string agent_id, task, backend, mode;
  v1::Phase phase = v1::PHASE_WARM;
  uint32_t call_index = 1;
  absl::Duration offset;  // start time after kT0
  double main = 0;    // the backend's main figure (0: none): generation tokens/s, images/s
  double second = 0;  // its second headline figure: time to first token, server execution time
  bool failed = false;
  std::vector<std::pair<v1::MemoryKind, int64_t>> memory;
  std::vector<std::pair<std::string, std::string>> flags;  // code, reason
};

v1::RunRecord MakeRun(const Figures& f, const std::string& series_id) {
  v1::RunRecord r;
  r.set_run_id(NewUuid());
  r.set_series_id(series_id);
  r.set_task_id("task-" + f.agent_id);
  r.set_agent_id(f.agent_id);
  r.set_conditions_fingerprint("fp-" + f.agent_id);
  r.set_backend(f.backend);
  r.set_task(f.task);
  r.set_mode(f.mode);
  r.set_phase(f.phase);
  r.set_call_index(f.call_index);
  r.set_repetition(1);
  const int64_t start = absl::ToUnixSeconds(kT0 + f.offset);
  r.mutable_start_time()->set_seconds(start);
  r.mutable_end_time()->set_seconds(start + 2);
  r.mutable_wall_duration()->set_seconds(2);
  // The metrics each backend records, then its declaration stamped on them.
  const bool image = f.backend == "comfyui";
  if (f.main > 0) {
    auto* m = r.add_metrics();
    m->set_name(image ? "images_per_second" : "predicted_per_second");
    m->set_value(f.main);
    m->set_unit(image ? "images/s" : "tokens/s");
  }
  if (f.second > 0) {
    auto* m = r.add_metrics();
    m->set_name(image ? "server_execution_seconds" : "time_to_first_token_seconds");
    m->set_value(f.second);
    m->set_unit("s");
  }
  if (image) {
    StampFigures(agent::comfyui::kFigures, &r);
  } else {
    StampFigures(agent::llama_server::kFigures, &r);
  }
  for (const auto& [kind, bytes] : f.memory) {
    auto* m = r.add_memory();
    m->set_kind(kind);
    m->set_scope("test");
    m->set_bytes(static_cast<uint64_t>(bytes));
    m->set_source("grafana_sql_test");
  }
  for (const auto& [code, reason] : f.flags) {
    auto* flag = r.add_flags();
    flag->set_code(code);
    flag->set_reason(reason);
  }
  r.mutable_status()->set_code(f.failed ? v1::RunStatus::CODE_FAILED : v1::RunStatus::CODE_OK);
  if (f.failed) r.mutable_status()->set_message("llama-server exited with status 1");
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  r.set_agent_version("0.1.0");
  return r;
}

// Rows of one query result, as text (NULL as "NULL").
using Rows = std::vector<std::vector<std::string>>;

class GrafanaSqlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BENCHFLEET_REQUIRE_PG(db_);
    ASSERT_TRUE(coordinator::Migrate(db_.url()).ok());
    StoreFleet();
    ASSERT_NO_FATAL_FAILURE(RunRoleScript());
    role_url_ = absl::StrCat(db_.url(), db_.url().find('?') == std::string::npos ? "?" : "&", "user=", kRole);
  }

  void StoreFleet() {
    std::unique_ptr<coordinator::RunStore> runs = coordinator::NewPgRunStore({db_.url()});
    for (const auto& [agent, host] : {std::pair{"agent-gpu", "gpu-box-1"}, std::pair{"agent-mac", "mac-studio"}}) {
      coordinator::MachineUpdate update;
      update.agent_id = agent;
      update.agent_version = "0.1.0";
      update.conditions.set_hostname(host);
      update.conditions.set_os_name("Debian GNU/Linux");
      update.conditions.set_architecture("x86_64");
      update.conditions.set_agent_version("0.1.0");
      update.conditions.set_fingerprint(ConditionsFingerprint(update.conditions));
      update.seen = kT0 - absl::Minutes(10);
      ASSERT_TRUE(runs->UpsertMachine(update).ok());
    }

    std::unique_ptr<coordinator::FleetStore> fleet = coordinator::NewPgFleetStore({db_.url()});
    coordinator::SeriesRow llama;
    llama.name = "nightly-llama";
    llama.task = "llama-gen";
    llama.backend = "llama-server";
    llama.spec_yaml = "series: nightly-llama\n";
    llama.source_name = "nightly-llama.yaml";
    llama.created = kT0 - absl::Minutes(5);
    absl::StatusOr<std::string> llama_id = fleet->CreateSeries(llama, {"agent-gpu", "agent-mac"});
    ASSERT_TRUE(llama_id.ok()) << llama_id.status();
    coordinator::SeriesRow image = llama;
    image.name = "sd15";
    image.task = "txt2img";
    image.backend = "comfyui";
    absl::StatusOr<std::string> image_id = fleet->CreateSeries(image, {"agent-mac"});
    ASSERT_TRUE(image_id.ok()) << image_id.status();

    const std::vector<std::pair<v1::MemoryKind, int64_t>> gpu_memory = {
        {v1::MEMORY_KIND_PROCESS_PEAK_RSS, 2 * kGiB}, {v1::MEMORY_KIND_DEVICE_USED, 9 * kGiB},
        {v1::MEMORY_KIND_DEVICE_BUFFER, 4 * kGiB}};
    const std::vector<std::pair<v1::MemoryKind, int64_t>> mac_memory = {
        {v1::MEMORY_KIND_PROCESS_FOOTPRINT, 6 * kGiB}, {v1::MEMORY_KIND_HOST_BUFFER, 4 * kGiB}};
    std::vector<Figures> figures = {
        // gpu-box-1: a cold call, four warm calls (the fourth dropped), a failed fifth.
        {"agent-gpu", "llama-gen", "llama-server", "gpu", v1::PHASE_COLD, 1, absl::Minutes(1), 30, 2.0, false, gpu_memory, {}},
        {"agent-gpu", "llama-gen", "llama-server", "gpu", v1::PHASE_WARM, 1, absl::Minutes(2), 50, 0.2, false, gpu_memory, {}},
        {"agent-gpu", "llama-gen", "llama-server", "gpu", v1::PHASE_WARM, 2, absl::Minutes(3), 51, 0.2, false, gpu_memory, {}},
        {"agent-gpu", "llama-gen", "llama-server", "gpu", v1::PHASE_WARM, 3, absl::Minutes(4), 50, 0.2, false, gpu_memory, {}},
        {"agent-gpu", "llama-gen", "llama-server", "gpu", v1::PHASE_WARM, 4, absl::Minutes(5), 35, 0.3, false, gpu_memory,
         {{"THROUGHPUT_DROP", "35.0 tokens/s is 70% of the series' median 50.0"}}},
        {"agent-gpu", "llama-gen", "llama-server", "gpu", v1::PHASE_WARM, 5, absl::Minutes(6), 0, 0, true, {}, {}},
        // mac-studio: llama-gen cold and two warm calls, then txt2img (images/s, a cache hit).
        {"agent-mac", "llama-gen", "llama-server", "mps", v1::PHASE_COLD, 1, absl::Minutes(10), 20, 3.0, false, mac_memory, {}},
        {"agent-mac", "llama-gen", "llama-server", "mps", v1::PHASE_WARM, 1, absl::Minutes(11), 25, 0.5, false, mac_memory, {}},
        {"agent-mac", "llama-gen", "llama-server", "mps", v1::PHASE_WARM, 2, absl::Minutes(12), 26, 0.5, false, mac_memory, {}},
        {"agent-mac", "txt2img", "comfyui", "mps", v1::PHASE_WARM, 1, absl::Minutes(20), 0.5, 1.9, false,
         {{v1::MEMORY_KIND_CONTAINER_PEAK, 5 * kGiB}}, {}},
        {"agent-mac", "txt2img", "comfyui", "mps", v1::PHASE_WARM, 2, absl::Minutes(21), 50, 0.01, false,
         {{v1::MEMORY_KIND_CONTAINER_PEAK, 5 * kGiB}}, {{"CACHE_HIT", "0.01 s: served from the cache"}}},
    };
    coordinator::PreparedRuns prepared;
    for (const Figures& f : figures) {
      const v1::RunRecord record = MakeRun(f, f.task == "txt2img" ? *image_id : *llama_id);
      if (f.call_index == 4 && f.agent_id == "agent-gpu") dropped_run_id_ = record.run_id();
      ASSERT_TRUE(runs->PrepareRun(record, &prepared).ok());
    }
    const coordinator::PreparedRuns* groups[] = {&prepared};
    absl::StatusOr<std::vector<coordinator::RunStoreResult>> stored = runs->StoreRuns(groups);
    ASSERT_TRUE(stored.ok()) << stored.status();
    for (const auto& r : *stored) ASSERT_EQ(r.outcome, coordinator::StoreOutcome::kStored) << r.reason;
    ASSERT_EQ(stored->size(), 11u);

    ASSERT_TRUE(fleet->AnnotateRuns({dropped_run_id_}, "REGRESSION", "generation tokens/s 35 tokens/s < baseline 50",
                                    kT0 + absl::Minutes(30)).ok());
  }

  void RunRoleScript() {
    absl::StatusOr<std::string> script = ReadTextFile(SourceDir() + "/deploy/grafana/postgres-readonly-role.sql");
    ASSERT_TRUE(script.ok()) << script.status();
    pqxx::connection admin(TestServerUrl());
    pqxx::nontransaction lock(admin);
    lock.exec("SELECT pg_advisory_lock(" + std::to_string(kRoleScriptLock) + ")");
    try {
      pqxx::connection c(db_.url());
      pqxx::nontransaction tx(c);
      tx.exec(*script);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "postgres-readonly-role.sql: " << e.what();
    }
    lock.exec("SELECT pg_advisory_unlock(" + std::to_string(kRoleScriptLock) + ")");
  }

  // Runs `sql` as the read-only role, after `setup` (a statement of its own) when given.
  absl::StatusOr<Rows> QueryAsRole(const std::string& sql, const std::string& setup = "") {
    try {
      pqxx::connection c(role_url_);
      pqxx::nontransaction tx(c);
      if (!setup.empty()) tx.exec(setup);
      const pqxx::result r = tx.exec(sql);
      Rows rows;
      for (const auto& row : r) {
        std::vector<std::string> cells;
        for (const auto& field : row) cells.push_back(field.is_null() ? "NULL" : field.c_str());
        rows.push_back(std::move(cells));
      }
      return rows;
    } catch (const std::exception& e) {
      return absl::InternalError(e.what());
    }
  }

  // The dashboard's variables as Grafana would set them with "All" selected: every value the
  // variable's own query returns (its __value column, else its first), queries in order.
  GrafanaSqlContext ContextFor(const Dashboard& dashboard, absl::Time from, absl::Time to) {
    GrafanaSqlContext context{from, to, {}};
    for (const DashboardQuery& q : Queries(dashboard)) {
      if (q.source != QuerySource::kVariable) continue;
      GrafanaVariable& variable = context.variables[q.name];
      if (q.datasource_type != "postgres") {
        // A Prometheus variable (label_values) in a dashboard with SQL panels too: the label
        // values the coordinators would expose for these records.
        static const std::map<std::string, std::vector<std::string>> kLabelValues = {
            {"agent", {"agent-gpu", "agent-mac"}}, {"task", {"llama-gen", "txt2img"}}};
        const auto it = kLabelValues.find(q.name);
        EXPECT_NE(it, kLabelValues.end()) << dashboard.file << ": Prometheus variable " << q.name;
        if (it != kLabelValues.end()) variable.values = it->second;
        continue;
      }
      absl::StatusOr<std::string> sql = ExpandGrafanaSql(q.text, context);
      EXPECT_TRUE(sql.ok()) << q.name << ": " << sql.status();
      if (!sql.ok()) continue;
      try {
        pqxx::connection c(role_url_);
        pqxx::nontransaction tx(c);
        const pqxx::result r = tx.exec(*sql);
        int column = 0;
        for (pqxx::row::size_type i = 0; i < r.columns(); ++i) {
          if (std::string(r.column_name(i)) == "__value") column = static_cast<int>(i);
        }
        for (const auto& row : r) variable.values.push_back(row[column].c_str());
      } catch (const std::exception& e) {
        ADD_FAILURE() << dashboard.file << ": variable " << q.name << ": " << e.what();
      }
    }
    return context;
  }

  testing::PgTestDb db_;
  std::string role_url_;
  std::string dropped_run_id_;
};

TEST_F(GrafanaSqlTest, TheRoleLogsInReadOnly) {
  absl::StatusOr<Rows> rows = QueryAsRole("SELECT current_user, current_setting('default_transaction_read_only'), "
                                          "current_setting('statement_timeout')");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre(kRole, "on", "30s")));
}

// Each SQL query of the dashboards, expanded as Grafana does for the time range of the records,
// returns exactly the rows those records make; for a day before them, none.
TEST_F(GrafanaSqlTest, EverySqlQueryOfTheDashboardsReturnsTheRecordsAsTheReadOnlyRole) {
  // Expected rows per (dashboard, query name), from the records of StoreFleet.
  const std::map<std::pair<std::string, std::string>, size_t> expected = {
      // gpu 5 runs x 1, mac llama 3 x 2, txt2img 2 x 1
      {{"memory.json", "Host memory peak of each run, bytes (process RSS or footprint, container peak, host buffers)"}, 13},
      // gpu 5 runs x 2 kinds
      {{"memory.json", "Device memory peak of each run, bytes (device used, device buffers)"}, 10},
      {{"per-run.json", "agent"}, 2},
      {{"per-run.json", "task"}, 2},
      {{"per-run.json", "Throughput drops: each run flagged THROUGHPUT_DROP, with its main figure"}, 1},
      {{"per-run.json", "Throughput drop markers"}, 1},
      {{"per-run.json", "Run annotation markers"}, 1},
      // ok runs with a main figure: gpu 5, mac llama 3, txt2img 2
      {{"per-run.json", "Main figure of each call, by machine (figure and unit in each line's name)"}, 10},
      // llama-gen calls 1 to 4, txt2img call 1 (its call 2 is a cache hit)
      {{"per-run.json", "Mean main figure by call index, cold vs warm (per task, figure and unit)"}, 5},
      {{"per-run.json", "Runs per hour by machine and status (ok, failed)"}, 3},  // gpu ok, gpu failed, mac ok
      {{"per-run.json", "Series and their tasks on each machine"}, 3},
      {{"per-run.json", "Runs: each with its main figure and other headline figures"}, 11},
  };
  absl::StatusOr<std::vector<Dashboard>> dashboards = LoadDashboards();
  ASSERT_TRUE(dashboards.ok()) << dashboards.status();
  size_t checked = 0;
  for (const Dashboard& d : *dashboards) {
    for (const bool before : {false, true}) {
      const absl::Time from = before ? kT0 - absl::Hours(48) : kT0 - absl::Hours(1);
      const absl::Time to = before ? kT0 - absl::Hours(24) : kT0 + absl::Hours(3);
      GrafanaSqlContext context = ContextFor(d, from, to);
      for (const DashboardQuery& q : Queries(d)) {
        if (q.datasource_type != "postgres") continue;
        SCOPED_TRACE(absl::StrCat(d.file, ": ", q.name, before ? " (a day before the records)" : ""));
        absl::StatusOr<std::string> sql = ExpandGrafanaSql(q.text, context);
        ASSERT_TRUE(sql.ok()) << sql.status();
        absl::StatusOr<Rows> rows = QueryAsRole(*sql);
        ASSERT_TRUE(rows.ok()) << rows.status() << "\n" << *sql;
        const auto want = expected.find({d.file, q.name});
        ASSERT_NE(want, expected.end()) << "no expected row count for this query: add one";
        if (before && q.text.find("$__timeFilter") != std::string::npos) {
          EXPECT_EQ(rows->size(), 0u) << *sql;
        } else if (before) {
          EXPECT_EQ(rows->size(), want->second) << *sql;
        } else {
          EXPECT_EQ(rows->size(), want->second) << *sql;
          ++checked;
        }
      }
    }
  }
  // memory.json: 2 panels; per-run.json: 2 variables, 2 annotations, 6 panels.
  EXPECT_EQ(checked, 12u);
}

// A few panels, figure by figure.
TEST_F(GrafanaSqlTest, PanelsShowTheRecordsFigures) {
  absl::StatusOr<std::vector<Dashboard>> dashboards = LoadDashboards();
  ASSERT_TRUE(dashboards.ok()) << dashboards.status();
  const Dashboard* per_run = nullptr;
  const Dashboard* memory = nullptr;
  for (const Dashboard& d : *dashboards) {
    if (d.file == "per-run.json") per_run = &d;
    if (d.file == "memory.json") memory = &d;
  }
  ASSERT_NE(per_run, nullptr);
  ASSERT_NE(memory, nullptr);
  auto run = [&](const Dashboard& d, const std::string& name, GrafanaSqlContext context) -> Rows {
    for (const DashboardQuery& q : Queries(d)) {
      if (q.name != name || q.datasource_type != "postgres") continue;
      absl::StatusOr<std::string> sql = ExpandGrafanaSql(q.text, context);
      EXPECT_TRUE(sql.ok()) << sql.status();
      absl::StatusOr<Rows> rows = QueryAsRole(*sql);
      EXPECT_TRUE(rows.ok()) << rows.status();
      return rows.ok() ? *rows : Rows{};
    }
    ADD_FAILURE() << "no SQL query named " << name << " in " << d.file;
    return {};
  };
  const absl::Time from = kT0 - absl::Hours(1), to = kT0 + absl::Hours(3);
  GrafanaSqlContext context = ContextFor(*per_run, from, to);
  EXPECT_THAT(context.variables["agent"].values, ElementsAre("agent-gpu", "agent-mac"));
  EXPECT_THAT(context.variables["task"].values, ElementsAre("llama-gen", "txt2img"));

  const std::string drops = "Throughput drops: each run flagged THROUGHPUT_DROP, with its main figure";
  EXPECT_THAT(run(*per_run, drops, context),
              ElementsAre(ElementsAre("2026-03-02 10:05:00+00", "gpu-box-1", "llama-gen", "gpu", "warm", "4",
                                      "generation tokens/s", "35", "tokens/s",
                                      "35.0 tokens/s is 70% of the series' median 50.0")));
  EXPECT_THAT(run(*per_run, "Mean main figure by call index, cold vs warm (per task, figure and unit)", context),
              ElementsAre(ElementsAre("llama-gen: generation tokens/s (tokens/s), call 1", "25", "37.5"),
                          ElementsAre("llama-gen: generation tokens/s (tokens/s), call 2", "NULL", "38.5"),
                          ElementsAre("llama-gen: generation tokens/s (tokens/s), call 3", "NULL", "50"),
                          ElementsAre("llama-gen: generation tokens/s (tokens/s), call 4", "NULL", "35"),
                          ElementsAre("txt2img: images/s (images/s), call 1", "NULL", "0.5")));
  const Rows calls = run(*per_run, "Main figure of each call, by machine (figure and unit in each line's name)", context);
  ASSERT_EQ(calls.size(), 10u);
  EXPECT_THAT(calls[0], ElementsAre("2026-03-02 10:01:00+00", "gpu-box-1 llama-gen gpu cold: generation tokens/s (tokens/s)", "30"));
  EXPECT_THAT(calls[9], ElementsAre("2026-03-02 10:21:00+00", "mac-studio txt2img mps warm: images/s (images/s)", "50"));
  EXPECT_THAT(run(*per_run, "Runs per hour by machine and status (ok, failed)", context),
              ElementsAre(ElementsAre("1772445600", "gpu-box-1 failed", "1"), ElementsAre("1772445600", "gpu-box-1 ok", "5"),
                          ElementsAre("1772445600", "mac-studio ok", "5")));
  const Rows runs = run(*per_run, "Runs: each with its main figure and other headline figures", context);
  ASSERT_EQ(runs.size(), 11u);
  // Newest first: the cache hit of txt2img, then its first call.
  EXPECT_THAT(runs[0], ::testing::IsSupersetOf({"mac-studio", "txt2img", "comfyui", "CACHE_HIT", "images/s", "50",
                                                "server execution time 0.01 s"}));
  const auto dropped = std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.back() == dropped_run_id_; });
  ASSERT_NE(dropped, runs.end());
  EXPECT_THAT(*dropped, ::testing::IsSupersetOf({"THROUGHPUT_DROP", "REGRESSION", "generation tokens/s", "35", "tokens/s",
                                                 "time to first token 0.3 s"}));
  // The failed run has no figure at all.
  EXPECT_THAT(runs[5], ::testing::IsSupersetOf({"gpu-box-1", "failed"}));
  EXPECT_EQ(runs[5][10], "NULL");
  EXPECT_EQ(runs[5][13], "NULL");

  // The selection narrows the rows: mac-studio alone has no device memory.
  GrafanaSqlContext mac = context;
  mac.variables["agent"].values = {"agent-mac"};
  EXPECT_THAT(run(*per_run, drops, mac), ElementsAre());
  GrafanaSqlContext memory_context{from, to, {{"agent", {{"agent-gpu"}, true}}, {"task", {{"llama-gen"}, true}}}};
  const std::string device_panel = "Device memory peak of each run, bytes (device used, device buffers)";
  const Rows device = run(*memory, device_panel, memory_context);
  ASSERT_EQ(device.size(), 10u);
  EXPECT_THAT(device[0], ElementsAre("2026-03-02 10:01:00+00", "gpu-box-1 gpu cold device_buffer", std::to_string(4 * kGiB)));
  EXPECT_THAT(device[1], ElementsAre("2026-03-02 10:01:00+00", "gpu-box-1 gpu cold device_used", std::to_string(9 * kGiB)));
  memory_context.variables["agent"].values = {"agent-mac"};
  EXPECT_THAT(run(*memory, device_panel, memory_context), ElementsAre());
  EXPECT_EQ(run(*memory, "Host memory peak of each run, bytes (process RSS or footprint, container peak, host buffers)",
                memory_context).size(),
            6u);
}

TEST_F(GrafanaSqlTest, TheRoleCannotWriteNorReadOtherTables) {
  // Privileges, not only the read-only default: switched off, writes are still refused.
  for (const std::string sql :
       {"INSERT INTO machines (agent_id, hostname, conditions_fingerprint, conditions, first_seen, "
        "last_seen) VALUES ('x', 'x', 'x', '{}', now(), now())",
        "DELETE FROM runs", "UPDATE tasks SET state = 'CANCELLED'", "TRUNCATE run_annotations",
        "CREATE TABLE grafana_was_here (x int)", "SELECT count(*) FROM schedules",
        "SELECT count(*) FROM regressions", "SELECT count(*) FROM schema_migrations"}) {
    SCOPED_TRACE(sql);
    absl::StatusOr<Rows> rows = QueryAsRole(sql, "SET default_transaction_read_only = off");
    ASSERT_FALSE(rows.ok());
    EXPECT_THAT(std::string(rows.status().message()), HasSubstr("permission denied"));
  }
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs"), "11");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM machines"), "2");
  // And with the default left on, even a granted table is read-only.
  absl::StatusOr<Rows> rows = QueryAsRole("DELETE FROM runs");
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(std::string(rows.status().message()), HasSubstr("read-only transaction"));
}

// The role may SELECT exactly the tables the dashboards' SQL reads; running the script again
// changes nothing.
TEST_F(GrafanaSqlTest, TheScriptIsIdempotentAndGrantsExactlyWhatThePanelsRead) {
  ASSERT_NO_FATAL_FAILURE(RunRoleScript());
  const std::string grants = db_.QueryValue(
      "SELECT string_agg(table_name || ':' || privilege_type, ',' ORDER BY table_name, privilege_type) "
      "FROM information_schema.role_table_grants WHERE grantee = 'benchfleet_grafana'");
  EXPECT_EQ(grants, "machines:SELECT,run_annotations:SELECT,runs:SELECT,series:SELECT,tasks:SELECT");

  // The tables named after FROM or JOIN in the dashboards' SQL, among the schema's tables.
  const std::string tables = db_.QueryValue(
      "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables "
      "WHERE table_schema = 'public'");
  std::set<std::string> schema;
  for (absl::string_view t : absl::StrSplit(tables, ',')) schema.insert(std::string(t));
  std::set<std::string> read;
  static const std::regex kFrom("\\b(?:FROM|JOIN)\\s+([a-z_][a-z0-9_]*)", std::regex::icase);
  absl::StatusOr<std::vector<Dashboard>> dashboards = LoadDashboards();
  ASSERT_TRUE(dashboards.ok()) << dashboards.status();
  for (const Dashboard& d : *dashboards) {
    for (const DashboardQuery& q : Queries(d)) {
      if (q.datasource_type != "postgres") continue;
      for (auto it = std::sregex_iterator(q.text.begin(), q.text.end(), kFrom); it != std::sregex_iterator(); ++it) {
        if (schema.count((*it)[1].str())) read.insert((*it)[1].str());
      }
    }
  }
  EXPECT_THAT(read, ElementsAre("machines", "run_annotations", "runs", "series", "tasks"));
}

}  // namespace
}  // namespace benchfleet::testing
