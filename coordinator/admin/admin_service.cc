#include "coordinator/admin/admin_service.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/proto_time.h"
#include "common/grpc_status.h"
#include "coordinator/ingest/batch.h"
#include "coordinator/log.h"

namespace benchfleet::coordinator {
namespace {

absl::StatusOr<absl::Time> TimeOf(const google::protobuf::Timestamp& ts, const char* field) {
  if (ts.nanos() < 0 || ts.nanos() > 999999999) {
    return absl::InvalidArgumentError(absl::StrCat(field, " has nanos out of range"));
  }
  return ToTime(ts);
}

}  // namespace

absl::StatusOr<RunQuery> RunQueryFromRequest(const v1::ListRunsRequest& request) {
  RunQuery query;
  query.agent_ids.assign(request.agent_ids().begin(), request.agent_ids().end());
  query.labels.insert(request.labels().begin(), request.labels().end());
  query.backend = request.backend();
  query.task = request.task();
  query.series_id = request.series_id();
  if (request.has_since()) {
    absl::StatusOr<absl::Time> since = TimeOf(request.since(), "since");
    if (!since.ok()) return since.status();
    query.since = *since;
  }
  if (request.has_until()) {
    absl::StatusOr<absl::Time> until = TimeOf(request.until(), "until");
    if (!until.ok()) return until.status();
    query.until = *until;
  }
  query.page_size = request.page_size() == 0
                        ? kDefaultRunPageSize
                        : static_cast<int>(std::min<uint32_t>(request.page_size(), kMaxRunPageSize));
  query.page_token = request.page_token();
  return query;
}

AdminService::AdminService(RunStore* store, ConnectedAgents* agents, Scheduler* scheduler,
                           const Authorizer* authorizer, AuthAdmin* auth_admin, AuthStore* auth_store,
                           CoordinatorMetrics* metrics, std::function<int(const std::string&)> close_agent_streams)
    : store_(store),
      agents_(agents),
      scheduler_(scheduler),
      authorizer_(authorizer),
      auth_admin_(auth_admin),
      auth_store_(auth_store),
      metrics_(metrics),
      close_agent_streams_(std::move(close_agent_streams)) {}

std::map<std::string, v1::MachineTask> CurrentTasks(const std::vector<v1::SeriesStatus>& active) {
  std::map<std::string, v1::MachineTask> current;
  // Oldest series first, so a later PENDING task does not replace an earlier one.
  for (auto series = active.rbegin(); series != active.rend(); ++series) {
    for (const v1::TaskStatus& task : series->tasks()) {
      const bool running = task.state() == v1::TaskStatus::STATE_RUNNING;
      if (!running && task.state() != v1::TaskStatus::STATE_PENDING) continue;
      auto it = current.find(task.agent_id());
      if (it != current.end() &&
          (!running || it->second.state() == v1::TaskStatus::STATE_RUNNING)) {
        continue;
      }
      v1::MachineTask& entry = current[task.agent_id()];
      entry.set_series_id(series->series_id());
      entry.set_series_name(series->name());
      entry.set_task_id(task.task_id());
      entry.set_state(task.state());
    }
  }
  return current;
}

grpc::Status AdminService::ListRuns(grpc::ServerContext* context, const v1::ListRunsRequest* request,
                                    v1::ListRunsResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/ListRuns";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<RunQuery> query = RunQueryFromRequest(*request);
  if (!query.ok()) return ToGrpcStatus(query.status());
  absl::StatusOr<RunPage> page = store_->ListRuns(*query);
  if (!page.ok()) return ToGrpcStatus(page.status());
  response->mutable_runs()->Reserve(static_cast<int>(page->runs.size()));
  for (v1::RunRecord& run : page->runs) *response->add_runs() = std::move(run);
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::Status AdminService::ListMachines(grpc::ServerContext* context, const v1::ListMachinesRequest* request,
                                        v1::ListMachinesResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/ListMachines";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<std::vector<v1::Machine>> machines = store_->ListMachines(
      std::map<std::string, std::string>(request->labels().begin(), request->labels().end()));
  if (!machines.ok()) return ToGrpcStatus(machines.status());
  std::map<std::string, v1::MachineTask> tasks;
  if (scheduler_ != nullptr) {
    absl::StatusOr<std::vector<v1::SeriesStatus>> active = scheduler_->ListSeries(true);
    if (!active.ok()) return ToGrpcStatus(active.status());
    tasks = CurrentTasks(*active);
  }
  for (v1::Machine& machine : *machines) {
    machine.set_connected(agents_->IsConnected(machine.agent_id()));
    if (auto it = tasks.find(machine.agent_id()); it != tasks.end()) {
      *machine.mutable_current_task() = it->second;
    }
    *response->add_machines() = std::move(machine);
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::GetConditions(grpc::ServerContext* context, const v1::GetConditionsRequest* request,
                                         v1::GetConditionsResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/GetConditions";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  if (request->fingerprints_size() > kMaxConditionsFingerprints) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("GetConditions names ", request->fingerprints_size(), " fingerprints; at most ",
                     kMaxConditionsFingerprints, " per call")));
  }
  const std::set<std::string> wanted(request->fingerprints().begin(), request->fingerprints().end());
  if (wanted.empty()) return grpc::Status::OK;
  absl::StatusOr<std::vector<v1::MachineConditions>> conditions =
      store_->GetConditions(std::vector<std::string>(wanted.begin(), wanted.end()));
  if (!conditions.ok()) return ToGrpcStatus(conditions.status());
  response->mutable_conditions()->Reserve(static_cast<int>(conditions->size()));
  for (v1::MachineConditions& c : *conditions) *response->add_conditions() = std::move(c);
  return grpc::Status::OK;
}

grpc::Status AdminService::ListRegressionChecks(grpc::ServerContext* context,
                                                const v1::ListRegressionChecksRequest* request,
                                                v1::ListRegressionChecksResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/ListRegressionChecks";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  std::optional<absl::Time> since;
  if (request->has_since()) {
    absl::StatusOr<absl::Time> t = TimeOf(request->since(), "since");
    if (!t.ok()) return ToGrpcStatus(t.status());
    since = *t;
  }
  absl::StatusOr<v1::ListRegressionChecksResponse> checks = store_->ListRegressionChecks(
      std::vector<std::string>(request->tasks().begin(), request->tasks().end()), since);
  if (!checks.ok()) return ToGrpcStatus(checks.status());
  *response = std::move(*checks);
  return grpc::Status::OK;
}

grpc::Status AdminService::ImportRuns(grpc::ServerContext* context, const v1::ImportRunsRequest* request,
                                      v1::ImportRunsResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/ImportRuns";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  // The same checks and the same exactly-once store as an agent's batch.
  v1::RecordBatch batch;
  for (const v1::RunRecord& run : request->runs()) run.SerializeToString(batch.add_records());
  PreparedBatch prepared = PrepareBatch(batch, *store_);
  std::vector<RunStoreResult> results;
  if (!prepared.runs.runs.empty()) {
    const PreparedRuns* groups[] = {&prepared.runs};
    absl::StatusOr<std::vector<RunStoreResult>> stored = store_->StoreRuns(groups);
    if (!stored.ok()) return ToGrpcStatus(stored.status());
    results = std::move(*stored);
  }
  const v1::Ack ack = BuildAck(prepared, results);
  uint64_t conflicts = 0;
  for (const RunStoreResult& r : results) {
    if (r.outcome != StoreOutcome::kConflict) continue;
    ++conflicts;
    Log(absl::StrCat("import by ", caller.Actor(), ": ", r.reason, " (not stored)"));
  }
  if (conflicts > 0) metrics_->RecordsConflicted(conflicts);
  response->mutable_stored_run_ids()->CopyFrom(ack.stored_run_ids());
  response->mutable_duplicate_run_ids()->CopyFrom(ack.duplicate_run_ids());
  for (const v1::Rejection& r : ack.rejections()) {
    response->add_rejections(absl::StrCat(r.run_id().empty() ? absl::StrCat("#", r.index()) : r.run_id(), ": ",
                                          r.reason()));
  }
  authorizer_->Audit(caller, kMethod, absl::StrCat(request->runs_size(), " records"),
                     nlohmann::json{{"stored", ack.stored_run_ids_size()},
                                    {"duplicates", ack.duplicate_run_ids_size()},
                                    {"rejected", ack.rejections_size()},
                                    {"conflicts", conflicts}}
                         .dump());
  return grpc::Status::OK;
}

grpc::Status AdminService::CreateEnrollmentToken(grpc::ServerContext* context,
                                                 const v1::CreateEnrollmentTokenRequest* request,
                                                 v1::CreateEnrollmentTokenResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/CreateEnrollmentToken";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  auto created = auth_admin_->CreateEnrollmentToken(*request, caller.Actor());
  if (!created.ok()) return ToGrpcStatus(created.status());
  authorizer_->Audit(caller, kMethod, request->agent_id(),
                     nlohmann::json{{"uses", request->uses() == 0 ? 1u : request->uses()},
                                    {"expire_time_unix", created->expire_time().seconds()}}
                         .dump());
  *response = std::move(*created);
  return grpc::Status::OK;
}

grpc::Status AdminService::RevokeAgent(grpc::ServerContext* context, const v1::RevokeAgentRequest* request,
                                       v1::RevokeAgentResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/RevokeAgent";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  if (request->agent_id().empty()) return ToGrpcStatus(absl::InvalidArgumentError("RevokeAgent needs an agent id"));
  // This coordinator's streams first, so that the count is theirs (the NOTIFY that the revocation
  // sends would close them too, racing with this call). A reconnection in between is refused or,
  // if it wins the race, closed by that NOTIFY once the revocation is committed.
  if (close_agent_streams_) response->set_streams_closed(static_cast<uint32_t>(close_agent_streams_(request->agent_id())));
  absl::StatusOr<int> revoked = auth_store_->RevokeAgent(request->agent_id(), authorizer_->Now());
  if (!revoked.ok()) return ToGrpcStatus(revoked.status());
  response->set_certificates_revoked(static_cast<uint32_t>(*revoked));
  authorizer_->Audit(caller, kMethod, request->agent_id(),
                     nlohmann::json{{"certificates_revoked", *revoked}, {"streams_closed", response->streams_closed()}}.dump());
  return grpc::Status::OK;
}

grpc::Status AdminService::CreateApiToken(grpc::ServerContext* context, const v1::CreateApiTokenRequest* request,
                                          v1::CreateApiTokenResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/CreateApiToken";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<std::string> token = auth_admin_->CreateApiToken(*request, caller.Actor());
  if (!token.ok()) return ToGrpcStatus(token.status());
  authorizer_->Audit(caller, kMethod, request->name(), nlohmann::json{{"role", RoleText(request->role())}}.dump());
  response->set_token(std::move(*token));
  return grpc::Status::OK;
}

grpc::Status AdminService::RevokeApiToken(grpc::ServerContext* context, const v1::RevokeApiTokenRequest* request,
                                          v1::RevokeApiTokenResponse*) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/RevokeApiToken";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  if (absl::Status revoked = auth_store_->RevokeApiToken(request->name(), authorizer_->Now()); !revoked.ok()) {
    return ToGrpcStatus(revoked);
  }
  authorizer_->Audit(caller, kMethod, request->name());
  return grpc::Status::OK;
}

grpc::Status AdminService::ListAudit(grpc::ServerContext* context, const v1::ListAuditRequest* request,
                                     v1::ListAuditResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Admin/ListAudit";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  const int limit = request->limit() == 0 ? 100 : static_cast<int>(std::min<uint32_t>(request->limit(), 10000));
  absl::StatusOr<std::vector<AuditRow>> rows = auth_store_->ListAudit(limit);
  if (!rows.ok()) return ToGrpcStatus(rows.status());
  for (const AuditRow& row : *rows) {
    v1::AuditEntry& entry = *response->add_entries();
    SetTimestamp(row.at, entry.mutable_time());
    entry.set_actor(row.actor);
    entry.set_role(row.role);
    entry.set_action(row.action);
    entry.set_target(row.target);
    entry.set_detail_json(row.detail_json);
  }
  return grpc::Status::OK;
}

}  // namespace benchfleet::coordinator
