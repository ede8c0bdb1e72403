// AllowList: what this agent lets a coordinator make it do (backends, executables, model files,
// URLs), from allow: in agent.yaml. Everything not listed is refused with PERMISSION_DENIED and a
// reason that names the setting to change. Checks are lexical (no file system access, no symlink
// resolution): the operator lists the exact paths they trust. Immutable; thread-safe.
#ifndef BENCHFLEET_AGENT_CONFIG_ALLOW_LIST_H_
#define BENCHFLEET_AGENT_CONFIG_ALLOW_LIST_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/config/agent_config.h"

namespace benchfleet::agent {

class AllowList {
 public:
  // config_path names the file in refusals; empty when the agent has none.
  AllowList(AllowConfig allow, std::string config_path);
  explicit AllowList(const AgentConfig& config) : AllowList(config.allow, config.source) {}

  // OK when backend is listed in allow.backends.
  absl::Status CheckBackend(std::string_view backend) const;

  // OK when path, made canonical lexically ("a//b/./c" -> "a/b/c", ".." folded), is listed in
  // allow.executables.
  absl::Status CheckExecutable(std::string_view path) const;

  // OK when path lies inside (or is) one of allow.model_dirs, after the same canonical form, so
  // "/models/../etc/shadow" is refused.
  absl::Status CheckModelPath(std::string_view path) const;

  // OK when path lies inside (or is) one of allow.workflow_dirs, canonical as for model paths:
  // a file a backend reads and sends on or hands to a command (the openai and workflow backends'
  // prompts, the ComfyUI graph of a coordinator's task; BackendContext::spec_author).
  absl::Status CheckInputFile(std::string_view path) const;

  // OK when url has the scheme, host and port of an entry of allow.urls and its path lies under
  // the entry's path ("http://h:1/api" allows "http://h:1/api/x", not "http://h:1/apix").
  absl::Status CheckUrl(std::string_view url) const;

  // Returns the command template called name in allow.commands (the spec names a command, it
  // never supplies one).
  absl::StatusOr<CommandTemplate> FindCommand(std::string_view name) const;

  // Returns a refusal of the checks above with what the setting it names does allow appended
  // ("...; allow.backends lists: llama-server"), so whoever reads it (a coordinator showing a
  // refused task) sees what would have passed. Any other status comes back unchanged.
  absl::Status WithAllowed(const absl::Status& refusal) const;

 private:
  absl::Status Deny(std::string_view what, std::string_view setting) const;

  AllowConfig allow_;
  std::string config_path_;
};

// Returns the lexically canonical form of an absolute path; empty when path is not absolute.
std::string CanonicalPath(std::string_view path);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_CONFIG_ALLOW_LIST_H_
