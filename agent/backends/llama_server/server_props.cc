#include "agent/backends/llama_server/server_props.h"

#include <nlohmann/json.hpp>

namespace benchfleet::agent::llama_server {
namespace {

std::optional<int64_t> IntAt(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

}  // namespace

absl::StatusOr<ServerProps> ParseServerProps(std::string_view body) {
  const nlohmann::json json = nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return absl::InvalidArgumentError("the /props answer is not a JSON object");
  ServerProps props;
  auto build = json.find("build_info");
  if (build == json.end() || !build->is_string()) {
    return absl::FailedPreconditionError("the /props answer has no build_info");
  }
  props.build_info = build->get<std::string>();
  if (auto it = json.find("model_path"); it != json.end() && it->is_string()) props.model_path = it->get<std::string>();
  props.total_slots = IntAt(json, "total_slots");
  if (auto settings = json.find("default_generation_settings"); settings != json.end() && settings->is_object()) {
    props.n_ctx = IntAt(*settings, "n_ctx");
  }
  return props;
}

}  // namespace benchfleet::agent::llama_server
