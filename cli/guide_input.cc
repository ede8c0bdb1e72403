#include "cli/guide_input.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <future>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "benchfleet/v1/admin.grpc.pb.h"
#include "cli/admin_client.h"
#include "cli/connection.h"
#include "common/proto_time.h"
#include "common/record_validation.h"
#include "synthesis/analysis/guide_model.h"
#include "synthesis/readers/database_reader.h"

namespace benchfleet::cli {
namespace {

// The most fingerprints one GetConditions call may name (coordinator/admin/admin_service.h).
constexpr int kFingerprintsPerCall = 10000;
constexpr absl::Duration kCoordinatorDeadline = absl::Seconds(30);

// The filters as the options that set them: "--task a --task b --since 2026-11-30T00:00:00Z".
std::string DescribeFilters(const GuideSource& source) {
  std::vector<std::string> parts;
  for (const std::string& task : source.tasks) parts.push_back(absl::StrCat("--task ", task));
  if (source.since.has_value()) parts.push_back(absl::StrCat("--since ", FormatUtc(*source.since)));
  return absl::StrJoin(parts, " ");
}


// Admin ListRuns (one listing per task, as ListRuns takes one) + GetConditions.
absl::StatusOr<synthesis::ReadResult> ReadFromCoordinator(const GuideSource& source) {
  synthesis::ReadResult result;
  AdminClient client(source.coordinator, kCoordinatorDeadline);
  std::vector<std::string> tasks = source.tasks;
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  if (tasks.empty()) tasks.push_back("");  // "": every task
  uint32_t listed = 0;
  for (const std::string& task : tasks) {
    v1::ListRunsRequest request;
    request.set_task(task);
    request.set_page_size(10000);
    if (source.since.has_value()) SetTimestamp(*source.since, request.mutable_since());
    auto runs = client.ListAllRuns(request);
    if (!runs.ok()) return runs.status();
    // A stored record past a record bound (stored before the coordinator checked them) is
    // skipped and listed, as the file and database readers do: "coordinator", its position.
    for (v1::RunRecord& run : *runs) {
      ++listed;
      if (absl::Status bounds = CheckRecordBounds(run); !bounds.ok()) {
        result.skipped.push_back({"coordinator", listed, synthesis::OutOfBoundsReason(bounds)});
        continue;
      }
      result.records.push_back(std::move(run));
    }
  }
  if (tasks.size() > 1) synthesis::SortRecordsOldestFirst(&result.records);

  // AdminClient has no GetConditions nor ListRegressionChecks yet: a channel of their own, with the
  // same message size limit.
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  auto channel = CoordinatorChannel(source.coordinator, args);
  if (!channel.ok()) return channel.status();
  auto stub = v1::Admin::NewStub(*channel);

  // The regression checks, the database reader's very query; a coordinator that predates them
  // (UNIMPLEMENTED) has none to give.
  {
    v1::ListRegressionChecksRequest checks_request;
    for (const std::string& task : source.tasks) checks_request.add_tasks(task);
    if (source.since.has_value()) SetTimestamp(*source.since, checks_request.mutable_since());
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kCoordinatorDeadline));
    v1::ListRegressionChecksResponse checks;
    grpc::Status s = stub->ListRegressionChecks(&context, checks_request, &checks);
    if (!s.ok() && s.error_code() != grpc::StatusCode::UNIMPLEMENTED) {
      return CoordinatorCallError(s, source.coordinator, "ListRegressionChecks");
    }
    for (const std::string& reason : checks.unreadable()) result.skipped.push_back({"coordinator", 0, reason});
    for (v1::RegressionCheck& check : *checks.mutable_checks()) {
      result.verdicts.push_back(synthesis::ToStoredVerdict(std::move(check)));
    }
  }

  // Who measured: the conditions of the runs and of the checks.
  std::set<std::string> fingerprints;
  for (const v1::RunRecord& r : result.records) {
    if (!r.conditions_fingerprint().empty()) fingerprints.insert(r.conditions_fingerprint());
  }
  for (const synthesis::StoredVerdict& v : result.verdicts) {
    if (!v.conditions_fingerprint.empty()) fingerprints.insert(v.conditions_fingerprint);
  }
  v1::GetConditionsRequest request;
  for (auto it = fingerprints.begin(); it != fingerprints.end();) {
    request.clear_fingerprints();
    for (; it != fingerprints.end() && request.fingerprints_size() < kFingerprintsPerCall; ++it) {
      request.add_fingerprints(*it);
    }
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kCoordinatorDeadline));
    v1::GetConditionsResponse response;
    grpc::Status s = stub->GetConditions(&context, request, &response);
    if (!s.ok()) return CoordinatorCallError(s, source.coordinator, "GetConditions");
    for (v1::MachineConditions& conditions : *response.mutable_conditions()) {
      std::string fingerprint = conditions.fingerprint();
      result.conditions.emplace(std::move(fingerprint), std::move(conditions));
    }
  }
  return result;
}

}  // namespace

absl::StatusOr<synthesis::GuideInput> LoadGuideInput(Env* env, const GuideSource& source) {
  std::vector<std::string> given;
  if (!source.files.empty()) given.push_back("--files");
  if (!source.coordinator.empty()) given.push_back("--coordinator");
  if (!source.database_url.empty()) given.push_back("--database-url");
  if (given.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("give only one of --files, --coordinator and --database-url (got ",
                                                   absl::StrJoin(given, " and "), ")"));
  }
  std::string database_url = source.database_url;
  if (given.empty()) database_url = source.database_url_from_env;
  if (given.empty() && database_url.empty()) {
    return absl::InvalidArgumentError(
        "give the records to read: --files PATH..., --coordinator ADDR or --database-url URL "
        "(or set BENCHFLEET_DATABASE_URL)");
  }

  synthesis::GuideInput input;
  // The targets first: a wrong file fails before a long read.
  if (!source.targets_path.empty()) {
    absl::StatusOr<std::string> text = env->ReadFile(source.targets_path);
    if (!text.ok()) return absl::InvalidArgumentError(absl::StrCat("--targets: ", text.status().message()));
    absl::StatusOr<synthesis::Targets> targets = synthesis::ParseTargets(*text, source.targets_path);
    if (!targets.ok()) return targets.status();
    input.targets = std::move(*targets);
  }

  const synthesis::RecordFilter filter{source.tasks, source.since};
  absl::StatusOr<synthesis::ReadResult> read;
  std::string where;
  if (!source.files.empty()) {
    read = synthesis::ReadMeasurementFiles(env, source.files, &input.rows);
    where = absl::StrCat("--files ", absl::StrJoin(source.files, " "));
  } else if (!source.coordinator.empty()) {
    read = ReadFromCoordinator(source);
    where = absl::StrCat("the coordinator at ", source.coordinator);
  } else {
    read = synthesis::ReadRecordsFromDatabase(database_url, filter, &input.rows);
    where = "the database";
  }
  if (!read.ok()) return read.status();

  // Files are filtered here; the coordinator and the database selected already, and the same
  // test again keeps the three inputs' selections identical (e.g. a time between microseconds).
  const size_t read_count = read->records.size() + input.rows.rows.size();
  std::erase_if(read->records, [&](const v1::RunRecord& r) { return !synthesis::RecordMatches(filter, r); });
  std::erase_if(input.rows.rows, [&](const synthesis::RunRow* r) { return !synthesis::RecordMatches(filter, *r); });
  if (read->records.empty() && input.rows.rows.empty()) {
    const std::string filters = DescribeFilters(source);
    if (filters.empty()) return absl::InvalidArgumentError(absl::StrCat("no records in ", where));
    return absl::InvalidArgumentError(absl::StrCat("no records match ", filters, " in ", where, " (", read_count,
                                                   read_count == 1 ? " run" : " runs", " read)"));
  }
  // Views of the records' own strings: no copy of a fingerprint per record.
  std::set<std::string_view> named;
  for (const v1::RunRecord& r : read->records) named.insert(r.conditions_fingerprint());
  for (const synthesis::RunRow* r : input.rows.rows) named.insert(r->conditions_fingerprint);
  for (const synthesis::StoredVerdict& v : read->verdicts) named.insert(v.conditions_fingerprint);
  for (auto& [fingerprint, conditions] : read->conditions) {
    if (named.count(fingerprint) != 0) input.conditions.emplace(fingerprint, std::move(conditions));
  }
  input.records = std::move(read->records);
  input.skipped = std::move(read->skipped);
  input.verdicts = std::move(read->verdicts);
  return input;
}

absl::Status WriteGuideFiles(Env* env, const std::string& out_dir, const std::map<std::string, std::string>& files) {
  if (absl::Status s = env->CreateDirs(out_dir); !s.ok()) return s;
  auto largest = files.end();
  for (auto it = files.begin(); it != files.end(); ++it) {
    if (largest == files.end() || it->second.size() > largest->second.size()) largest = it;
  }
  if (largest == files.end()) return absl::OkStatus();
  std::future<absl::Status> big = std::async(std::launch::async, [&] {
    return env->WriteFileAtomically(out_dir + "/" + largest->first, largest->second);
  });
  absl::Status status;
  for (auto it = files.begin(); it != files.end() && status.ok(); ++it) {
    if (it != largest) status = env->WriteFileAtomically(out_dir + "/" + it->first, it->second);
  }
  absl::Status big_status = big.get();
  return status.ok() ? big_status : status;
}

}  // namespace benchfleet::cli
