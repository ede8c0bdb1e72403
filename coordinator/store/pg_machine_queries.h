// The SQL of machines and conditions: upsert on Hello, last_seen on heartbeats, the machine list.
// Owned by PgRunStore, which hands each call a connection of its own; the functions throw
// libpqxx exceptions, which PgConnectionPool turns into a Status. Stateless.
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_MACHINE_QUERIES_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_MACHINE_QUERIES_H_

#include <map>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "benchfleet/v1/admin.pb.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

absl::Status UpsertMachineRow(pqxx::connection& conn, const MachineUpdate& update);

absl::Status TouchMachineRow(pqxx::connection& conn, const std::string& agent_id, absl::Time seen);

absl::Status SelectMachines(pqxx::connection& conn, const std::map<std::string, std::string>& labels,
                            std::vector<v1::Machine>* machines);

// Appends the conditions of the known `fingerprints`, ordered by fingerprint.
absl::Status SelectConditions(pqxx::connection& conn, const std::vector<std::string>& fingerprints,
                              std::vector<v1::MachineConditions>* conditions);

// Returns the time of a "microseconds since the epoch" column value.
google::protobuf::Timestamp TimestampFromMicros(int64_t micros);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_MACHINE_QUERIES_H_
