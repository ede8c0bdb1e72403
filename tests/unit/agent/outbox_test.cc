#include "agent/outbox/outbox.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

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

TEST(FrameTest, ParseFramesResynchronisesAfterDamage) {
  std::string content(kSegmentMagic);
  AppendFrame("first", &content);
  const size_t damage_at = content.size();
  content += "sixteen garbage!";
  AppendFrame("second", &content);
  AppendFrame("third", &content);

  const ParsedSegment parsed = ParseFrames(content);
  EXPECT_EQ(parsed.version, 2);
  ASSERT_EQ(parsed.frames.size(), 3u);
  EXPECT_EQ(content.substr(parsed.frames[1].offset, parsed.frames[1].length), "second");
  ASSERT_EQ(parsed.damaged.size(), 1u);
  EXPECT_EQ(parsed.damaged[0].offset, damage_at);
  EXPECT_EQ(parsed.damaged[0].bytes, 16u);
  EXPECT_EQ(parsed.bad_tail_bytes, 0u);
  EXPECT_EQ(parsed.valid_bytes, content.size());
}

TEST(FrameTest, ADamagedLengthCostsOnlyItsFrame) {
  std::string content(kSegmentMagic);
  AppendFrame("first", &content);
  const size_t second_at = content.size();
  AppendFrame("second", &content);
  AppendFrame("third", &content);
  content[second_at + 4] = 3;  // "second" claims 3 bytes: its checksum covers the length too

  const ParsedSegment parsed = ParseFrames(content);
  ASSERT_EQ(parsed.frames.size(), 2u);
  EXPECT_EQ(content.substr(parsed.frames[1].offset, parsed.frames[1].length), "third");
  ASSERT_EQ(parsed.damaged.size(), 1u);
  EXPECT_EQ(parsed.damaged[0].offset, second_at);
  EXPECT_EQ(parsed.damaged[0].bytes, kFrameHeaderBytes + 6);
}

TEST(FrameTest, EarlierFormatIsReadAndEndsAtItsFirstBadFrame) {
  std::string content(kSegmentMagicV1);
  AppendFrameV1("first", &content);
  const size_t second_at = content.size();
  AppendFrameV1("second", &content);
  AppendFrameV1("third", &content);
  EXPECT_EQ(ParseFrames(content).frames.size(), 3u);
  content[second_at + kFrameHeaderBytesV1] ^= 0x55;

  const ParsedSegment parsed = ParseFrames(content);
  EXPECT_EQ(parsed.version, 1);
  ASSERT_EQ(parsed.frames.size(), 1u);
  EXPECT_EQ(content.substr(parsed.frames[0].offset, parsed.frames[0].length), "first");
  EXPECT_EQ(parsed.valid_bytes, second_at);
  EXPECT_EQ(parsed.bad_tail_bytes, content.size() - second_at);
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

TEST_F(OutboxTest, DamagedRecordIsSkippedAndTheRecordsAfterItAreSent) {
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 3; ++i) records.push_back(MakeRecord());
  {
    auto outbox = Open();
    ASSERT_TRUE(outbox->AppendBatch(records).ok());
  }
  const std::string name = SegmentFiles(dir_).at(0);
  const std::string segment = dir_ + "/" + name;
  std::string content = ReadAll(segment);
  const size_t frame_size = (content.size() - kSegmentMagic.size()) / 3;
  const size_t second = kSegmentMagic.size() + frame_size;
  content[second + kFrameHeaderBytes + 2] ^= 0x55;  // second payload
  WriteAll(segment, content);

  auto outbox = Open();
  EXPECT_EQ(outbox->recovery().records, 2u);
  EXPECT_EQ(outbox->recovery().torn_bytes, 0u);
  EXPECT_EQ(outbox->recovery().damaged_ranges, 1u);
  EXPECT_EQ(outbox->recovery().damaged_bytes, frame_size);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(records[0].run_id(), records[2].run_id()));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0], absl::StrCat(name, ": ", frame_size, " damaged bytes at offset ", second,
                                       " are no record (bad checksum or frame marker: damage on disk, not a "
                                       "crash, which only cuts the last append short); skipped, the records "
                                       "after them are still sent"));
}

// Issue 19, case 7: 16 garbage bytes at offset 200,000 of a 3.5 MB segment of 5,000 fsync'd
// records once cost the 4,716 records after them, and the segment was deleted once the 284
// before the damage were acknowledged.
TEST_F(OutboxTest, SixteenGarbageBytesMidSegmentCostOneRecordOfFiveThousand) {
  constexpr int kRecords = 5000;
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < kRecords; ++i) {
    records.push_back(MakeRecord());
    records.back().mutable_status()->set_message(std::string(600, 'm'));  // ~700-byte records
  }
  {
    auto outbox = Open();
    for (int i = 0; i < kRecords; i += 500) {
      ASSERT_TRUE(outbox->AppendBatch(std::span<const v1::RunRecord>(records.data() + i, 500)).ok());
    }
  }
  ASSERT_EQ(SegmentFiles(dir_).size(), 1u);
  const std::string name = SegmentFiles(dir_).at(0);
  const std::string segment = dir_ + "/" + name;
  std::string content = ReadAll(segment);
  const size_t frame_size = (content.size() - kSegmentMagic.size()) / kRecords;
  ASSERT_EQ(content.size(), kSegmentMagic.size() + kRecords * frame_size);  // every frame the same size
  EXPECT_GT(content.size(), 3'400'000u);
  constexpr size_t kDamageAt = 200'000;
  const size_t hit = (kDamageAt - kSegmentMagic.size()) / frame_size;
  ASSERT_EQ(hit, (kDamageAt + 15 - kSegmentMagic.size()) / frame_size) << "the damage straddles two records";
  for (size_t i = kDamageAt; i < kDamageAt + 16; ++i) content[i] = static_cast<char>(content[i] ^ 0xA5);
  WriteAll(segment, content);

  auto outbox = Open();
  EXPECT_EQ(outbox->recovery().records, static_cast<size_t>(kRecords - 1));
  EXPECT_EQ(outbox->recovery().damaged_ranges, 1u);
  EXPECT_EQ(outbox->recovery().damaged_bytes, frame_size);
  EXPECT_EQ(outbox->recovery().torn_bytes, 0u);
  ASSERT_EQ(warnings_.size(), 1u);
  const size_t hit_offset = kSegmentMagic.size() + hit * frame_size;
  EXPECT_THAT(warnings_[0], HasSubstr(absl::StrCat(name, ": ", frame_size, " damaged bytes at offset ",
                                                   hit_offset, " are no record")));
  std::vector<std::string> expected;
  for (int i = 0; i < kRecords; ++i) {
    if (static_cast<size_t>(i) != hit) expected.push_back(records[i].run_id());
  }
  const std::vector<std::string> sent = RunIds(outbox->Pending(kRecords));
  EXPECT_EQ(sent.size(), 4999u);
  EXPECT_EQ(sent, expected);

  // Acknowledging those before the damage keeps the segment: 4,715 after it are still to go.
  ASSERT_TRUE(outbox->Ack(std::vector<std::string>(expected.begin(), expected.begin() + hit)).ok());
  EXPECT_EQ(outbox->depth(), static_cast<size_t>(kRecords - 1) - hit);
  EXPECT_EQ(SegmentFiles(dir_), std::vector<std::string>{name});
  ASSERT_TRUE(outbox->Ack(std::vector<std::string>(expected.begin() + hit, expected.end() - 1)).ok());
  EXPECT_EQ(SegmentFiles(dir_), std::vector<std::string>{name});
  outbox.reset();  // a restart in between forgets nothing
  outbox = Open();
  EXPECT_EQ(outbox->depth(), 1u);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(expected.back()));
  ASSERT_TRUE(outbox->Ack({expected.back()}).ok());
  EXPECT_TRUE(SegmentFiles(dir_).empty());
}

TEST_F(OutboxTest, DamageThatNoGoodRecordFollowsIsATornTail) {
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 3; ++i) records.push_back(MakeRecord());
  {
    auto outbox = Open();
    ASSERT_TRUE(outbox->AppendBatch(records).ok());
  }
  const std::string segment = dir_ + "/" + SegmentFiles(dir_).at(0);
  std::string content = ReadAll(segment);
  const size_t frame_size = (content.size() - kSegmentMagic.size()) / 3;
  content[content.size() - 3] ^= 0x55;  // the last payload
  WriteAll(segment, content);

  auto outbox = Open();
  EXPECT_EQ(outbox->recovery().damaged_ranges, 0u);
  EXPECT_EQ(outbox->recovery().torn_bytes, frame_size);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(records[0].run_id(), records[1].run_id()));
}

TEST_F(OutboxTest, SegmentsOfTheEarlierFormatAreStillSent) {
  // What an agent before CRC-32C frames left behind: BFOUTBX1, [length][CRC-32][payload].
  std::vector<v1::RunRecord> old(3);
  for (auto& r : old) r = MakeRecord();
  std::filesystem::create_directories(dir_);
  std::string content(kSegmentMagicV1);
  for (const auto& r : old) AppendFrameV1(r.SerializeAsString(), &content);
  const std::string name = "segment-00000000000000000007.log";
  WriteAll(dir_ + "/" + name, content);

  auto outbox = Open();
  EXPECT_EQ(outbox->recovery().records, 3u);
  EXPECT_TRUE(warnings_.empty());
  const auto fresh = MakeRecord();
  ASSERT_TRUE(outbox->Append(fresh).ok());
  EXPECT_EQ(SegmentFiles(dir_), (std::vector<std::string>{name, "segment-00000000000000000008.log"}));
  EXPECT_EQ(ReadAll(dir_ + "/segment-00000000000000000008.log").substr(0, 8), "BFOUTBX2");
  EXPECT_THAT(RunIds(outbox->Pending(10)),
              ElementsAre(old[0].run_id(), old[1].run_id(), old[2].run_id(), fresh.run_id()));
  ASSERT_TRUE(outbox->Ack({old[0].run_id(), old[1].run_id(), old[2].run_id()}).ok());
  EXPECT_EQ(SegmentFiles(dir_), std::vector<std::string>{"segment-00000000000000000008.log"});
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
  env_.Inject(FaultOp::kTruncate, Fault{.path_contains = "segment-", .status = absl::InternalError("ftruncate: EIO")});
  env_.Inject(FaultOp::kAtomicWrite, Fault{.path_contains = "segment-"});
  EXPECT_EQ(outbox->Append(MakeRecord()).code(), absl::StatusCode::kResourceExhausted);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0], "could not cut a failed append off segment 1: ftruncate: EIO; No space left on device (injected)");
  env_.Clear();
  outbox.reset();

  outbox = Open();
  EXPECT_EQ(outbox->recovery().torn_bytes, 7u);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(a.run_id()));
}

// A full disk: the append stops after the first of two frames, and no new file can be written
// either (the rewrite that once cut the failed append off, and left its empty .tmp behind). The
// batch was reported as not queued, so none of it may come back after a restart.
TEST_F(OutboxTest, DiskFullMidBatchQueuesExactlyWhatItReports) {
  auto outbox = Open();
  const auto a = MakeRecord(), b = MakeRecord(), c = MakeRecord();
  ASSERT_TRUE(outbox->Append(a).ok());
  std::string one_frame;
  AppendFrame(b.SerializeAsString(), &one_frame);
  env_.Inject(FaultOp::kAppend, Fault{.path_contains = "segment-", .partial_bytes = one_frame.size() + 5, .times = 1});
  env_.Inject(FaultOp::kAtomicWrite, Fault{.path_contains = ""});
  const absl::Status s = outbox->AppendBatch(std::vector<v1::RunRecord>{b, c});
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "outbox " + dir_ + ": 2 record(s) not queued: No space left on device (injected)");
  EXPECT_EQ(outbox->depth(), 1u);
  EXPECT_TRUE(warnings_.empty());
  env_.Clear();
  outbox.reset();

  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_FALSE(entry.path().string().ends_with(".tmp")) << entry.path();
  }
  outbox = Open();
  EXPECT_EQ(outbox->recovery().torn_bytes, 0u);
  EXPECT_EQ(outbox->recovery().records, 1u);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(a.run_id()));
}

// The same with the kernel's own short write: RLIMIT_FSIZE makes write() stop at a size, as a
// full disk does (EFBIG instead of ENOSPC), on the real file.
TEST_F(OutboxTest, RealShortWriteIsCutOffTheFile) {
  auto outbox = Open();
  const auto a = MakeRecord(), b = MakeRecord(), c = MakeRecord();
  ASSERT_TRUE(outbox->Append(a).ok());
  const std::string segment = dir_ + "/" + SegmentFiles(dir_).at(0);
  const size_t before = ReadAll(segment).size();
  std::string one_frame;
  AppendFrame(b.SerializeAsString(), &one_frame);

  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = old_limit;
  limit.rlim_cur = before + one_frame.size() + 5;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const absl::Status s = outbox->AppendBatch(std::vector<v1::RunRecord>{b, c});
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), absl::StrCat("outbox ", dir_, ": 2 record(s) not queued: write ", segment, ": File too large"));
  EXPECT_EQ(ReadAll(segment).size(), before);
  EXPECT_EQ(outbox->depth(), 1u);
  ASSERT_TRUE(outbox->Append(c).ok());  // in a new segment
  outbox.reset();
  outbox = Open();
  EXPECT_EQ(outbox->recovery().torn_bytes, 0u);
  EXPECT_THAT(RunIds(outbox->Pending(10)), ElementsAre(a.run_id(), c.run_id()));
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
  // Only ids of the segment still on disk are kept (about 24 records of ~85 bytes fill one): far
  // less than 100 lines of 37 bytes.
  EXPECT_LT(ReadAll(dir_ + "/acks.log").size(), 1200u);
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
            absl::StrCat("outbox ", dir_, " is in use by another benchfleet-agent (", dir_, "/LOCK is held by pid ", getpid(),
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
