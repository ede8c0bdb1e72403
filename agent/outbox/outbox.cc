#include "agent/outbox/outbox.h"

#include <cstdio>
#include <set>
#include <unordered_set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "agent/outbox/frame.h"
#include "common/string_views.h"
#include "common/proto_json.h"
#include "nlohmann/json.hpp"

namespace benchfleet::agent {
namespace {

constexpr std::string_view kSegmentPrefix = "segment-";
constexpr std::string_view kSegmentSuffix = ".log";

// Keeps the code (RESOURCE_EXHAUSTED stays RESOURCE_EXHAUSTED) and adds context.
absl::Status WithContext(const absl::Status& s, std::string_view context) {
  return absl::Status(s.code(), absl::StrCat(ToAbsl(context), ": ", s.message()));
}

bool ParseSegmentName(std::string_view name, uint64_t* number) {
  if (!name.starts_with(kSegmentPrefix) || !name.ends_with(kSegmentSuffix)) return false;
  name.remove_prefix(kSegmentPrefix.size());
  name.remove_suffix(kSegmentSuffix.size());
  return absl::SimpleAtoi(ToAbsl(name), number);
}

// One line of rejected.jsonl. The record is kept as JSON when it converts (it normally does) and
// as base64 of its bytes otherwise (e.g. invalid UTF-8, the very reason it may have been refused).
std::string RejectedLine(std::string_view run_id, std::string_view reason, absl::Time when,
                         std::string_view bytes) {
  nlohmann::ordered_json line;
  line["run_id"] = std::string(run_id);
  line["reason"] = std::string(reason);
  line["rejected_at"] = absl::FormatTime(absl::RFC3339_full, when, absl::UTCTimeZone());
  v1::RunRecord record;
  bool as_json = false;
  if (record.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    auto json = MessageToJson(record);
    if (json.ok()) {
      auto parsed = nlohmann::ordered_json::parse(*json, nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_discarded()) {
        line["record"] = std::move(parsed);
        as_json = true;
      }
    }
  }
  if (!as_json) line["record_base64"] = absl::Base64Escape(absl::string_view(bytes.data(), bytes.size()));
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

Outbox::Outbox(Env* env, std::string dir, OutboxOptions options)
    : env_(env), dir_(std::move(dir)), options_(std::move(options)) {}

Outbox::~Outbox() {
  std::lock_guard<std::mutex> w(write_mu_);
  if (active_file_) active_file_->Close().IgnoreError();
  std::lock_guard<std::mutex> l(mu_);
  if (ack_file_) ack_file_->Close().IgnoreError();
  if (rejected_file_) rejected_file_->Close().IgnoreError();
}

absl::StatusOr<std::unique_ptr<Outbox>> Outbox::Open(Env* env, std::string dir, OutboxOptions options) {
  std::unique_ptr<Outbox> outbox(new Outbox(env, std::move(dir), std::move(options)));
  if (auto s = outbox->Recover(); !s.ok()) return s;
  return outbox;
}

std::string Outbox::SegmentPath(uint64_t number) const {
  return JoinPath(dir_, absl::StrFormat("%s%020d%s", kSegmentPrefix, number, kSegmentSuffix));
}

void Outbox::Warn(std::string_view message) const {
  if (options_.warn) {
    options_.warn(message);
  } else {
    std::fprintf(stderr, "outbox %s: %.*s\n", dir_.c_str(), static_cast<int>(message.size()),
                 message.data());
  }
}

absl::Status Outbox::Recover() {
  const std::string context = absl::StrCat("outbox ", dir_);
  if (auto s = env_->CreateDirs(dir_); !s.ok()) return WithContext(s, context);
  // Two processes on one outbox would each recover the same segments and delete the other's.
  auto lock = env_->LockFile(JoinPath(dir_, "LOCK"));
  if (absl::IsFailedPrecondition(lock.status())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "outbox ", dir_, " is in use by another benchfleet-agent (", lock.status().message(),
        "); one agent process per state directory: stop it or pass another --state-dir"));
  }
  if (!lock.ok()) return WithContext(lock.status(), context);
  lock_ = std::move(*lock);
  auto names = env_->ListDir(dir_);
  if (!names.ok()) return WithContext(names.status(), context);

  const std::string ack_path = JoinPath(dir_, kOutboxAckLog);
  std::unordered_set<std::string> acked;
  std::string ack_content;
  if (auto content = env_->ReadFile(ack_path); content.ok()) {
    ack_content = std::move(*content);
    // Only whole lines count: a crash may have cut the last one short.
    size_t start = 0;
    for (size_t nl; (nl = ack_content.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (nl > start) acked.insert(ack_content.substr(start, nl - start));
    }
  } else if (!absl::IsNotFound(content.status())) {
    return WithContext(content.status(), context);
  }

  std::lock_guard<std::mutex> w(write_mu_);
  std::lock_guard<std::mutex> l(mu_);
  for (const std::string& name : *names) {
    // A temporary file left by an interrupted atomic write (acks.log compaction) is garbage.
    if (absl::EndsWith(name, ".tmp")) {
      env_->RemoveFile(JoinPath(dir_, name)).IgnoreError();
      continue;
    }
    uint64_t number = 0;
    if (!ParseSegmentName(name, &number)) continue;
    next_segment_number_ = std::max(next_segment_number_, number + 1);
    const std::string path = SegmentPath(number);
    auto content = env_->ReadFile(path);
    if (!content.ok()) return WithContext(content.status(), context);
    ++recovery_.segments;
    const ParsedSegment parsed = ParseFrames(*content);
    for (const DamagedRange& damage : parsed.damaged) {
      ++recovery_.damaged_ranges;
      recovery_.damaged_bytes += damage.bytes;
      Warn(absl::StrCat(name, ": ", damage.bytes, " damaged bytes at offset ", damage.offset,
                        " are no record (bad checksum or frame marker: damage on disk, not a crash, which "
                        "only cuts the last append short); skipped, the records after them are still sent"));
    }
    if (parsed.bad_tail_bytes > 0) {
      recovery_.torn_bytes += parsed.bad_tail_bytes;
      Warn(absl::StrCat(name, ": ", parsed.bad_tail_bytes, " bytes after offset ", parsed.valid_bytes,
                        " are not a complete record (an append cut short by a crash); ignored"));
    }
    Segment segment;
    for (const FrameRef& frame : parsed.frames) {
      v1::RunRecord record;
      if (!record.ParseFromArray(content->data() + frame.offset, static_cast<int>(frame.length))) {
        // The CRC matched, so these are the bytes we wrote; they were never a record.
        Warn(absl::StrCat(name, ": frame at offset ", frame.offset, " is not a RunRecord; ignored"));
        continue;
      }
      if (acked.contains(record.run_id())) {
        ++recovery_.acknowledged;
        segment.acked_ids.push_back(record.run_id());
        continue;
      }
      const uint64_t seq = next_seq_++;
      unacked_[seq] = Entry{record.run_id(), number, frame.offset, frame.length};
      seq_by_run_id_.emplace(record.run_id(), seq);
      ++segment.live;
      ++recovery_.records;
    }
    if (segment.live == 0) {
      if (auto s = env_->RemoveFile(path); s.ok()) {
        ++recovery_.segments_removed;
        continue;
      } else {
        Warn(absl::StrCat("could not delete acknowledged ", name, ": ", s.message()));
      }
    }
    segments_[number] = std::move(segment);
  }

  // Rewrite acks.log with only the run_ids of segments still present. This also makes the
  // deletions above durable (the atomic write syncs the directory).
  std::string compacted;
  for (const auto& [number, segment] : segments_) {
    for (const std::string& id : segment.acked_ids) absl::StrAppend(&compacted, id, "\n");
  }
  if (compacted != ack_content) {
    if (auto s = env_->WriteFileAtomically(ack_path, compacted); !s.ok()) {
      Warn(absl::StrCat("could not compact ", kOutboxAckLog, ": ", s.message()));
      compacted = ack_content;
    }
  }
  ack_log_bytes_ = compacted.size();
  ack_log_compact_at_ = std::max(options_.ack_log_compact_bytes, 2 * ack_log_bytes_);
  auto ack_file = env_->NewAppendableFile(ack_path);
  if (!ack_file.ok()) return WithContext(ack_file.status(), context);
  ack_file_ = std::move(*ack_file);
  return absl::OkStatus();
}

absl::Status Outbox::Append(const v1::RunRecord& record) {
  return AppendBatch(std::span<const v1::RunRecord>(&record, 1));
}

absl::Status Outbox::AppendBatch(std::span<const v1::RunRecord> records) {
  if (records.empty()) return absl::OkStatus();
  // Serialize before taking any lock.
  std::string frames;
  std::vector<std::pair<size_t, uint32_t>> placement;  // offset in frames, payload length
  placement.reserve(records.size());
  std::string payload;
  for (const v1::RunRecord& record : records) {
    payload.clear();
    if (!record.SerializeToString(&payload)) {
      return absl::InvalidArgumentError(
          absl::StrCat("outbox: run ", record.run_id(), " could not be serialized; nothing queued"));
    }
    if (payload.empty() || payload.size() > kMaxFramePayloadBytes) {
      return absl::InvalidArgumentError(absl::StrCat("outbox: run ", record.run_id(), " is ",
                                                     payload.size(), " bytes serialized; nothing queued"));
    }
    placement.emplace_back(frames.size() + kFrameHeaderBytes, static_cast<uint32_t>(payload.size()));
    AppendFrame(payload, &frames);
  }

  std::function<void()> listener;
  {
    std::lock_guard<std::mutex> w(write_mu_);
    if (!active_file_) {
      if (auto s = OpenNewSegment(); !s.ok()) {
        return WithContext(s, absl::StrCat("outbox ", dir_, ": ", records.size(), " record(s) not queued"));
      }
    }
    absl::Status s = active_file_->Append(frames);
    if (s.ok()) s = active_file_->Sync();
    if (!s.ok()) {
      // Part of the frames may be in the file: never append behind them.
      AbandonActiveSegment();
      return WithContext(s, absl::StrCat("outbox ", dir_, ": ", records.size(), " record(s) not queued"));
    }
    const uint64_t base = active_file_bytes_;
    active_file_bytes_ += frames.size();
    {
      std::lock_guard<std::mutex> l(mu_);
      active_content_ += frames;
      Segment& segment = segments_[active_segment_];
      for (size_t i = 0; i < records.size(); ++i) {
        const uint64_t seq = next_seq_++;
        unacked_[seq] = Entry{records[i].run_id(), active_segment_, base + placement[i].first,
                              placement[i].second};
        seq_by_run_id_.emplace(records[i].run_id(), seq);
        ++segment.live;
      }
      listener = listener_;
    }
    if (active_file_bytes_ >= options_.segment_bytes) CloseActiveSegment();
  }
  if (listener) listener();
  return absl::OkStatus();
}

absl::Status Outbox::OpenNewSegment() {
  const uint64_t number = next_segment_number_++;
  const std::string path = SegmentPath(number);
  auto file = env_->NewAppendableFile(path);
  if (!file.ok()) return file.status();
  absl::Status s = (*file)->Append(kSegmentMagic);
  if (s.ok()) s = (*file)->Sync();
  // The new file's directory entry must be durable too, or a crash loses the whole segment.
  if (s.ok()) s = env_->SyncDir(dir_);
  if (!s.ok()) {
    (*file)->Close().IgnoreError();
    env_->RemoveFile(path).IgnoreError();
    return s;
  }
  active_file_ = std::move(*file);
  active_file_bytes_ = kSegmentMagic.size();
  std::lock_guard<std::mutex> l(mu_);
  segments_[number] = Segment{};
  active_segment_ = number;
  active_content_.assign(kSegmentMagic);
  return absl::OkStatus();
}

void Outbox::RetireActiveContent(uint64_t number) {
  if (segments_[number].live == 0) {
    RemoveSegment(number);
  } else {
    cached_segment_ = number;
    cached_content_ = std::move(active_content_);
  }
  active_content_.clear();
}

void Outbox::CloseActiveSegment() {
  if (auto s = active_file_->Close(); !s.ok()) Warn(absl::StrCat("closing segment: ", s.message()));
  active_file_.reset();
  std::lock_guard<std::mutex> l(mu_);
  const uint64_t number = active_segment_;
  active_segment_ = 0;
  RetireActiveContent(number);
}

void Outbox::AbandonActiveSegment() {
  // Cut the failed append off, so that records reported as not queued do not come back after a
  // restart. ftruncate needs no free space, so this works on a full disk; rewriting the segment
  // is the fallback for a file that cannot be truncated. When both fail the reader sees a torn
  // tail, or complete frames that get sent after a restart (harmless: the coordinator stores a
  // run_id once).
  absl::Status cut = active_file_->Truncate(active_file_bytes_);
  if (cut.ok()) cut = active_file_->Sync();
  active_file_->Close().IgnoreError();
  active_file_.reset();
  std::lock_guard<std::mutex> l(mu_);
  const uint64_t number = active_segment_;
  active_segment_ = 0;
  if (!cut.ok()) {
    if (auto s = env_->WriteFileAtomically(SegmentPath(number), active_content_); !s.ok()) {
      Warn(absl::StrCat("could not cut a failed append off segment ", number, ": ", cut.message(), "; ",
                        s.message()));
    }
  }
  RetireActiveContent(number);
}

absl::StatusOr<std::string> Outbox::ReadEntry(const Entry& entry) {
  const std::string* content = &active_content_;
  if (entry.segment != active_segment_) {
    if (cached_segment_ != entry.segment) {
      auto read = env_->ReadFile(SegmentPath(entry.segment));
      if (!read.ok()) return read.status();
      cached_segment_ = entry.segment;
      cached_content_ = std::move(*read);
    }
    content = &cached_content_;
  }
  if (entry.offset + entry.length > content->size()) {
    return absl::DataLossError(absl::StrCat("segment ", entry.segment, " is shorter than its index"));
  }
  return content->substr(entry.offset, entry.length);
}

std::vector<PendingRecord> Outbox::Pending(size_t max_records, size_t max_bytes, uint64_t after_seq) {
  std::vector<PendingRecord> out;
  std::vector<uint64_t> lost;
  std::lock_guard<std::mutex> l(mu_);
  size_t bytes = 0;
  for (auto it = unacked_.upper_bound(after_seq); it != unacked_.end() && out.size() < max_records; ++it) {
    auto payload = ReadEntry(it->second);
    if (!payload.ok()) {
      // Someone removed or cut the file under us: these records cannot be sent, ever.
      Warn(absl::StrCat("run ", it->second.run_id, " is lost: ", payload.status().message()));
      lost.push_back(it->first);
      continue;
    }
    if (!out.empty() && bytes + payload->size() > max_bytes) break;
    bytes += payload->size();
    out.push_back(PendingRecord{it->first, it->second.run_id, std::move(*payload)});
  }
  for (uint64_t seq : lost) {
    const Entry& entry = unacked_[seq];
    auto range = seq_by_run_id_.equal_range(entry.run_id);
    for (auto r = range.first; r != range.second; ++r) {
      if (r->second == seq) {
        seq_by_run_id_.erase(r);
        break;
      }
    }
    --segments_[entry.segment].live;
    unacked_.erase(seq);
  }
  return out;
}

absl::Status Outbox::Ack(const std::vector<std::string>& run_ids) {
  std::lock_guard<std::mutex> l(mu_);
  return AckLocked(run_ids);
}

absl::Status Outbox::AckLocked(const std::vector<std::string>& run_ids) {
  std::string lines;
  std::set<uint64_t> touched;
  for (const std::string& run_id : run_ids) {
    auto range = seq_by_run_id_.equal_range(run_id);
    if (range.first == range.second) continue;
    for (auto it = range.first; it != range.second; ++it) {
      auto entry = unacked_.find(it->second);
      Segment& segment = segments_[entry->second.segment];
      --segment.live;
      segment.acked_ids.push_back(run_id);
      touched.insert(entry->second.segment);
      unacked_.erase(entry);
    }
    seq_by_run_id_.erase(range.first, range.second);
    absl::StrAppend(&lines, run_id, "\n");
  }
  if (lines.empty()) return absl::OkStatus();
  absl::Status status = ack_file_->Append(lines);
  if (status.ok()) {
    ack_log_bytes_ += lines.size();
  } else {
    status = WithContext(status, absl::StrCat("outbox ", dir_, ": acknowledged records dropped, but ",
                                              kOutboxAckLog, " not written (they may be re-sent after a restart)"));
  }
  for (uint64_t number : touched) {
    if (number != active_segment_ && segments_[number].live == 0) RemoveSegment(number);
  }
  MaybeCompactAckLog();
  return status;
}

void Outbox::RemoveSegment(uint64_t number) {
  if (auto s = env_->RemoveFile(SegmentPath(number)); !s.ok()) {
    // Kept in segments_ so that compaction keeps its run_ids in acks.log; the next Open()
    // deletes it.
    Warn(absl::StrCat("could not delete acknowledged segment ", number, ": ", s.message()));
    return;
  }
  segments_.erase(number);
  if (cached_segment_ == number) {
    cached_segment_ = 0;
    cached_content_.clear();
  }
}

void Outbox::MaybeCompactAckLog() {
  if (ack_log_bytes_ < ack_log_compact_at_) return;
  std::string compacted;
  for (const auto& [number, segment] : segments_) {
    for (const std::string& id : segment.acked_ids) absl::StrAppend(&compacted, id, "\n");
  }
  const std::string path = JoinPath(dir_, kOutboxAckLog);
  ack_file_->Close().IgnoreError();
  if (auto s = env_->WriteFileAtomically(path, compacted); s.ok()) {
    ack_log_bytes_ = compacted.size();
  } else {
    Warn(absl::StrCat("could not compact ", kOutboxAckLog, ": ", s.message()));
  }
  ack_log_compact_at_ = std::max(options_.ack_log_compact_bytes, 2 * ack_log_bytes_);
  auto file = env_->NewAppendableFile(path);
  if (file.ok()) {
    ack_file_ = std::move(*file);
  } else {
    // Keep a file object that fails, so later acks report the problem instead of crashing.
    Warn(absl::StrCat("could not reopen ", kOutboxAckLog, ": ", file.status().message()));
    struct BrokenFile : WritableFile {
      absl::Status status;
      explicit BrokenFile(absl::Status s) : status(std::move(s)) {}
      absl::Status Append(std::string_view) override { return status; }
      absl::Status Sync() override { return status; }
      absl::Status Close() override { return absl::OkStatus(); }
    };
    ack_file_ = std::make_unique<BrokenFile>(file.status());
  }
}

absl::Status Outbox::Reject(const std::string& run_id, const std::string& reason) {
  std::lock_guard<std::mutex> l(mu_);
  auto range = seq_by_run_id_.equal_range(run_id);
  if (range.first == range.second) {
    return absl::NotFoundError(absl::StrCat("outbox ", dir_, " has no queued run ", run_id));
  }
  auto bytes = ReadEntry(unacked_[range.first->second]);
  if (!bytes.ok()) return bytes.status();
  const std::string path = JoinPath(dir_, kOutboxRejectedFile);
  if (!rejected_file_) {
    auto file = env_->NewAppendableFile(path);
    if (!file.ok()) return WithContext(file.status(), "rejected run kept in the outbox");
    rejected_file_ = std::move(*file);
  }
  std::string line = RejectedLine(run_id, reason, env_->clock().Now(), *bytes);
  // After a failed write a partial line may end the file: begin on a fresh line.
  if (rejected_needs_newline_) line.insert(0, "\n");
  absl::Status s = rejected_file_->Append(line);
  if (s.ok()) s = rejected_file_->Sync();
  if (!s.ok()) {
    rejected_file_.reset();
    rejected_needs_newline_ = true;
    return WithContext(s, "rejected run kept in the outbox");
  }
  rejected_needs_newline_ = false;
  return AckLocked({run_id});
}

size_t Outbox::depth() {
  std::lock_guard<std::mutex> l(mu_);
  return unacked_.size();
}

void Outbox::SetAppendListener(std::function<void()> listener) {
  std::lock_guard<std::mutex> l(mu_);
  listener_ = std::move(listener);
}

}  // namespace benchfleet::agent
