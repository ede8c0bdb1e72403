#include "coordinator/store/pg_fleet_store.h"

#include <algorithm>
#include <set>
#include <string_view>

#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <pqxx/result>
#include <pqxx/transaction>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/hashing.h"
#include "common/proto_json.h"
#include "common/proto_time.h"
#include "common/record_validation.h"
#include "common/run_flags.h"
#include "coordinator/store/pg_connection_pool.h"
#include "coordinator/store/pg_machine_queries.h"
#include "coordinator/store/pg_text.h"

namespace benchfleet::coordinator {
namespace {

// The excluding flags of common/run_flags.h as a SQL array literal: ARRAY['CACHE_HIT', ...]::text[].
// The codes are constants of ours (upper-case letters and underscores), so quoting is enough.
std::string ExcludingFlagsArray() {
  std::string out = "ARRAY[";
  for (size_t i = 0; i < kExcludingFlags.size(); ++i) {
    out += i == 0 ? "'" : ", '";
    out += kExcludingFlags[i];
    out += "'";
  }
  return out + "]::text[]";
}

// States are stored as the enum names without "STATE_", so SQL reads plainly.
std::string TaskStateText(v1::TaskStatus::State state) {
  return v1::TaskStatus::State_Name(state).substr(6);
}
v1::TaskStatus::State ParseTaskState(const std::string& text) {
  v1::TaskStatus::State state = v1::TaskStatus::STATE_UNSPECIFIED;
  v1::TaskStatus::State_Parse("STATE_" + text, &state);
  return state;
}
std::string SeriesStateText(v1::SeriesStatus::State state) {
  return v1::SeriesStatus::State_Name(state).substr(6);
}
v1::SeriesStatus::State ParseSeriesState(const std::string& text) {
  v1::SeriesStatus::State state = v1::SeriesStatus::STATE_UNSPECIFIED;
  v1::SeriesStatus::State_Parse("STATE_" + text, &state);
  return state;
}

std::string Micros(const std::string& column) {
  return absl::StrCat("(extract(epoch FROM ", column, ") * 1000000)::bigint");
}

std::optional<absl::Time> OptTime(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return absl::FromUnixMicros(f.as<int64_t>());
}

// A timestamptz parameter that may be absent: SQL reads it as NULLIF($n, '')::timestamptz.
std::string OptTimeParam(const std::optional<absl::Time>& t) {
  return t.has_value() ? TimestamptzLiteral(*t) : std::string();
}

// Reads "key\tvalue\n..." (string_agg over jsonb_each_text).
std::vector<std::pair<std::string, std::string>> Pairs(const pqxx::field& f) {
  std::vector<std::pair<std::string, std::string>> out;
  if (f.is_null()) return out;
  for (absl::string_view line : absl::StrSplit(absl::string_view(f.c_str()), '\n', absl::SkipEmpty())) {
    const size_t tab = line.find('\t');
    if (tab == absl::string_view::npos) continue;
    out.emplace_back(std::string(line.substr(0, tab)), std::string(line.substr(tab + 1)));
  }
  return out;
}

std::string PairsSql(const std::string& jsonb) {
  return absl::StrCat("(SELECT string_agg(key || E'\\t' || value, E'\\n' ORDER BY key) FROM jsonb_each_text(",
                      jsonb, ") WHERE value IS NOT NULL)");
}

const std::string& TaskColumns() {
  static const std::string* columns = new std::string(absl::StrCat(
      "t.id::text, t.series_id::text, t.agent_id, t.state, t.attempt, t.runs_done, t.runs_total, "
      "t.runs_failed, t.phase, t.call_index, t.last_figure, t.message, ",
      Micros("t.updated"), ", ", PairsSql("t.flag_counts"), ", ", Micros("t.lease_expiry"),
      ", t.coordinator_id"));
  return *columns;
}
constexpr int kTaskColumnCount = 16;

TaskRow ReadTask(const pqxx::row& row) {
  TaskRow task;
  v1::TaskStatus& s = task.status;
  s.set_task_id(row[0].c_str());
  s.set_series_id(row[1].c_str());
  s.set_agent_id(row[2].c_str());
  s.set_state(ParseTaskState(row[3].c_str()));
  s.set_attempt(row[4].as<uint32_t>());
  s.set_runs_done(row[5].as<uint32_t>());
  s.set_runs_total(row[6].as<uint32_t>());
  s.set_runs_failed(row[7].as<uint32_t>());
  s.set_phase(row[8].c_str());
  s.set_call_index(row[9].as<uint32_t>());
  s.set_last_figure(row[10].c_str());
  s.set_message(row[11].c_str());
  SetTimestamp(absl::FromUnixMicros(row[12].as<int64_t>()), s.mutable_update_time());
  for (const auto& [code, count] : Pairs(row[13])) {
    uint32_t n = 0;
    if (absl::SimpleAtoi(count, &n)) (*s.mutable_flag_counts())[code] = n;
  }
  task.lease_expiry = OptTime(row[14]);
  task.coordinator_id = row[15].c_str();
  return task;
}

const std::string& SeriesColumns() {
  static const std::string* columns = new std::string(absl::StrCat(
      "s.id::text, s.name, s.task, s.backend, s.spec_yaml, s.source_name, ", Micros("s.created"), ", ",
      Micros("s.deadline"), ", s.retry_max, s.state, COALESCE(s.schedule_id::text, ''), ",
      Micros("s.slot_time")));
  return *columns;
}

SeriesRow ReadSeries(const pqxx::row& row) {
  SeriesRow s;
  s.id = row[0].c_str();
  s.name = row[1].c_str();
  s.task = row[2].c_str();
  s.backend = row[3].c_str();
  s.spec_yaml = row[4].c_str();
  s.source_name = row[5].c_str();
  s.created = absl::FromUnixMicros(row[6].as<int64_t>());
  s.deadline = OptTime(row[7]);
  s.retry_max = row[8].as<int>();
  s.state = ParseSeriesState(row[9].c_str());
  s.schedule_id = row[10].c_str();
  s.slot_time = OptTime(row[11]);
  return s;
}

// Tells other coordinators (LISTEN benchfleet_fleet) that the series changed; sent on commit.
void Notify(pqxx::transaction_base& tx, const std::string& series_id) {
  tx.exec_params("SELECT pg_notify($1, $2), nextval('fleet_change_seq')", kFleetChannel, series_id);
}

// A task row as the claim and take-over statements return it: id, series_id, agent_id, attempt,
// spec_yaml, deadline (microseconds), the series' task name.
ClaimedTask ClaimedTaskOf(const pqxx::row& row) {
  ClaimedTask t;
  t.task_id = row[0].c_str();
  t.series_id = row[1].c_str();
  t.agent_id = row[2].c_str();
  t.attempt = row[3].as<uint32_t>();
  t.spec_yaml = row[4].c_str();
  t.deadline = OptTime(row[5]);
  t.task = row[6].c_str();
  return t;
}

class PgFleetStore : public FleetStore {
 public:
  explicit PgFleetStore(PgFleetStoreOptions options)
      : pool_(options.database_url, options.max_connections) {}

  absl::StatusOr<std::vector<v1::Machine>> ListMachines() override {
    std::vector<v1::Machine> machines;
    absl::Status status = pool_.Run("listing machines", [&](pqxx::connection& c) {
      return SelectMachines(c, {}, &machines);
    });
    if (!status.ok()) return status;
    return machines;
  }

  absl::StatusOr<std::vector<v1::MachineConditions>> GetConditions(
      const std::vector<std::string>& fingerprints) override {
    std::vector<v1::MachineConditions> conditions;
    absl::Status status = pool_.Run("reading conditions", [&](pqxx::connection& c) {
      return SelectConditions(c, fingerprints, &conditions);
    });
    if (!status.ok()) return status;
    return conditions;
  }

  absl::StatusOr<std::string> CreateSeries(const SeriesRow& series,
                                           const std::vector<std::string>& agent_ids) override {
    const std::string id = NewUuid();
    absl::Status status = pool_.Run("storing series " + series.name, [&](pqxx::connection& c) {
      pqxx::work tx(c);
      tx.exec_params(
          "INSERT INTO series (id, name, task, backend, spec_yaml, source_name, created, deadline, "
          "retry_max, state, schedule_id, slot_time) VALUES ($1::uuid, $2, $3, $4, $5, $6, "
          "$7::timestamptz, NULLIF($8, '')::timestamptz, $9::integer, $10, NULLIF($11, '')::uuid, "
          "NULLIF($12, '')::timestamptz)",
          id, series.name, series.task, series.backend, series.spec_yaml, series.source_name,
          TimestamptzLiteral(series.created), OptTimeParam(series.deadline), series.retry_max,
          SeriesStateText(v1::SeriesStatus::STATE_ACTIVE), series.schedule_id,
          OptTimeParam(series.slot_time));
      tx.exec_params(
          "INSERT INTO tasks (id, series_id, agent_id, state, attempt, updated) "
          "SELECT gen_random_uuid(), $1::uuid, a, 'PENDING', 1, $2::timestamptz "
          "FROM jsonb_array_elements_text($3::jsonb) AS a",
          id, TimestamptzLiteral(series.created), JsonStringArray(agent_ids));
      if (!series.schedule_id.empty() && series.slot_time.has_value()) {
        tx.exec_params(
            "UPDATE schedule_slots SET series_id = $1::uuid WHERE schedule_id = $2::uuid AND "
            "slot_time = $3::timestamptz",
            id, series.schedule_id, TimestamptzLiteral(*series.slot_time));
      }
      Notify(tx, id);
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return id;
  }

  absl::StatusOr<SeriesRow> GetSeries(const std::string& series_id) override {
    if (!IsUuid(series_id)) return absl::NotFoundError(absl::StrCat("no series ", series_id));
    std::optional<SeriesRow> found;
    absl::Status status = pool_.Run("reading series " + series_id, [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      const pqxx::result rows = tx.exec_params(
          absl::StrCat("SELECT ", SeriesColumns(), " FROM series s WHERE s.id = $1::uuid"), series_id);
      if (!rows.empty()) found = ReadSeries(rows[0]);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (!found.has_value()) return absl::NotFoundError(absl::StrCat("no series ", series_id));
    return *found;
  }

  absl::StatusOr<std::vector<SeriesRow>> ListSeries(bool active_only) override {
    std::vector<SeriesRow> out;
    absl::Status status = pool_.Run("listing series", [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      const pqxx::result rows = tx.exec(absl::StrCat(
          "SELECT ", SeriesColumns(), " FROM series s",
          active_only ? " WHERE s.state = 'ACTIVE'" : "", " ORDER BY s.created DESC, s.id DESC"));
      for (const auto& row : rows) out.push_back(ReadSeries(row));
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return out;
  }

  absl::StatusOr<std::vector<TaskRow>> ListTasks(const std::string& series_id) override {
    std::vector<TaskRow> out;
    if (!IsUuid(series_id)) return out;
    absl::Status status = pool_.Run("listing tasks of series " + series_id, [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      const pqxx::result rows = tx.exec_params(
          absl::StrCat("SELECT ", TaskColumns(),
                       " FROM tasks t WHERE t.series_id = $1::uuid ORDER BY t.agent_id, t.id"),
          series_id);
      for (const auto& row : rows) out.push_back(ReadTask(row));
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return out;
  }

  absl::StatusOr<TaskRow> GetTask(const std::string& task_id) override {
    if (!IsUuid(task_id)) return absl::NotFoundError(absl::StrCat("no task ", task_id));
    std::optional<TaskRow> found;
    absl::Status status = pool_.Run("reading task " + task_id, [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      const pqxx::result rows = tx.exec_params(
          absl::StrCat("SELECT ", TaskColumns(), " FROM tasks t WHERE t.id = $1::uuid"), task_id);
      if (!rows.empty()) found = ReadTask(rows[0]);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (!found.has_value()) return absl::NotFoundError(absl::StrCat("no task ", task_id));
    return *found;
  }

  absl::StatusOr<std::vector<ClaimedTask>> ClaimPendingTasks(const std::vector<std::string>& agent_ids,
                                                             const std::string& coordinator_id,
                                                             absl::Time now,
                                                             absl::Time lease_expiry) override {
    std::vector<ClaimedTask> out;
    if (agent_ids.empty()) return out;
    absl::Status status = pool_.Run("taking pending tasks", [&](pqxx::connection& c) {
      out.clear();
      pqxx::work tx(c);
      const pqxx::result rows = tx.exec_params(
          absl::StrCat(
              "WITH picked AS (SELECT t.id FROM tasks t JOIN series s ON s.id = t.series_id "
              "WHERE t.state = 'PENDING' AND t.agent_id = ANY($1::text[]) "
              "AND s.state = 'ACTIVE' AND (s.deadline IS NULL OR s.deadline > $3::timestamptz) "
              "FOR UPDATE OF t SKIP LOCKED) "
              "UPDATE tasks t SET state = 'RUNNING', coordinator_id = $2, "
              "lease_expiry = $4::timestamptz, updated = $3::timestamptz "
              "FROM picked, series s WHERE t.id = picked.id AND s.id = t.series_id "
              "RETURNING t.id::text, t.series_id::text, t.agent_id, t.attempt, s.spec_yaml, ",
              Micros("s.deadline"), ", s.task"),
          TextArrayLiteral(agent_ids), coordinator_id, TimestamptzLiteral(now),
          TimestamptzLiteral(lease_expiry));
      std::set<std::string> series;
      for (const auto& row : rows) {
        ClaimedTask t = ClaimedTaskOf(row);
        series.insert(t.series_id);
        out.push_back(std::move(t));
      }
      for (const std::string& id : series) Notify(tx, id);
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return out;
  }

  absl::StatusOr<std::vector<ClaimedTask>> TakeOverRunningTasks(const std::string& agent_id,
                                                                const std::string& coordinator_id, absl::Time now,
                                                                absl::Time lease_expiry) override {
    std::vector<ClaimedTask> out;
    absl::Status status = pool_.Run("taking over running tasks", [&](pqxx::connection& c) {
      out.clear();
      pqxx::work tx(c);
      const pqxx::result rows = tx.exec_params(
          absl::StrCat("UPDATE tasks t SET coordinator_id = $2, lease_expiry = $4::timestamptz, "
                       "updated = $3::timestamptz FROM series s "
                       "WHERE s.id = t.series_id AND t.agent_id = $1 AND t.state = 'RUNNING' "
                       "RETURNING t.id::text, t.series_id::text, t.agent_id, t.attempt, s.spec_yaml, ",
                       Micros("s.deadline"), ", s.task"),
          agent_id, coordinator_id, TimestamptzLiteral(now), TimestamptzLiteral(lease_expiry));
      for (const auto& row : rows) out.push_back(ClaimedTaskOf(row));
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    std::sort(out.begin(), out.end(), [](const ClaimedTask& a, const ClaimedTask& b) { return a.task_id < b.task_id; });
    return out;
  }

  absl::StatusOr<bool> UpdateTask(const TaskRow& task, v1::TaskStatus::State expected_state,
                                  uint32_t expected_attempt, absl::Time now) override {
    const v1::TaskStatus& s = task.status;
    if (!IsUuid(s.task_id())) return false;
    bool written = false;
    absl::Status status = pool_.Run("updating task " + s.task_id(), [&](pqxx::connection& c) {
      pqxx::work tx(c);
      const pqxx::result rows = tx.exec_params(
          "UPDATE tasks SET state = $2, attempt = $3, runs_done = $4, runs_total = $5, "
          "runs_failed = $6, phase = $7, call_index = $8, last_figure = $9, message = $10, "
          "lease_expiry = NULLIF($11, '')::timestamptz, coordinator_id = $12, "
          "updated = $13::timestamptz WHERE id = $1::uuid AND state = $14 AND attempt = $15 "
          "RETURNING series_id::text",
          s.task_id(), TaskStateText(s.state()), s.attempt(), s.runs_done(), s.runs_total(),
          s.runs_failed(), s.phase(), s.call_index(), s.last_figure(), s.message(),
          OptTimeParam(task.lease_expiry), task.coordinator_id, TimestamptzLiteral(now),
          TaskStateText(expected_state), expected_attempt);
      written = !rows.empty();
      if (written) Notify(tx, rows[0][0].c_str());
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return written;
  }

  absl::Status RenewLeases(const std::string& agent_id, absl::Time lease_expiry) override {
    return pool_.Run("renewing the leases of agent " + agent_id, [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      tx.exec_params(
          "UPDATE tasks SET lease_expiry = GREATEST(lease_expiry, $2::timestamptz) "
          "WHERE agent_id = $1 AND state = 'RUNNING'",
          agent_id, TimestamptzLiteral(lease_expiry));
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::vector<DueTask>> ListDueTasks(absl::Time now) override {
    std::vector<DueTask> out;
    absl::Status status = pool_.Run("listing due tasks", [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      const pqxx::result rows = tx.exec_params(
          absl::StrCat("SELECT ", TaskColumns(), ", s.retry_max, ", Micros("s.deadline"),
                       " FROM tasks t JOIN series s ON s.id = t.series_id "
                       "WHERE (t.state = 'RUNNING' AND t.lease_expiry <= $1::timestamptz) OR "
                       "(t.state = 'PENDING' AND s.deadline <= $1::timestamptz) "
                       "ORDER BY t.series_id, t.agent_id"),
          TimestamptzLiteral(now));
      for (const auto& row : rows) {
        DueTask due;
        due.task = ReadTask(row);
        due.retry_max = row[kTaskColumnCount].as<int>();
        due.deadline = OptTime(row[kTaskColumnCount + 1]);
        out.push_back(std::move(due));
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return out;
  }

  absl::StatusOr<std::vector<TaskRow>> CancelSeries(const std::string& series_id,
                                                    const std::string& message,
                                                    absl::Time now) override {
    if (!IsUuid(series_id)) return absl::NotFoundError(absl::StrCat("no series ", series_id));
    std::vector<TaskRow> running;
    bool found = false;
    absl::Status status = pool_.Run("cancelling series " + series_id, [&](pqxx::connection& c) {
      running.clear();
      pqxx::work tx(c);
      found = !tx.exec_params("SELECT 1 FROM series WHERE id = $1::uuid FOR UPDATE", series_id).empty();
      if (!found) return absl::OkStatus();
      const pqxx::result rows = tx.exec_params(
          absl::StrCat(
              "WITH old AS (SELECT id, state FROM tasks WHERE series_id = $1::uuid AND "
              "state IN ('PENDING', 'RUNNING') FOR UPDATE) "
              "UPDATE tasks t SET state = 'CANCELLED', message = $2, lease_expiry = NULL, "
              "updated = $3::timestamptz, cancel_pending = (old.state = 'RUNNING') "
              "FROM old WHERE t.id = old.id RETURNING ",
              TaskColumns(), ", old.state"),
          series_id, message, TimestamptzLiteral(now));
      for (const auto& row : rows) {
        if (std::string(row[kTaskColumnCount].c_str()) == "RUNNING") running.push_back(ReadTask(row));
      }
      tx.exec_params("UPDATE series SET state = 'CANCELLED' WHERE id = $1::uuid AND state = 'ACTIVE'",
                     series_id);
      Notify(tx, series_id);
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (!found) return absl::NotFoundError(absl::StrCat("no series ", series_id));
    return running;
  }

  absl::StatusOr<std::vector<TaskRow>> TakeCancels(const std::vector<std::string>& agent_ids) override {
    std::vector<TaskRow> out;
    if (agent_ids.empty()) return out;
    absl::Status status = pool_.Run("taking task cancellations", [&](pqxx::connection& c) {
      out.clear();
      pqxx::nontransaction tx(c);
      const pqxx::result rows = tx.exec_params(
          absl::StrCat("UPDATE tasks t SET cancel_pending = false WHERE t.cancel_pending AND "
                       "t.agent_id = ANY($1::text[]) RETURNING ",
                       TaskColumns()),
          TextArrayLiteral(agent_ids));
      for (const auto& row : rows) out.push_back(ReadTask(row));
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return out;
  }

  absl::StatusOr<std::vector<std::string>> FinishDoneSeries() override {
    std::vector<std::string> out;
    absl::Status status = pool_.Run("ending finished series", [&](pqxx::connection& c) {
      out.clear();
      pqxx::work tx(c);
      const pqxx::result rows = tx.exec(
          "UPDATE series s SET state = 'DONE' WHERE s.state = 'ACTIVE' AND NOT EXISTS "
          "(SELECT 1 FROM tasks t WHERE t.series_id = s.id AND t.state IN ('PENDING', 'RUNNING')) "
          "RETURNING s.id::text");
      for (const auto& row : rows) {
        out.push_back(row[0].c_str());
        Notify(tx, out.back());
      }
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return out;
  }

  absl::Status AddFlagCounts(const std::map<std::string, std::map<std::string, int>>& counts) override {
    if (counts.empty()) return absl::OkStatus();
    return pool_.Run("counting flags", [&](pqxx::connection& c) {
      pqxx::work tx(c);
      std::set<std::string> series;
      for (const auto& [task_id, codes] : counts) {
        if (!IsUuid(task_id) || codes.empty()) continue;
        std::string json = "{";
        for (const auto& [code, n] : codes) {
          if (json.size() > 1) json += ",";
          AppendJsonString(code, &json);
          absl::StrAppend(&json, ":", n);
        }
        json += "}";
        const pqxx::result rows = tx.exec_params(
            "UPDATE tasks t SET flag_counts = (SELECT COALESCE(jsonb_object_agg(key, n), '{}'::jsonb) "
            "FROM (SELECT key, sum(value::bigint) AS n FROM (SELECT * FROM jsonb_each_text(t.flag_counts) "
            "UNION ALL SELECT * FROM jsonb_each_text($2::jsonb)) e GROUP BY key) x) "
            "WHERE t.id = $1::uuid RETURNING t.series_id::text",
            task_id, json);
        if (!rows.empty()) series.insert(rows[0][0].c_str());
      }
      for (const std::string& id : series) Notify(tx, id);
      tx.commit();
      return absl::OkStatus();
    });
  }

  absl::StatusOr<int64_t> ChangeCounter() override {
    int64_t value = 0;
    absl::Status status = pool_.Run("reading the fleet change counter", [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      // A fresh sequence reads last_value 1 before its first nextval and after it: is_called tells
      // them apart, so that the first change moves the counter too.
      value = tx.exec("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM fleet_change_seq")[0][0]
                  .as<int64_t>();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return value;
  }

  absl::StatusOr<std::string> AddSchedule(const ScheduleRow& schedule) override {
    const std::string id = NewUuid();
    absl::Status status = pool_.Run("storing a schedule", [&](pqxx::connection& c) {
      pqxx::work tx(c);
      tx.exec_params(
          "INSERT INTO schedules (id, cron, spec_yaml, source_name, series_name, task, created) "
          "VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::timestamptz)",
          id, schedule.cron, schedule.spec_yaml, schedule.source_name, schedule.series_name,
          schedule.task, TimestamptzLiteral(schedule.created));
      Notify(tx, "");
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return id;
  }

  absl::StatusOr<std::vector<ScheduleRow>> ListSchedules() override {
    std::vector<ScheduleRow> out;
    absl::Status status = pool_.Run("listing schedules", [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      const pqxx::result rows = tx.exec(absl::StrCat(
          "SELECT sc.id::text, sc.cron, sc.spec_yaml, sc.source_name, sc.series_name, sc.task, ",
          Micros("sc.created"), ", ", Micros("sl.slot_time"),
          ", COALESCE(sl.series_id::text, '') FROM schedules sc LEFT JOIN LATERAL "
          "(SELECT slot_time, series_id FROM schedule_slots WHERE schedule_id = sc.id "
          "ORDER BY slot_time DESC LIMIT 1) sl ON true WHERE sc.removed IS NULL "
          "ORDER BY sc.created, sc.id"));
      for (const auto& row : rows) {
        ScheduleRow s;
        s.id = row[0].c_str();
        s.cron = row[1].c_str();
        s.spec_yaml = row[2].c_str();
        s.source_name = row[3].c_str();
        s.series_name = row[4].c_str();
        s.task = row[5].c_str();
        s.created = absl::FromUnixMicros(row[6].as<int64_t>());
        s.last_slot = OptTime(row[7]);
        s.last_series_id = row[8].c_str();
        out.push_back(std::move(s));
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return out;
  }

  absl::Status RemoveSchedule(const std::string& schedule_id, absl::Time now) override {
    const absl::Status not_found = absl::NotFoundError(absl::StrCat("no schedule ", schedule_id));
    if (!IsUuid(schedule_id)) return not_found;
    bool removed = false;
    absl::Status status = pool_.Run("removing schedule " + schedule_id, [&](pqxx::connection& c) {
      pqxx::work tx(c);
      removed = !tx.exec_params(
                       "UPDATE schedules SET removed = $2::timestamptz WHERE id = $1::uuid AND "
                       "removed IS NULL RETURNING 1",
                       schedule_id, TimestamptzLiteral(now))
                     .empty();
      if (removed) Notify(tx, "");
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return removed ? absl::OkStatus() : not_found;
  }

  absl::StatusOr<bool> ClaimSlot(const std::string& schedule_id, absl::Time slot,
                                 const std::string& coordinator_id, absl::Time now) override {
    bool won = false;
    absl::Status status = pool_.Run("claiming a slot of schedule " + schedule_id, [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      won = !tx.exec_params(
                   "INSERT INTO schedule_slots (schedule_id, slot_time, claimed_by, claimed) "
                   "VALUES ($1::uuid, $2::timestamptz, $3, $4::timestamptz) "
                   "ON CONFLICT DO NOTHING RETURNING 1",
                   schedule_id, TimestamptzLiteral(slot), coordinator_id, TimestamptzLiteral(now))
                 .empty();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return won;
  }

  absl::Status AnnotateRuns(const std::vector<std::string>& run_ids, const std::string& code,
                            const std::string& reason, absl::Time now) override {
    for (const std::string& id : run_ids) {
      if (!IsUuid(id)) return absl::NotFoundError(absl::StrCat("no run ", id));
    }
    std::string missing;
    absl::Status status = pool_.Run("annotating runs", [&](pqxx::connection& c) {
      pqxx::work tx(c);
      const std::string ids = JsonStringArray(run_ids);
      const pqxx::result absent = tx.exec_params(
          "SELECT r FROM jsonb_array_elements_text($1::jsonb) WITH ORDINALITY AS x(r, n) "
          "WHERE NOT EXISTS (SELECT 1 FROM runs WHERE run_id = x.r::uuid) ORDER BY n LIMIT 1",
          ids);
      if (!absent.empty()) {
        missing = absent[0][0].c_str();
        return absl::OkStatus();
      }
      tx.exec_params(
          "INSERT INTO run_annotations (run_id, code, reason, created) "
          "SELECT DISTINCT r::uuid, $2, $3, $4::timestamptz FROM jsonb_array_elements_text($1::jsonb) r "
          "ON CONFLICT (run_id, code) DO UPDATE SET reason = EXCLUDED.reason, created = EXCLUDED.created",
          ids, code, reason, TimestamptzLiteral(now));
      tx.commit();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (!missing.empty()) return absl::NotFoundError(absl::StrCat("no run ", missing));
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> RunsOfSeries(const std::string& series_id) override {
    std::vector<std::string> out;
    absl::Status status = pool_.Run("listing the runs of series " + series_id, [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      for (const auto& row :
           tx.exec_params("SELECT run_id::text FROM runs WHERE series_id = $1 ORDER BY 1", series_id)) {
        out.push_back(row[0].c_str());
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return out;
  }

  absl::StatusOr<std::vector<BaselineRun>> Baseline(const v1::RunRecord& record, int limit) override {
    // Earlier runs of other tasks; a REGRESSION annotation keeps a run out of every later baseline.
    return PointRuns(record, limit, "baseline", "r.task_id <> $7 AND r.start_time < $6::timestamptz",
                     "('INVALIDATED', 'REGRESSION')");
  }

  absl::StatusOr<std::vector<BaselineRun>> Sample(const v1::RunRecord& record, int limit) override {
    // This task's runs up to the record; its own REGRESSION annotations stay in (they are the
    // sample's verdict, not a reason to leave a run out of it).
    return PointRuns(record, limit, "sample", "r.task_id = $7 AND r.start_time <= $6::timestamptz",
                     "('INVALIDATED')");
  }

  absl::Status StoreVerdict(const std::string& task_id, const v1::RegressionVerdict& verdict,
                            const std::string& reason, absl::Time now) override {
    if (!IsUuid(task_id) || !IsUuid(verdict.run_id())) {
      return absl::InvalidArgumentError(absl::StrCat("verdict of run ", verdict.run_id(), " of task ",
                                                     task_id, ": ids must be UUIDs"));
    }
    // The runs a REGRESSION annotates: its sample (a verdict stored before samples: the run).
    std::vector<std::string> annotated;
    if (verdict.regression()) {
      for (const std::string& id : verdict.sample_run_ids()) {
        if (IsUuid(id)) annotated.push_back(id);
      }
      if (annotated.empty()) annotated.push_back(verdict.run_id());
    }
    absl::StatusOr<std::string> json = MessageToJson(verdict);
    if (!json.ok()) return json.status();
    return pool_.Run("storing the verdict of run " + verdict.run_id(), [&](pqxx::connection& c) {
      pqxx::work tx(c);
      const bool inserted =
          !tx.exec_params(
                 "INSERT INTO regressions (run_id, task_id, regression, verdict, created) VALUES "
                 "($1::uuid, $2::uuid, $3::boolean, $4::jsonb, $5::timestamptz) ON CONFLICT DO NOTHING "
                 "RETURNING 1",
                 verdict.run_id(), task_id, verdict.regression(), *json, TimestamptzLiteral(now))
               .empty();
      if (inserted && !annotated.empty()) {
        const pqxx::result added = tx.exec_params(
            "INSERT INTO run_annotations (run_id, code, reason, created) "
            "SELECT id, 'REGRESSION', $2, $3::timestamptz FROM unnest($1::uuid[]) AS id "
            "ON CONFLICT DO NOTHING RETURNING 1",
            absl::StrCat("{", absl::StrJoin(annotated, ","), "}"), reason, TimestamptzLiteral(now));
        if (!added.empty()) {
          const pqxx::result rows = tx.exec_params(
              "UPDATE tasks SET flag_counts = jsonb_set(flag_counts, '{REGRESSION}', "
              "to_jsonb(COALESCE((flag_counts ->> 'REGRESSION')::bigint, 0) + $2::bigint)) "
              "WHERE id = $1::uuid RETURNING series_id::text",
              task_id, static_cast<int64_t>(added.size()));
          if (!rows.empty()) Notify(tx, rows[0][0].c_str());
        }
      }
      tx.commit();
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::map<std::string, std::vector<v1::RegressionVerdict>>> ListVerdicts(
      const std::string& series_id) override {
    std::map<std::string, std::vector<v1::RegressionVerdict>> out;
    if (!IsUuid(series_id)) return out;
    absl::Status status = pool_.Run("listing the verdicts of series " + series_id, [&](pqxx::connection& c) {
      pqxx::nontransaction tx(c);
      // Of each task the newest verdict (by its run's start) of each point; a verdict from before
      // `kind` stands alone.
      const pqxx::result rows = tx.exec_params(
          "SELECT task_id, verdict FROM ("
          "SELECT DISTINCT ON (g.task_id, CASE WHEN g.verdict ? 'kind' THEN jsonb_build_array(g.verdict -> 'mode', "
          "g.verdict -> 'phase', g.verdict -> 'matrix') ELSE to_jsonb(g.run_id::text) END) "
          "g.task_id::text AS task_id, g.verdict::text AS verdict, r.start_time, g.created, g.run_id "
          "FROM regressions g JOIN tasks t ON t.id = g.task_id LEFT JOIN runs r ON r.run_id = g.run_id "
          "WHERE t.series_id = $1::uuid "
          "ORDER BY g.task_id, CASE WHEN g.verdict ? 'kind' THEN jsonb_build_array(g.verdict -> 'mode', "
          "g.verdict -> 'phase', g.verdict -> 'matrix') ELSE to_jsonb(g.run_id::text) END, "
          "r.start_time DESC NULLS LAST, g.created DESC, g.run_id DESC) newest "
          "ORDER BY start_time NULLS FIRST, created, run_id",
          series_id);
      for (const auto& row : rows) {
        v1::RegressionVerdict v;
        absl::Status parsed = JsonToMessage(row[1].c_str(), &v, /*ignore_unknown_fields=*/true);
        if (!parsed.ok()) return parsed;
        out[row[0].c_str()].push_back(std::move(v));
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return out;
  }

  absl::StatusOr<FleetSnapshot> ReadFleetSnapshot(absl::Time seen_since) override {
    FleetSnapshot snapshot;
    absl::Status status = pool_.Run("reading the fleet snapshot", [&](pqxx::connection& c) {
      snapshot = FleetSnapshot();
      // Every state is present, at 0 when no task is in it.
      const auto* states = v1::TaskStatus::State_descriptor();
      for (int i = 0; i < states->value_count(); ++i) {
        const auto state = static_cast<v1::TaskStatus::State>(states->value(i)->number());
        if (state == v1::TaskStatus::STATE_UNSPECIFIED) continue;
        snapshot.tasks_by_state[absl::AsciiStrToLower(TaskStateText(state))] = 0;
      }
      pqxx::nontransaction tx(c);
      // One round trip, a row per fact: (kind, a, b, n). The open tasks use the partial index
      // tasks_open_agent_idx; the state counts read the (small) tasks table once.
      const pqxx::result rows = tx.exec_params(
          "SELECT 'machines', '', '', count(*) FROM machines "
          "UNION ALL SELECT 'recent', agent_id, '', 0 FROM machines WHERE last_seen >= $1::timestamptz "
          "UNION ALL SELECT 'state', state, '', count(*) FROM tasks GROUP BY state "
          "UNION ALL SELECT DISTINCT 'open', t.agent_id, s.task, 0::bigint FROM tasks t "
          "JOIN series s ON s.id = t.series_id WHERE t.state IN ('PENDING', 'RUNNING')",
          TimestamptzLiteral(seen_since));
      for (const auto& row : rows) {
        const std::string_view kind = row[0].c_str();
        if (kind == "machines") {
          snapshot.agents_known = row[3].as<int64_t>();
        } else if (kind == "recent") {
          snapshot.recent_agents.push_back(row[1].c_str());
        } else if (kind == "state") {
          snapshot.tasks_by_state[absl::AsciiStrToLower(row[1].c_str())] = row[3].as<int64_t>();
        } else {
          snapshot.open_tasks.emplace_back(row[1].c_str(), row[2].c_str());
        }
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    std::sort(snapshot.recent_agents.begin(), snapshot.recent_agents.end());
    std::sort(snapshot.open_tasks.begin(), snapshot.open_tasks.end());
    return snapshot;
  }

 private:
  // The accepted runs (status ok, no excluding flag, no annotation of a code in `excluded_codes`,
  // an SQL list) of the record's agent, task name, mode, phase and matrix that also satisfy
  // `where_sql` ($6: the record's start, $7: its task_id), newest first, at most `limit`.
  absl::StatusOr<std::vector<BaselineRun>> PointRuns(const v1::RunRecord& record, int limit, const char* what,
                                                     const char* where_sql, const char* excluded_codes) {
    std::vector<BaselineRun> out;
    if (!record.has_start_time() || !IsUuid(record.run_id())) return out;
    const absl::Time start = ToTime(record.start_time());
    const std::map<std::string, std::string> matrix(record.matrix().begin(), record.matrix().end());
    absl::Status status =
        pool_.Run(absl::StrCat("reading the ", what, " of run ", record.run_id()), [&](pqxx::connection& c) {
          pqxx::nontransaction tx(c);
          const pqxx::result rows = tx.exec_params(
              absl::StrCat("SELECT r.run_id::text, ", PairsSql("r.metrics"),
                           ", r.wall_seconds, r.conditions_fingerprint, ", Micros("r.start_time"),
                           " FROM runs r WHERE r.task = $1 AND r.agent_id = $2 AND r.mode = $3 AND r.phase = $4 "
                           "AND COALESCE(r.matrix, '{}'::jsonb) = $5::jsonb AND ",
                           where_sql,
                           " AND r.status = 'ok' AND NOT (r.flags && ", ExcludingFlagsArray(), ") "
                           "AND NOT EXISTS (SELECT 1 FROM run_annotations a WHERE a.run_id = r.run_id AND a.code IN ",
                           excluded_codes,
                           ") ORDER BY r.start_time DESC, r.run_id DESC LIMIT $8::integer"),
              record.task(), record.agent_id(), record.mode(), PhaseName(record.phase()),
              JsonStringObject(matrix), TimestamptzLiteral(start), record.task_id(), limit);
          for (const auto& row : rows) {
            BaselineRun b;
            b.run_id = row[0].c_str();
            for (const auto& [name, value] : Pairs(row[1])) {
              double v = 0;
              if (absl::SimpleAtod(value, &v)) b.metrics[name] = v;
            }
            if (!row[2].is_null()) b.wall_seconds = row[2].as<double>();
            b.conditions_fingerprint = row[3].c_str();
            b.start_time = absl::FromUnixMicros(row[4].as<int64_t>());
            out.push_back(std::move(b));
          }
          return absl::OkStatus();
        });
    if (!status.ok()) return status;
    return out;
  }

  PgConnectionPool pool_;
};

}  // namespace

std::unique_ptr<FleetStore> NewPgFleetStore(PgFleetStoreOptions options) {
  return std::make_unique<PgFleetStore>(std::move(options));
}

}  // namespace benchfleet::coordinator
