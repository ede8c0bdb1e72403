// OUTPUT_MISMATCH within a series (agent/runner/output_check.h): simulated records with known
// output hashes, fed in run order as the series runner does.
#include "agent/runner/output_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

// Hashes as a backend records them (64 hex digits); only their first 12 appear in reasons.
const std::string kA = std::string("a1b2c3d4e5f6") + std::string(52, 'a');
const std::string kB = std::string("9f8e7d6c5b4a") + std::string(52, 'b');
const std::string kC = std::string("c0ffee000000") + std::string(52, 'c');
const std::string kInputs = std::string("0123456789ab") + std::string(52, '0');
const std::string kOtherInputs = std::string("fedcba987654") + std::string(52, '1');

struct Run {
  v1::Phase phase = v1::PHASE_WARM;
  uint32_t call = 1;
  std::vector<std::string> hashes = {};
  std::string inputs = kInputs;
  std::string mode = "gpu";
  std::string kind = "text";
  std::string flag;  // a flag the backend raised
  bool failed = false;
  uint32_t repetition = 1;
};

v1::RunRecord Record(const Run& run) {
  v1::RunRecord record;
  record.set_run_id(
      absl::StrCat("run-", run.mode, "-", static_cast<int>(run.phase), "-", run.call, "-", run.repetition));
  record.set_mode(run.mode);
  (*record.mutable_matrix())["mode"] = run.mode;
  record.set_phase(run.phase);
  record.set_call_index(run.call);
  record.set_repetition(run.repetition);
  if (!run.inputs.empty()) (*record.mutable_params())["inputs_sha256"] = run.inputs;
  (*record.mutable_params())["seed"] = "42";
  for (size_t i = 0; i < run.hashes.size(); ++i) {
    v1::Output* output = record.add_outputs();
    output->set_kind(run.kind);
    output->set_name(run.kind == "text" ? "content" : absl::StrCat("ComfyUI_0000", i + 1, "_.png"));
    output->set_sha256(run.hashes[i]);
  }
  if (!run.flag.empty()) record.add_flags()->set_code(run.flag);
  record.mutable_status()->set_code(run.failed ? v1::RunStatus::CODE_FAILED : v1::RunStatus::CODE_OK);
  return record;
}

std::vector<std::string> Codes(const v1::RunRecord& record) {
  std::vector<std::string> codes;
  for (const v1::Flag& flag : record.flags()) codes.push_back(flag.code());
  return codes;
}

TEST(OutputCheckTest, TheFirstOutputOfAnInputIsTheReferenceAndADifferentHashIsFlagged) {
  OutputCheck check{OutputsSpec{}};
  v1::RunRecord cold = Record({.phase = v1::PHASE_COLD, .call = 1, .hashes = {kA}});
  v1::RunRecord warm1 = Record({.call = 1, .hashes = {kA}});
  v1::RunRecord warm2 = Record({.call = 2, .hashes = {kB}});
  v1::RunRecord warm3 = Record({.call = 3, .hashes = {kA}});
  EXPECT_EQ(check.Observe(&cold), std::nullopt);
  EXPECT_EQ(check.Observe(&warm1), std::nullopt);
  const std::string reason =
      "output 1 of 1 (text content): sha256 9f8e7d6c5b4a, expected a1b2c3d4e5f6 as run run-gpu-2-1-1 (cold 1) "
      "gave for the same inputs (inputs_sha256 0123456789ab)";
  EXPECT_THAT(check.Observe(&warm2), Optional(reason));
  ASSERT_EQ(warm2.flags_size(), 1);
  EXPECT_EQ(warm2.flags(0).code(), "OUTPUT_MISMATCH");
  EXPECT_EQ(warm2.flags(0).reason(), reason);
  // The reference stays the first output: the run after the odd one matches it again.
  EXPECT_EQ(check.Observe(&warm3), std::nullopt);
  EXPECT_THAT(Codes(cold), IsEmpty());
  EXPECT_THAT(Codes(warm1), IsEmpty());
  EXPECT_THAT(Codes(warm3), IsEmpty());
  // Without an outputs: section the records say nothing of it (the default holds).
  EXPECT_FALSE(warm2.params().contains("outputs_deterministic"));
}

TEST(OutputCheckTest, OtherInputsModesAndCombinationsAreComparedApart) {
  OutputCheck check{OutputsSpec{}};
  v1::RunRecord gpu = Record({.call = 1, .hashes = {kA}});
  v1::RunRecord cpu = Record({.call = 1, .hashes = {kB}, .mode = "cpu"});
  v1::RunRecord other = Record({.call = 2, .hashes = {kC}, .inputs = kOtherInputs});
  v1::RunRecord n_predict = Record({.call = 3, .hashes = {kC}});
  (*n_predict.mutable_matrix())["n_predict"] = "64";
  for (v1::RunRecord* r : {&gpu, &cpu, &other, &n_predict}) EXPECT_EQ(check.Observe(r), std::nullopt);
  for (v1::RunRecord* r : {&gpu, &cpu, &other, &n_predict}) EXPECT_THAT(Codes(*r), IsEmpty());
  // Each became the reference of its own inputs.
  v1::RunRecord cpu2 = Record({.call = 2, .hashes = {kA}, .mode = "cpu"});
  EXPECT_THAT(check.Observe(&cpu2),
              Optional(std::string("output 1 of 1 (text content): sha256 a1b2c3d4e5f6, expected 9f8e7d6c5b4a as run "
                                   "run-cpu-3-1-1 (warm 1) gave for the same inputs (inputs_sha256 0123456789ab)")));
}

// A CACHE_HIT run computed nothing: its output says nothing of the inputs' determinism, so it is
// neither compared nor made the reference (nor is any other run kept out of aggregates).
TEST(OutputCheckTest, ACacheHitIsNeitherComparedNorTheReference) {
  OutputCheck check{OutputsSpec{}};
  v1::RunRecord hit = Record({.call = 1, .hashes = {kC}, .kind = "image", .flag = "CACHE_HIT"});
  v1::RunRecord first = Record({.call = 2, .hashes = {kA}, .kind = "image"});
  v1::RunRecord hit2 = Record({.call = 3, .hashes = {kB}, .kind = "image", .flag = "CACHE_HIT"});
  v1::RunRecord contended = Record({.call = 4, .hashes = {kB}, .kind = "image", .flag = "CONTENDED"});
  v1::RunRecord later = Record({.call = 5, .hashes = {kB}, .kind = "image"});
  for (v1::RunRecord* r : {&hit, &first, &hit2, &contended}) EXPECT_EQ(check.Observe(r), std::nullopt);
  EXPECT_THAT(Codes(hit), ElementsAre("CACHE_HIT"));
  EXPECT_THAT(Codes(hit2), ElementsAre("CACHE_HIT"));
  EXPECT_THAT(Codes(contended), ElementsAre("CONTENDED"));
  EXPECT_THAT(check.Observe(&later),
              Optional(std::string("output 1 of 1 (image ComfyUI_00001_.png): sha256 9f8e7d6c5b4a, expected "
                                   "a1b2c3d4e5f6 as run run-gpu-3-2-1 (warm 2) gave for the same inputs "
                                   "(inputs_sha256 0123456789ab)")));
}

// A backend that records no output, no inputs_sha256 (temperature above 0), or a failed run: no
// flag, and no reference either.
TEST(OutputCheckTest, NoOutputNoInputsOrAFailedRunIsNeverFlagged) {
  OutputCheck check{OutputsSpec{}};
  v1::RunRecord no_output = Record({.call = 1, .hashes = {}});
  v1::RunRecord no_inputs1 = Record({.call = 2, .hashes = {kA}, .inputs = ""});
  v1::RunRecord no_inputs2 = Record({.call = 3, .hashes = {kB}, .inputs = ""});
  v1::RunRecord failed = Record({.call = 4, .hashes = {kC}, .failed = true});
  v1::RunRecord reference = Record({.call = 5, .hashes = {kA}});
  v1::RunRecord same = Record({.call = 6, .hashes = {kA}});
  for (v1::RunRecord* r : {&no_output, &no_inputs1, &no_inputs2, &failed, &reference, &same}) {
    EXPECT_EQ(check.Observe(r), std::nullopt);
    EXPECT_THAT(Codes(*r), IsEmpty());
  }
}

TEST(OutputCheckTest, DeterministicFalseFlagsNothingAndEveryRecordSaysSo) {
  OutputCheck check{OutputsSpec{.deterministic = OutputDeterminism::kNone, .given = true}};
  v1::RunRecord a = Record({.call = 1, .hashes = {kA}});
  v1::RunRecord b = Record({.call = 2, .hashes = {kB}});
  EXPECT_EQ(check.Observe(&a), std::nullopt);
  EXPECT_EQ(check.Observe(&b), std::nullopt);
  EXPECT_THAT(Codes(b), IsEmpty());
  EXPECT_EQ(a.params().at("outputs_deterministic"), "false");
  EXPECT_EQ(b.params().at("outputs_deterministic"), "false");
}

// per_machine still expects every run of this machine to agree.
TEST(OutputCheckTest, PerMachineIsCheckedWithinTheSeries) {
  OutputCheck check{OutputsSpec{.deterministic = OutputDeterminism::kPerMachine, .given = true}};
  v1::RunRecord a = Record({.call = 1, .hashes = {kA}});
  v1::RunRecord b = Record({.call = 2, .hashes = {kB}});
  EXPECT_EQ(check.Observe(&a), std::nullopt);
  EXPECT_TRUE(check.Observe(&b).has_value());
  EXPECT_THAT(Codes(b), ElementsAre("OUTPUT_MISMATCH"));
  EXPECT_EQ(b.params().at("outputs_deterministic"), "per_machine");
  OutputCheck everywhere{OutputsSpec{.given = true}};
  v1::RunRecord c = Record({.call = 3, .hashes = {kA}});
  EXPECT_EQ(everywhere.Observe(&c), std::nullopt);
  EXPECT_EQ(c.params().at("outputs_deterministic"), "true");
}

// Several images (a ComfyUI batch): compared in order, by content, not by their numbered names.
TEST(OutputCheckTest, SeveralOutputsNameTheFirstThatDiffersAndCountTheRest) {
  OutputCheck check{OutputsSpec{}};
  v1::RunRecord validation =
      Record({.phase = v1::PHASE_VALIDATION, .call = 1, .hashes = {kA, kB, kC}, .kind = "image"});
  v1::RunRecord same = Record({.call = 1, .hashes = {kA, kB, kC}, .kind = "image"});
  same.mutable_outputs(0)->set_name("ComfyUI_00004_.png");
  v1::RunRecord two = Record({.call = 2, .hashes = {kA, kC, kB}, .kind = "image"});
  v1::RunRecord fewer = Record({.call = 3, .hashes = {kA}, .kind = "image", .repetition = 2});
  EXPECT_EQ(check.Observe(&validation), std::nullopt);
  EXPECT_EQ(check.Observe(&same), std::nullopt);
  EXPECT_THAT(check.Observe(&two),
              Optional(std::string("output 2 of 3 (image ComfyUI_00002_.png): sha256 c0ffee000000, expected "
                                   "9f8e7d6c5b4a (1 more output(s) differ) as run run-gpu-1-1-1 (validation 1) gave "
                                   "for the same inputs (inputs_sha256 0123456789ab)")));
  EXPECT_THAT(check.Observe(&fewer),
              Optional(std::string("1 output, expected 3 as run run-gpu-1-1-1 (validation 1) gave for the same "
                                   "inputs (inputs_sha256 0123456789ab)")));
}

TEST(OutputCheckTest, AReferenceOfALaterRepetitionSaysWhichOne) {
  OutputCheck check{OutputsSpec{}};
  v1::RunRecord first = Record({.call = 1, .hashes = {kA}, .inputs = kOtherInputs, .repetition = 2});
  v1::RunRecord second = Record({.call = 2, .hashes = {kB}, .inputs = kOtherInputs, .repetition = 2});
  EXPECT_EQ(check.Observe(&first), std::nullopt);
  EXPECT_THAT(check.Observe(&second),
              Optional(std::string("output 1 of 1 (text content): sha256 9f8e7d6c5b4a, expected a1b2c3d4e5f6 as run "
                                   "run-gpu-3-1-2 (warm 1, repetition 2) gave for the same inputs (inputs_sha256 "
                                   "fedcba987654)")));
}

}  // namespace
}  // namespace benchfleet::agent
