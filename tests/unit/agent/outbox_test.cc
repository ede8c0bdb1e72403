#include "agent/outbox/outbox.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "absl/strings/str_cat.h"

#include "agent/outbox/frame.h"
#include "common/hashing.h"
#include "nlohmann/json.hpp"
#include "tests/unit/agent/fault_injecting_env.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::Fault;
using testing::FaultInjectingEnv;
using testing::FaultOp;
using testing::ScopedTempDir;

v1::RunRecord MakeRecord(std::string run_id = NewUuid()) {
  v1::RunRecord record;
  record.set_run_id(std::move(run_id));
  record.set_task("llama-qwen2.5-3b-q4km");
  record.set_phase(v1::PHASE_WARM);
  record.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  return record;
}

std::vector<std::string> RunIds(const std::vector<PendingRecord>& pending) {
  std::vector<std::string> ids;
  for (const auto& p : pending) ids.push_back(p.run_id);
  return ids;
}

std::vector<std::string> SegmentFiles(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename();
    if (name.starts_with("segment-")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

class OutboxTest : public ::testing::Test {
 protected:
  std::unique_ptr<Outbox> Open(OutboxOptions options = {}) {
    options.warn = [this](std::string_view w) { warnings_.emplace_back(w); };
    auto outbox = Outbox::Open(&env_, dir_, std::move(options));
    EXPECT_TRUE(outbox.ok()) << outbox.status();
    return outbox.ok() ? std::move(*outbox) : nullptr;
  }

  ScopedTempDir tmp_;
  std::string dir_ = tmp_.path() + "/outbox";
  FaultInjectingEnv env_{Env::Default()};
  std::vector<std::string> warnings_;
};

TEST(FrameTest, Crc32MatchesTheStandardCheckValue) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32(""), 0u);
}

TEST(FrameTest, ParseFramesStopsAtATornTail) {
  std::string content(kSegmentMagic);
  AppendFrame("first", &content);
  AppendFrame("second", &content);
  const size_t clean = content.size();
  std::string torn;
  AppendFrame("third", &torn);
  content += torn.substr(0, 10);  // header and 2 of 5 payload bytes

  const ParsedSegment parsed = ParseFrames(content);
  EXPECT_TRUE(parsed.has_header);
  ASSERT_EQ(parsed.frames.size(), 2u);
  EXPECT_EQ(content.substr(parsed.frames[1].offset, parsed.frames[1].length), "second");
  EXPECT_EQ(parsed.valid_bytes, clean);
  EXPECT_EQ(parsed.bad_tail_bytes, 10u);
}

TEST(FrameTest, ParseFramesWithoutHeaderHasNoFrames) {
  const ParsedSegment parsed = ParseFrames("BFOU");
  EXPECT_FALSE(parsed.has_header);
  EXPECT_TRUE(parsed.frames.empty());
  EXPECT_EQ(parsed.bad_tail_bytes, 4u);
}

TEST_F(OutboxTest, AppendThenPendingThenAck) {
  auto outbox = Open();
  const auto a = MakeRecord(), b = MakeRecord(), c = MakeRecord();
  ASSERT_TRUE(outbox->Append(a).ok());
  ASSERT_TRUE(outbox->AppendBatch(std::vector<v1::RunRecord>{b, c}).ok());
  EXPECT_EQ(outbox->depth(), 3u);

  const auto pending = outbox->Pending(10);
  EXPECT_THAT(RunIds(pending), ElementsAre(a.run_id(), b.run_id(), c.run_id()));
  v1::RunRecord parsed;
  ASSERT_TRUE(parsed.ParseFromString(pending[1].bytes));
  EXPECT_EQ(parsed.run_id(), b.run_id());
  EXPECT_EQ(parsed.task(), "llama-qwen2.5-3b-q4km");

  ASSERT_TRUE(outbox->Ack({a.run_id(), c.run_id(), "not-in-the-outbox"}).ok());
  EXPECT_EQ(outbox->depth(), 1u);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(b.run_id()));
}

TEST_F(OutboxTest, PendingHonoursCursorCountAndBytes) {
  auto outbox = Open();
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 5; ++i) records.push_back(MakeRecord());
  ASSERT_TRUE(outbox->AppendBatch(records).ok());

  const auto first_two = outbox->Pending(2);
  EXPECT_THAT(RunIds(first_two), ElementsAre(records[0].run_id(), records[1].run_id()));
  const auto after = outbox->Pending(10, SIZE_MAX, first_two.back().seq);
  EXPECT_THAT(RunIds(after), ElementsAre(records[2].run_id(), records[3].run_id(), records[4].run_id()));

  const size_t one = first_two[0].bytes.size();
  EXPECT_EQ(outbox->Pending(10, 2 * one).size(), 2u);
  // A record larger than the byte budget still goes, alone.
  EXPECT_EQ(outbox->Pending(10, 1).size(), 1u);
}

TEST_F(OutboxTest, RestartResendsEverythingUnacknowledged) {
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 5; ++i) records.push_back(MakeRecord());
  {
    auto outbox = Open();
    ASSERT_TRUE(outbox->AppendBatch(records).ok());
    ASSERT_TRUE(outbox->Ack({records[0].run_id(), records[3].run_id()}).ok());
  }
  auto outbox = Open();
  EXPECT_EQ(outbox->recovery().segments, 1u);
  EXPECT_EQ(outbox->recovery().records, 3u);
  EXPECT_EQ(outbox->recovery().acknowledged, 2u);
  EXPECT_EQ(outbox->recovery().torn_bytes, 0u);
  EXPECT_EQ(outbox->depth(), 3u);
  EXPECT_THAT(RunIds(outbox->Pending(10)),
              ElementsAre(records[1].run_id(), records[2].run_id(), records[4].run_id()));
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(OutboxTest, AcknowledgedRecordsAreNotResentAfterRestart) {
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 4; ++i) records.push_back(MakeRecord());
  {
    auto outbox = Open();
    ASSERT_TRUE(outbox->AppendBatch(records).ok());
    ASSERT_TRUE(outbox->Ack({records[0].run_id(), records[1].run_id(), records[2].run_id(), records[3].run_id()}).ok());
    EXPECT_EQ(outbox->depth(), 0u);
  }
  auto outbox = Open();
  EXPECT_EQ(outbox->depth(), 0u);
  EXPECT_EQ(outbox->recovery().acknowledged, 4u);
  EXPECT_EQ(outbox->recovery().segments_removed, 1u);
  EXPECT_TRUE(SegmentFiles(dir_).empty());
  EXPECT_EQ(ReadAll(dir_ + "/acks.log"), "");  // compacted: nothing left to remember
}

TEST_F(OutboxTest, TornTailFromACrashIsIgnored) {
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 3; ++i) records.push_back(MakeRecord());
  {
    auto outbox = Open();
    ASSERT_TRUE(outbox->AppendBatch(records).ok());
  }
  // The crash: a fourth append got only 13 bytes of its frame to disk.
  const std::string segment = dir_ + "/" + SegmentFiles(dir_).at(0);
  std::string frame;
  AppendFrame(MakeRecord().SerializeAsString(), &frame);
  WriteAll(segment, ReadAll(segment) + frame.substr(0, 13));

  auto outbox = Open();
  EXPECT_EQ(outbox->recovery().records, 3u);
  EXPECT_EQ(outbox->recovery().torn_bytes, 13u);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], HasSubstr("13 bytes after offset"));
  EXPECT_THAT(warnings_[0], HasSubstr("are not a complete record (an append cut short by a crash); ignored"));

  // New records go to a new segment, never behind the torn bytes.
  const auto d = MakeRecord();
  ASSERT_TRUE(outbox->Append(d).ok());
  EXPECT_EQ(SegmentFiles(dir_).size(), 2u);
  outbox.reset();
  outbox = Open();
  EXPECT_EQ(outbox->recovery().records, 4u);
  EXPECT_THAT(RunIds(outbox->Pending(10)),
              ElementsAre(records[0].run_id(), records[1].run_id(), records[2].run_id(), d.run_id()));
}

TEST_F(OutboxTest, DamagedRecordEndsItsSegment) {
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 3; ++i) records.push_back(MakeRecord());
  {
    auto outbox = Open();
    ASSERT_TRUE(outbox->AppendBatch(records).ok());
  }
  const std::string segment = dir_ + "/" + SegmentFiles(dir_).at(0);
  std::string content = ReadAll(segment);
  const size_t frame_size = (content.size() - kSegmentMagic.size()) / 3;
  content[kSegmentMagic.size() + frame_size + kFrameHeaderBytes + 2] ^= 0x55;  // second payload
  WriteAll(segment, content);

  auto outbox = Open();
  EXPECT_EQ(outbox->recovery().records, 1u);
  EXPECT_EQ(outbox->recovery().torn_bytes, 2 * frame_size);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(records[0].run_id()));
}

TEST_F(OutboxTest, DiskFullOnAppendQueuesNothing) {
  auto outbox = Open();
  const auto a = MakeRecord(), b = MakeRecord(), c = MakeRecord();
  ASSERT_TRUE(outbox->Append(a).ok());
  env_.Inject(FaultOp::kAppend, Fault{.path_contains = "segment-"});

  const absl::Status s = outbox->Append(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "outbox " + dir_ + ": 1 record(s) not queued: No space left on device (injected)");
  EXPECT_EQ(outbox->depth(), 1u);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(a.run_id()));

  env_.Clear();
  ASSERT_TRUE(outbox->Append(c).ok());
  EXPECT_EQ(outbox->depth(), 2u);
  outbox.reset();
  outbox = Open();
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(a.run_id(), c.run_id()));
  EXPECT_EQ(outbox->recovery().torn_bytes, 0u);
}

TEST_F(OutboxTest, TornWriteIsCutOffSoTheFailedRecordNeverComesBack) {
  auto outbox = Open();
  const auto a = MakeRecord(), b = MakeRecord(), c = MakeRecord();
  ASSERT_TRUE(outbox->Append(a).ok());
  env_.Inject(FaultOp::kAppend, Fault{.path_contains = "segment-", .partial_bytes = 7, .times = 1});
  EXPECT_EQ(outbox->AppendBatch(std::vector<v1::RunRecord>{b, c}).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(outbox->depth(), 1u);
  outbox.reset();

  outbox = Open();
  EXPECT_EQ(outbox->recovery().torn_bytes, 0u);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(a.run_id()));
}

TEST_F(OutboxTest, WhenTheCutFailsTooTheTornBytesAreSkippedAtOpen) {
  auto outbox = Open();
  const auto a = MakeRecord();
  ASSERT_TRUE(outbox->Append(a).ok());
  env_.Inject(FaultOp::kAppend, Fault{.path_contains = "segment-", .partial_bytes = 7, .times = 1});
  env_.Inject(FaultOp::kAtomicWrite, Fault{.path_contains = "segment-"});
  EXPECT_EQ(outbox->Append(MakeRecord()).code(), absl::StatusCode::kResourceExhausted);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], HasSubstr("could not cut a failed append off segment 1"));
  env_.Clear();
  outbox.reset();

  outbox = Open();
  EXPECT_EQ(outbox->recovery().torn_bytes, 7u);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(a.run_id()));
}

TEST_F(OutboxTest, FailedSyncQueuesNothing) {
  auto outbox = Open();
  const auto a = MakeRecord(), b = MakeRecord();
  ASSERT_TRUE(outbox->Append(a).ok());
  env_.Inject(FaultOp::kSync, Fault{.path_contains = "segment-", .status = absl::InternalError("fdatasync: EIO"), .times = 1});
  const absl::Status s = outbox->Append(b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), "outbox " + dir_ + ": 1 record(s) not queued: fdatasync: EIO");
  EXPECT_EQ(outbox->depth(), 1u);
  outbox.reset();
  outbox = Open();
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(a.run_id()));
}

TEST_F(OutboxTest, OneFsyncPerBatch) {
  auto outbox = Open();
  std::vector<v1::RunRecord> first(100), second(100);
  for (auto& r : first) r = MakeRecord();
  for (auto& r : second) r = MakeRecord();
  ASSERT_TRUE(outbox->AppendBatch(first).ok());
  EXPECT_EQ(env_.syncs("segment-"), 2);  // the new segment's header, then the batch
  ASSERT_TRUE(outbox->AppendBatch(second).ok());
  EXPECT_EQ(env_.syncs("segment-"), 3);
  EXPECT_EQ(outbox->depth(), 200u);
}

TEST_F(OutboxTest, RotatesSegmentsAndDeletesThemWhenAcknowledged) {
  auto outbox = Open({.segment_bytes = 1024});
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 60; ++i) {
    records.push_back(MakeRecord());
    ASSERT_TRUE(outbox->Append(records.back()).ok());
  }
  const size_t segments = SegmentFiles(dir_).size();
  ASSERT_GE(segments, 3u);

  std::vector<std::string> all;
  for (const auto& r : records) all.push_back(r.run_id());
  ASSERT_TRUE(outbox->Ack(all).ok());
  EXPECT_EQ(outbox->depth(), 0u);
  // Every closed segment is gone; only the active one (if any) remains until rotation or restart.
  EXPECT_LE(SegmentFiles(dir_).size(), 1u);
  outbox.reset();
  outbox = Open();
  EXPECT_TRUE(SegmentFiles(dir_).empty());
  EXPECT_EQ(outbox->depth(), 0u);
}

TEST_F(OutboxTest, PendingReadsClosedSegmentsBack) {
  auto outbox = Open({.segment_bytes = 512});
  std::vector<std::string> ids;
  for (int i = 0; i < 30; ++i) {
    auto r = MakeRecord();
    ids.push_back(r.run_id());
    ASSERT_TRUE(outbox->Append(r).ok());
  }
  EXPECT_THAT(RunIds(outbox->Pending(100)), ElementsAreArray(ids));
}

TEST_F(OutboxTest, SegmentThatCannotBeDeletedIsDeletedAtTheNextOpen) {
  auto outbox = Open({.segment_bytes = 256});
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) {
    auto r = MakeRecord();
    ids.push_back(r.run_id());
    ASSERT_TRUE(outbox->Append(r).ok());
  }
  env_.Inject(FaultOp::kRemove, Fault{.path_contains = "segment-", .status = absl::PermissionDeniedError("unlink: EPERM")});
  EXPECT_TRUE(outbox->Ack(ids).ok());
  EXPECT_EQ(outbox->depth(), 0u);
  EXPECT_FALSE(warnings_.empty());
  env_.Clear();
  outbox.reset();

  outbox = Open();
  EXPECT_EQ(outbox->depth(), 0u);
  EXPECT_EQ(outbox->recovery().acknowledged, 10u);
  EXPECT_TRUE(SegmentFiles(dir_).empty());
}

TEST_F(OutboxTest, AckLogFailureStillDropsTheRecordsAndSaysSo) {
  auto outbox = Open();
  const auto a = MakeRecord();
  ASSERT_TRUE(outbox->Append(a).ok());
  env_.Inject(FaultOp::kAppend, Fault{.path_contains = "acks.log"});
  const absl::Status s = outbox->Ack({a.run_id()});
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("acks.log not written (they may be re-sent after a restart)"));
  EXPECT_EQ(outbox->depth(), 0u);
}

TEST_F(OutboxTest, AckLogIsCompactedAsItGrows) {
  auto outbox = Open({.segment_bytes = 2048, .ack_log_compact_bytes = 400});
  for (int i = 0; i < 100; ++i) {
    auto r = MakeRecord();
    ASSERT_TRUE(outbox->Append(r).ok());
    ASSERT_TRUE(outbox->Ack({r.run_id()}).ok());
  }
  // Only ids of the segment still on disk are kept: far less than 100 lines of 37 bytes.
  EXPECT_LT(ReadAll(dir_ + "/acks.log").size(), 800u);
  outbox.reset();
  outbox = Open();
  EXPECT_EQ(outbox->depth(), 0u);
}

TEST_F(OutboxTest, RejectMovesTheRecordToRejectedJsonl) {
  auto outbox = Open();
  const auto a = MakeRecord(), b = MakeRecord();
  ASSERT_TRUE(outbox->AppendBatch(std::vector<v1::RunRecord>{a, b}).ok());
  ASSERT_TRUE(outbox->Reject(a.run_id(), "phase 7 is not a known phase").ok());
  EXPECT_EQ(outbox->depth(), 1u);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(b.run_id()));

  const std::string text = ReadAll(dir_ + "/rejected.jsonl");
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  const auto line = nlohmann::json::parse(text);
  EXPECT_EQ(line["run_id"], a.run_id());
  EXPECT_EQ(line["reason"], "phase 7 is not a known phase");
  EXPECT_EQ(line["record"]["run_id"], a.run_id());
  EXPECT_EQ(line["record"]["task"], "llama-qwen2.5-3b-q4km");

  outbox.reset();
  outbox = Open();
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(b.run_id()));
}

TEST_F(OutboxTest, RejectOfAnUnknownRunIsNotFound) {
  auto outbox = Open();
  const absl::Status s = outbox->Reject("nope", "why");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "outbox " + dir_ + " has no queued run nope");
}

TEST_F(OutboxTest, RejectThatCannotBeWrittenKeepsTheRecordQueued) {
  auto outbox = Open();
  const auto a = MakeRecord();
  ASSERT_TRUE(outbox->Append(a).ok());
  env_.Inject(FaultOp::kAppend, Fault{.path_contains = "rejected.jsonl", .times = 1});
  const absl::Status s = outbox->Reject(a.run_id(), "bad");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "rejected run kept in the outbox: No space left on device (injected)");
  EXPECT_EQ(outbox->depth(), 1u);
  ASSERT_TRUE(outbox->Reject(a.run_id(), "bad").ok());
  EXPECT_EQ(outbox->depth(), 0u);
}

TEST_F(OutboxTest, ListenerHearsEveryAppend) {
  auto outbox = Open();
  int calls = 0;
  outbox->SetAppendListener([&] { ++calls; });
  ASSERT_TRUE(outbox->Append(MakeRecord()).ok());
  ASSERT_TRUE(outbox->AppendBatch(std::vector<v1::RunRecord>{MakeRecord(), MakeRecord()}).ok());
  EXPECT_EQ(calls, 2);
  outbox->SetAppendListener({});
  ASSERT_TRUE(outbox->Append(MakeRecord()).ok());
  EXPECT_EQ(calls, 2);
}

TEST_F(OutboxTest, OneProcessAtATime) {
  auto outbox = Open();
  auto second = Outbox::Open(&env_, dir_);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            absl::StrCat("outbox ", dir_, " is in use by another benchfleet-agent (pid ", getpid(),
                         "); one agent process per state directory: stop it or pass another --state-dir"));
  outbox.reset();
  EXPECT_TRUE(Outbox::Open(&env_, dir_).ok());
}

TEST_F(OutboxTest, ProducersAndAckerInParallelLoseNothing) {
  auto outbox = Open({.segment_bytes = 4096});
  constexpr int kProducers = 4, kPerProducer = 250;
  std::atomic<int> acked{0};
  std::atomic<bool> done{false};
  std::thread acker([&] {
    uint64_t cursor = 0;
    while (!done || outbox->depth() > 0) {
      auto pending = outbox->Pending(32, SIZE_MAX, cursor);
      if (pending.empty()) {
        std::this_thread::yield();
        continue;
      }
      cursor = pending.back().seq;
      ASSERT_TRUE(outbox->Ack(RunIds(pending)).ok());
      acked += static_cast<int>(pending.size());
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&] {
      for (int i = 0; i < kPerProducer; ++i) ASSERT_TRUE(outbox->Append(MakeRecord()).ok());
    });
  }
  for (auto& t : producers) t.join();
  done = true;
  acker.join();
  EXPECT_EQ(acked.load(), kProducers * kPerProducer);
  EXPECT_EQ(outbox->depth(), 0u);
  outbox.reset();
  outbox = Open();
  EXPECT_EQ(outbox->depth(), 0u);
}

}  // namespace
}  // namespace benchfleet::agent
