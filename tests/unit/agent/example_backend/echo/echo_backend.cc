#include "tests/unit/agent/example_backend/echo/echo_backend.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/backends/section.h"
#include "common/proto_time.h"
#include "tests/unit/agent/example_backend/echo/figures.h"

namespace benchfleet::agent {
namespace {

constexpr SectionReader kSection{"echo"};
constexpr const char* kKeys[] = {"repeat", "text"};

class EchoSession : public BackendSession {
 public:
  EchoSession(Env* env, std::string text, int64_t repeat) : env_(env), text_(std::move(text)), repeat_(repeat) {
    info_.backend_version = "example-1";
    info_.simulated = true;  // it measures a memory copy, not inference
    info_.params = {{"repeat", absl::StrCat(repeat_)}};
  }

  const SessionInfo& info() const override { return info_; }

  void Run(const RunInput&, v1::RunRecord* record) override {
    Clock& clock = env_->clock();
    const absl::Time start = clock.Now();
    const absl::Duration begin = clock.Monotonic();
    std::string out;
    for (int64_t i = 0; i < repeat_; ++i) out += text_;
    const absl::Duration wall = clock.Monotonic() - begin;
    SetTimestamp(start, record->mutable_start_time());
    SetTimestamp(clock.Now(), record->mutable_end_time());
    SetDuration(wall, record->mutable_wall_duration());
    const double seconds = std::max(absl::ToDoubleSeconds(wall), 1e-9);
    v1::Metric* rate = record->add_metrics();
    rate->set_name("echo_bytes_per_second");
    rate->set_value(static_cast<double>(out.size()) / seconds);
    v1::Metric* bytes = record->add_metrics();
    bytes->set_name("echo_bytes");
    bytes->set_value(static_cast<double>(out.size()));
    record->mutable_status()->set_code(v1::RunStatus::CODE_OK);
  }

  bool alive() const override { return true; }
  absl::Status Close() override { return absl::OkStatus(); }

 private:
  Env* env_;
  std::string text_;
  int64_t repeat_;
  SessionInfo info_;
};

class EchoBackend : public Backend {
 public:
  EchoBackend(Env* env, std::string text, int64_t repeat) : env_(env), text_(std::move(text)), repeat_(repeat) {}

  std::string name() const override { return "echo"; }
  FigureDeclarations figures() const override { return echo::kFigures; }
  std::vector<std::string> matrix_axes() const override { return {"repeat"}; }
  std::vector<std::string> default_axis_values(const std::string& axis) const override {
    if (axis == "repeat") return {absl::StrCat(repeat_)};
    return {};
  }

  absl::Status CheckCombination(const Combination& combination) const override {
    int64_t repeat = 0;
    if (auto it = combination.find("repeat"); it != combination.end() && !RepeatOf(it->second, &repeat)) {
      return absl::InvalidArgumentError(
          absl::StrCat("matrix axis repeat: ", it->second, " is not an integer from 1 to 1000000"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<BackendSession>> Open(const Combination& combination, std::string*) override {
    int64_t repeat = repeat_;
    if (auto it = combination.find("repeat"); it != combination.end() && !RepeatOf(it->second, &repeat)) {
      return absl::InvalidArgumentError(absl::StrCat("matrix axis repeat: ", it->second));
    }
    return std::make_unique<EchoSession>(env_, text_, repeat);
  }

 private:
  static bool RepeatOf(const std::string& text, int64_t* repeat) {
    return absl::SimpleAtoi(text, repeat) && *repeat >= 1 && *repeat <= 1000000;
  }

  Env* env_;
  std::string text_;
  int64_t repeat_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> NewEchoBackend(const YAML::Node& section, const BackendContext& context) {
  if (absl::Status s = kSection.CheckKeys(section, kKeys); !s.ok()) return s;
  if (!section["text"]) return kSection.ErrorAt(section, absl::StrCat("echo needs ", kSection.Key("text")));
  absl::StatusOr<std::string> text = kSection.NonEmptyString(section["text"], "text");
  if (!text.ok()) return text.status();
  int64_t repeat = 1000;
  if (const YAML::Node node = section["repeat"]) {
    absl::StatusOr<int64_t> value = kSection.Integer(node, "repeat", 1, 1000000);
    if (!value.ok()) return value.status();
    repeat = *value;
  }
  return std::make_unique<EchoBackend>(context.env, *text, repeat);
}

}  // namespace benchfleet::agent
