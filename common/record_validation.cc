#include "common/record_validation.h"

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

}  // namespace

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
  return absl::OkStatus();
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
