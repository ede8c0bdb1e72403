#include "coordinator/store/pg_machine_queries.h"

#include <pqxx/connection>
#include <pqxx/result>
#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include "absl/strings/str_cat.h"
#include "common/proto_json.h"
#include "coordinator/store/pg_text.h"

namespace benchfleet::coordinator {
namespace {

// One statement, so a machine and its conditions row never disagree. $1 agent_id,
// $2 fingerprint, $3 hostname, $4 labels, $5 conditions, $6 agent_version, $7 seen.
constexpr char kUpsertMachineSql[] = R"sql(
WITH cond AS (
  INSERT INTO conditions AS c (fingerprint, conditions, agent_ids, first_seen, last_seen)
  VALUES ($2, $5::jsonb, ARRAY[$1::text], $7::timestamptz, $7::timestamptz)
  ON CONFLICT (fingerprint) DO UPDATE SET
    last_seen = GREATEST(c.last_seen, EXCLUDED.last_seen),
    agent_ids = CASE WHEN $1::text = ANY (c.agent_ids) THEN c.agent_ids ELSE c.agent_ids || $1::text END
)
INSERT INTO machines AS m (agent_id, hostname, labels, agent_version, conditions_fingerprint,
                           conditions, first_seen, last_seen)
VALUES ($1, $3, $4::jsonb, $6, $2, $5::jsonb, $7::timestamptz, $7::timestamptz)
ON CONFLICT (agent_id) DO UPDATE SET
  hostname = EXCLUDED.hostname,
  labels = EXCLUDED.labels,
  agent_version = EXCLUDED.agent_version,
  conditions_fingerprint = EXCLUDED.conditions_fingerprint,
  conditions = EXCLUDED.conditions,
  last_seen = GREATEST(m.last_seen, EXCLUDED.last_seen)
)sql";

constexpr char kSelectMachinesSql[] = R"sql(
SELECT m.agent_id, m.conditions::text,
       (extract(epoch FROM m.first_seen) * 1000000)::bigint,
       (extract(epoch FROM m.last_seen) * 1000000)::bigint,
       (SELECT count(*) FROM runs r WHERE r.agent_id = m.agent_id)
FROM machines m
WHERE m.labels @> $1::jsonb
ORDER BY m.agent_id
)sql";

constexpr char kSelectConditionsSql[] = R"sql(
SELECT fingerprint, conditions::text FROM conditions
WHERE fingerprint = ANY($1::text[])
ORDER BY fingerprint
)sql";

}  // namespace

google::protobuf::Timestamp TimestampFromMicros(int64_t micros) {
  google::protobuf::Timestamp ts;
  int64_t seconds = micros / 1000000;
  int64_t rest = micros % 1000000;
  if (rest < 0) {
    rest += 1000000;
    --seconds;
  }
  ts.set_seconds(seconds);
  ts.set_nanos(static_cast<int32_t>(rest * 1000));
  return ts;
}

absl::Status UpsertMachineRow(pqxx::connection& conn, const MachineUpdate& update) {
  absl::StatusOr<std::string> json = MessageToJson(update.conditions);
  if (!json.ok()) return json.status();
  ReplaceJsonNulEscapes(&*json);
  const auto& labels = update.conditions.labels();
  const std::string labels_json =
      JsonStringObject(std::map<std::string, std::string>(labels.begin(), labels.end()));
  pqxx::work tx(conn);
  tx.exec_params(kUpsertMachineSql, update.agent_id, update.conditions.fingerprint(),
                 update.conditions.hostname(), labels_json, *json, update.agent_version,
                 TimestamptzLiteral(update.seen));
  tx.commit();
  return absl::OkStatus();
}

absl::Status TouchMachineRow(pqxx::connection& conn, const std::string& agent_id, absl::Time seen) {
  pqxx::nontransaction tx(conn);
  tx.exec_params(
      "UPDATE machines SET last_seen = GREATEST(last_seen, $2::timestamptz) WHERE agent_id = $1",
      agent_id, TimestamptzLiteral(seen));
  return absl::OkStatus();
}

absl::Status SelectMachines(pqxx::connection& conn, const std::map<std::string, std::string>& labels,
                            std::vector<v1::Machine>* machines) {
  pqxx::nontransaction tx(conn);
  const pqxx::result rows = tx.exec_params(kSelectMachinesSql, JsonStringObject(labels));
  for (const auto& row : rows) {
    v1::Machine machine;
    machine.set_agent_id(row[0].c_str());
    absl::Status parsed = JsonToMessage(row[1].c_str(), machine.mutable_conditions(),
                                        /*ignore_unknown_fields=*/true);
    if (!parsed.ok()) {
      return absl::DataLossError(
          absl::StrCat("machine ", machine.agent_id(), " has unreadable conditions: ", parsed.message()));
    }
    *machine.mutable_first_seen_time() = TimestampFromMicros(row[2].as<int64_t>());
    *machine.mutable_last_seen_time() = TimestampFromMicros(row[3].as<int64_t>());
    machine.set_run_count(row[4].as<uint64_t>());
    machines->push_back(std::move(machine));
  }
  return absl::OkStatus();
}

absl::Status SelectConditions(pqxx::connection& conn, const std::vector<std::string>& fingerprints,
                              std::vector<v1::MachineConditions>* conditions) {
  pqxx::nontransaction tx(conn);
  const pqxx::result rows = tx.exec_params(kSelectConditionsSql, TextArrayLiteral(fingerprints));
  for (const auto& row : rows) {
    v1::MachineConditions c;
    absl::Status parsed = JsonToMessage(row[1].c_str(), &c, /*ignore_unknown_fields=*/true);
    if (!parsed.ok()) {
      return absl::DataLossError(
          absl::StrCat("conditions ", row[0].c_str(), " are unreadable: ", parsed.message()));
    }
    c.set_fingerprint(row[0].c_str());
    conditions->push_back(std::move(c));
  }
  return absl::OkStatus();
}

}  // namespace benchfleet::coordinator
